import ArchivistBase
import ArchivistStore

/// A typed column of the copy: a projected field whose values have one obvious SQL type, kept
/// beside the document so that SQL can filter, sort and index it without `jsonb` paths.
public struct ReplicaColumn: Sendable, Equatable {
    /// The SQL type of a typed column.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// ISO 8601 dates and times, parsed by Archivist (`pub_date`).
        case timestamp = "timestamptz"
        /// Whole numbers.
        case integer = "bigint"
        /// Other numbers.
        case number = "double precision"
        /// Strings.
        case text = "text"
        /// Arrays of strings (`keywords.value`).
        case textArray = "text[]"
        /// true and false.
        case boolean = "boolean"
    }

    /// The projected field's dotted path (`headline.main`).
    public var path: String
    /// The column's name (`headline_main`).
    public var name: String
    /// Its type.
    public var kind: Kind

    /// Creates a column.
    public init(path: String, name: String, kind: Kind) {
        self.path = path
        self.name = name
        self.kind = kind
    }

    /// The names the table's own columns take; a field whose name would be one of them gets an
    /// `f_` prefix.
    public static let reserved: Set<String> = ["id", "seq", "doc", "stored_at", "updated_at", "terms"]

    /// The column name of a path: lower case, every run of other characters than letters and
    /// digits as one `_` (`headline.main` → `headline_main`), at most 63 bytes.
    public static func name(for path: String) -> String {
        var name = ""
        var gap = false
        for scalar in path.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                if gap, !name.isEmpty { name.append("_") }
                gap = false
                name.unicodeScalars.append(contentsOf: String(scalar).lowercased().unicodeScalars)
            } else {
                gap = true
            }
        }
        if name.isEmpty || name.first!.isNumber { name = "f_" + name }
        if reserved.contains(name) { name = "f_" + name }
        return String(name.prefix(63))
    }

    /// The value of this column for a projected value (nil when the document has none, or one
    /// of another type: the document keeps it).
    public func value(of projected: JSONValue?) -> CopyValue {
        guard let projected else { return .null }
        switch (kind, projected) {
        case (.timestamp, .string(let text)):
            guard let milliseconds = ISODate.instant(of: text) else { return .null }
            return .text(Timestamp(milliseconds: milliseconds).description)
        case (.integer, .number(let text)), (.integer, .string(let text)):
            guard let number = Int64(text) ?? Double(text).flatMap({ $0 == $0.rounded() && abs($0) < 9e18 ? Int64($0) : nil }) else {
                return .null
            }
            return .text(String(number))
        case (.number, .number(let text)):
            guard let number = Double(text), number.isFinite else { return .null }
            return .text(text)
        case (.text, .string(let text)):
            return .text(text)
        case (.boolean, .bool(let flag)):
            return .text(flag ? "t" : "f")
        case (.textArray, .array(let elements)):
            var strings: [String] = []
            for element in elements {
                guard case .string(let text) = element else { return .null }
                strings.append(text)
            }
            return .text(ReplicaColumn.arrayLiteral(strings))
        case (.textArray, .string(let text)):
            return .text(ReplicaColumn.arrayLiteral([text]))
        default:
            return .null
        }
    }

    /// A `text[]` literal: `{"a","b"}` with `"` and `\` escaped.
    static func arrayLiteral(_ strings: [String]) -> String {
        var literal = "{"
        for (index, string) in strings.enumerated() {
            if index > 0 { literal += "," }
            literal += "\""
            for character in string {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    /// The kind that every value seen fits, or nil when they disagree (or none was seen).
    static func kind(of values: [JSONValue]) -> Kind? {
        var found: Kind?
        for value in values {
            let kind: Kind
            switch value {
            case .null: continue
            case .bool: kind = .boolean
            case .number(let text): kind = Int64(text) != nil ? .integer : .number
            case .string(let text):
                // Whole numbers written as strings (the NYT's word_count of some years) count as
                // numbers; ISO dates as instants.
                kind = Int64(text) != nil ? .integer : ISODate.instant(of: text) != nil && text.count >= 10 ? .timestamp : .text
            case .array(let elements):
                guard elements.allSatisfy({ if case .string = $0 { return true } else { return false } }) else { return nil }
                kind = .textArray
            case .object: return nil
            }
            switch (found, kind) {
            case (nil, _): found = kind
            case (.integer?, .number): found = .number
            case (.number?, .integer): break
            case (.textArray?, .text), (.text?, .textArray): found = .textArray
            case (.text?, .timestamp), (.timestamp?, .text): found = .text
            case (let old?, let new) where old == new: break
            default: return nil
            }
        }
        return found
    }

    /// Whether an index on the column is worth its cost: dates, numbers, booleans, arrays, and
    /// strings that repeat (a section, a desk, a type), not near-unique or long text (headlines,
    /// URLs, paragraphs: `terms` covers their words, and a B-tree refuses long values).
    public var isIndexed = true

    /// Whether every value the copy's documents have at `path` is in the column: a row whose
    /// column is NULL then has no value there, and a filter on the column needs no `jsonb` path
    /// for it (`SQLFilter`). The load sets it when no document had a value the column could not
    /// hold; a batch that copies one clears it, in the catalog, in the batch's transaction.
    public var holdsEveryValue = false

    /// The typed columns for a projection, from a sample of projected values: each path whose
    /// values agree on a kind; the others stay in the document only.
    public static func columns(for projection: Projection, sample: [[JSONValue?]]) -> [ReplicaColumn] {
        var columns: [ReplicaColumn] = []
        var names: Set<String> = []
        for (position, path) in projection.paths.enumerated() {
            let values = sample.compactMap { $0.count > position ? $0[position] : nil }
            guard let kind = kind(of: values) else { continue }
            var name = name(for: path)
            while names.contains(name) { name += "_" }
            names.insert(name)
            var column = ReplicaColumn(path: path, name: name, kind: kind)
            if kind == .text {
                // A category (a section, a desk, a type: values that repeat), not near-unique
                // text (headlines, URLs, bylines), which `terms` and `doc` serve.
                let strings = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
                let longest = strings.map(\.utf8.count).max() ?? 0
                column.isIndexed = longest <= 200 && Set(strings).count * 5 <= strings.count
            }
            columns.append(column)
        }
        return columns
    }
}

extension ReplicaColumn {
    /// The column as JSON (kept in the checkpoint table, so every run writes the same columns).
    var json: JSONValue {
        .object([
            JSONMember(key: "path", value: .string(path)), JSONMember(key: "name", value: .string(name)),
            JSONMember(key: "type", value: .string(kind.rawValue)), JSONMember(key: "indexed", value: .bool(isIndexed)),
            JSONMember(key: "holds_every_value", value: .bool(holdsEveryValue)),
        ])
    }

    /// Reads `json` back; nil when it is not a column.
    init?(json: JSONValue) {
        guard case .string(let path)? = json["path"], case .string(let name)? = json["name"],
            case .string(let type)? = json["type"], let kind = Kind(rawValue: type)
        else { return nil }
        self.init(path: path, name: name, kind: kind)
        if case .bool(let indexed)? = json["indexed"] { isIndexed = indexed }
        // A copy made before the flag existed may hold anything: its columns are read as partial.
        if case .bool(let every)? = json["holds_every_value"] { holdsEveryValue = every }
    }
}
