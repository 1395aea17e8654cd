import ArchivistBase
import ArchivistStore

/// Compiles Archivist's filters to SQL over the copy's table (`docs/REPLICATION.md`), with the
/// semantics `Filter.matches` gives them in the folder: MongoDB's array rules (a condition holds
/// when it holds for the value at the path or any element of it; arrays on the way are crossed),
/// `null` matching a missing field, no comparison across types, dates as instants.
///
/// A condition on a path with a typed column compiles to that column where the row holds a typed
/// value (B-tree and GIN indexes apply), and to a `jsonb` path over `doc` where it does not (the
/// value was missing, or of another type). Values never enter the SQL text: each is a parameter
/// (`$n` with an explicit type), and a `jsonb` path takes its values from a `vars` parameter.
/// What SQL cannot decide as Archivist does is left to `Filter.matches` (see `SQLPredicate`).
struct SQLFilter {
    /// The typed columns by path.
    let columns: [String: ReplicaColumn]
    /// Whether integer columns are known to hold no value converted from a string (else each
    /// use checks the type of the document's value).
    let integersAreNumbers: Bool
    /// The parameters so far ($1 is the first).
    private(set) var parameters: [String?] = []

    /// A compiler over these columns, its parameters starting at $1.
    init(columns: [ReplicaColumn], integersAreNumbers: Bool = false) {
        var byPath: [String: ReplicaColumn] = [:]
        for column in columns { byPath[column.path] = column }
        self.columns = byPath
        self.integersAreNumbers = integersAreNumbers
    }

    /// A typed parameter: `$n::type`.
    mutating func parameter(_ value: String?, _ type: String) -> String {
        parameters.append(value)
        return "$\(parameters.count)::\(type)"
    }

    /// `sql` with only the parameters it names, renumbered in order (`$3::text` and `$7::jsonb`
    /// become `$1::text` and `$2::jsonb`): the server refuses a parameter a statement does not use
    /// (it cannot tell its type). Every parameter is written `$n::type`, and no value is ever in
    /// the text, so a `$` followed by digits and `::` is always a parameter.
    static func bind(_ sql: String, _ parameters: [String?]) -> (sql: String, parameters: [String?]) {
        var output = ""
        var kept: [String?] = []
        var numbers: [Int: Int] = [:]
        let bytes = Array(sql.utf8)
        var index = 0
        var start = 0
        var pieces: [UInt8] = []
        pieces.reserveCapacity(bytes.count)
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "$") {
                var end = index + 1
                while end < bytes.count, bytes[end] >= 48, bytes[end] <= 57 { end += 1 }
                if end > index + 1, end + 1 < bytes.count, bytes[end] == UInt8(ascii: ":"), bytes[end + 1] == UInt8(ascii: ":"),
                    let number = Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)), number >= 1, number <= parameters.count
                {
                    pieces.append(contentsOf: bytes[start..<index])
                    let renumbered: Int
                    if let known = numbers[number] {
                        renumbered = known
                    } else {
                        kept.append(parameters[number - 1])
                        renumbered = kept.count
                        numbers[number] = renumbered
                    }
                    pieces.append(contentsOf: Array("$\(renumbered)".utf8))
                    index = end
                    start = end
                    continue
                }
            }
            index += 1
        }
        pieces.append(contentsOf: bytes[start..<bytes.count])
        output = String(decoding: pieces, as: UTF8.self)
        return (output, kept)
    }

    /// The prefix of a string ISO-8601 may parse as a date (`Filter` compares such strings as
    /// instants when both sides are dates): a row whose value has it is decided by Archivist.
    static let datePattern = "'^[0-9]{4}-[0-9]{2}-[0-9]{2}'"
    /// A date anywhere in a text (an array's text form).
    static let dateAnywhere = "'[0-9]{4}-[0-9]{2}-[0-9]{2}'"
    /// Text with a character outside ASCII (folding of such text is left to Archivist).
    static let nonASCII = "'[^\\x01-\\x7f]'"

    // MARK: - Filters

    /// The predicate of a whole filter.
    mutating func compile(_ filter: Filter) -> SQLPredicate {
        switch filter {
        case .all: return .always
        case .and(let filters): return .all(filters.map { compile($0) })
        case .or(let filters): return .any(filters.map { compile($0) })
        case .nor(let filters): return SQLPredicate.any(filters.map { compile($0) }).negated
        case .text(let search):
            let terms = TextFolding.tokens(search)
            guard !terms.isEmpty else { return .never }
            return .exact("COALESCE(terms @@ \(parameter(SQLFilter.tsquery(terms), "tsquery")), false)")
        case .field(let path, let conditions):
            return .all(conditions.map { condition(path, $0) })
        }
    }

    /// A `tsquery` of every term (already folded): `'climate' & 'change'`.
    static func tsquery(_ terms: [String]) -> String {
        terms.map { "'" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'" }
            .joined(separator: " & ")
    }

    /// One condition on the values at a path.
    mutating func condition(_ path: String, _ condition: Condition) -> SQLPredicate {
        switch condition {
        case .eq(let value): return membership(path, [value])
        case .ne(let value): return membership(path, [value]).negated
        case .in(let values): return membership(path, values)
        case .nin(let values): return membership(path, values).negated
        case .not(let conditions): return SQLPredicate.all(conditions.map { self.condition(path, $0) }).negated
        case .gt(let value): return comparison(path, ">", value)
        case .gte(let value): return comparison(path, ">=", value)
        case .lt(let value): return comparison(path, "<", value)
        case .lte(let value): return comparison(path, "<=", value)
        case .exists(let flag):
            let exists: SQLPredicate
            if path == "_id" {
                exists = .always
            } else {
                let json = jsonPredicate(path) { "exists(\($0))" }
                exists = SQLFilter.typed(columns, path, json: json, absent: false) { _, _ in .always }
            }
            return flag ? exists : exists.negated
        case .contains(let needle):
            return SQLFilter.typed(columns, path, json: .undecided, absent: condition.holds(for: [])) { column, kind in
                self.contains(column, kind, needle)
            }
        case .size:
            return SQLFilter.typed(columns, path, json: .undecided, absent: condition.holds(for: [])) { _, _ in .never }
        case .regex, .all, .elemMatch:
            return .undecided
        }
    }

    /// `typed(column, kind)` where the row holds a typed value at `path`, `json` elsewhere; `json`
    /// alone when the path has no typed column. `_id` is the `id` column, never NULL. `absent` is
    /// what the condition gives a document with no value at `path`: where the column holds every
    /// value the copy has at its path (`ReplicaColumn.holdsEveryValue`), a NULL there means no
    /// value, and the `jsonb` side is that constant (so that an index alone answers).
    static func typed(
        _ columns: [String: ReplicaColumn], _ path: String, json: SQLPredicate, absent: Bool,
        _ typed: (String, ReplicaColumn.Kind) -> SQLPredicate
    ) -> SQLPredicate {
        if path == "_id" { return typed("id", .text) }
        guard let column = columns[path] else { return json }
        let name = TableName.quote(column.name)
        let other: SQLPredicate = column.holdsEveryValue ? (absent ? .always : .never) : json
        return .split(on: name, typed: typed(name, column.kind), other: other)
    }

    // MARK: - Equality

    /// The values of an `in` list (or the one of `=`) by how SQL can compare them.
    struct Members {
        var strings: [String] = []
        var dates: [(text: String, start: Int64, end: Int64)] = []
        /// Numbers as their literals, and whether each is exactly a double's integer (safe in a
        /// `jsonb` comparison, which compares decimals where Archivist compares doubles).
        var numbers: [String] = []
        var unsafeNumbers = false
        var booleans: [Bool] = []
        var null = false
        /// Arrays and objects (never equal to a typed value).
        var structured = false

        init(_ values: [JSONValue]) {
            for value in values {
                switch value {
                case .null: null = true
                case .bool(let flag): booleans.append(flag)
                case .number(let literal):
                    guard let number = Double(literal), number.isFinite else {
                        unsafeNumbers = true
                        continue
                    }
                    numbers.append(literal)
                    if !(number == number.rounded() && abs(number) < 9_007_199_254_740_992) { unsafeNumbers = true }
                case .string(let text):
                    if let interval = ISODate.interval(of: text) {
                        dates.append((text, interval.start, interval.end))
                    } else {
                        strings.append(text)
                    }
                case .array, .object: structured = true
                }
            }
        }

        /// The doubles of the numbers, as `float8` parses them.
        var doubleLiterals: [String] { numbers }
        /// The numbers as JSON, for a `jsonb` path's variables (exact integers only).
        var safeIntegers: [JSONValue] {
            numbers.compactMap { literal in
                guard let number = Double(literal), number == number.rounded(), abs(number) < 9_007_199_254_740_992 else { return nil }
                return .number(String(Int64(number)))
            }
        }
    }

    /// `=` any of `values`, with MongoDB's null rule.
    mutating func membership(_ path: String, _ values: [JSONValue]) -> SQLPredicate {
        let members = Members(values)
        let json = jsonMembership(path, members)
        return SQLFilter.typed(columns, path, json: json, absent: Condition.in(values).holds(for: [])) { column, kind in
            self.typedMembership(column, kind, members, path: path)
        }
    }

    /// Equality on the typed value of a row (which is never null, never an array or object).
    mutating func typedMembership(_ column: String, _ kind: ReplicaColumn.Kind, _ members: Members, path: String) -> SQLPredicate {
        var parts: [SQLPredicate] = []
        switch kind {
        case .text:
            if !members.strings.isEmpty {
                parts.append(.exact("\(column) = ANY(\(parameter(ReplicaColumn.arrayLiteral(members.strings), "text[]")))"))
            }
            if !members.dates.isEmpty {
                // Bytes equal, or both dates of the same instant: the latter is Archivist's to say.
                let same = "\(column) = ANY(\(parameter(ReplicaColumn.arrayLiteral(members.dates.map(\.text)), "text[]")))"
                parts.append(SQLPredicate(sure: same, possible: "(\(same) OR \(column) ~ \(SQLFilter.datePattern))"))
            }
        case .timestamp:
            for date in members.dates {
                let start = parameter(Timestamp(milliseconds: date.start).description, "timestamptz")
                let end = parameter(Timestamp(milliseconds: date.end).description, "timestamptz")
                parts.append(.exact("(\(column) >= \(start) AND \(column) < \(end))"))
            }
        case .number:
            if !members.numbers.isEmpty {
                parts.append(.exact("\(column) = ANY(\(parameter("{" + members.doubleLiterals.joined(separator: ",") + "}", "float8[]")))"))
            }
        case .integer:
            if !members.numbers.isEmpty {
                let equal = "\(column)::float8 = ANY(\(parameter("{" + members.doubleLiterals.joined(separator: ",") + "}", "float8[]")))"
                parts.append(integerGuarded(equal, column: column, path: path))
            }
            if !members.strings.isEmpty || !members.dates.isEmpty { parts.append(stringValued(column: column, path: path)) }
        case .boolean:
            if !members.booleans.isEmpty {
                parts.append(
                    .exact(
                        "\(column) = ANY(\(parameter("{" + members.booleans.map { $0 ? "t" : "f" }.joined(separator: ",") + "}", "boolean[]")))"
                    ))
            }
        case .textArray:
            if !members.strings.isEmpty {
                parts.append(.exact("\(column) && \(parameter(ReplicaColumn.arrayLiteral(members.strings), "text[]"))"))
            }
            if !members.dates.isEmpty {
                let same = "\(column) && \(parameter(ReplicaColumn.arrayLiteral(members.dates.map(\.text)), "text[]"))"
                parts.append(SQLPredicate(sure: same, possible: "(\(same) OR \(column)::text ~ \(SQLFilter.dateAnywhere))"))
            }
        }
        return .any(parts)
    }

    /// A condition on an integer column that holds only where the document's value is a number
    /// (the column also holds whole numbers written as strings, which `=` tells apart).
    mutating func integerGuarded(_ condition: String, column: String, path: String) -> SQLPredicate {
        if integersAreNumbers { return .exact(condition) }
        let type = "jsonb_typeof(doc #> \(parameter(ReplicaColumn.arrayLiteral(FieldPath.components(path)), "text[]")))"
        return SQLPredicate(
            sure: "(\(condition) AND COALESCE(\(type) = 'number', false))",
            possible: "(\(condition) AND COALESCE(\(type) <> 'string', true))")
    }

    /// Rows of an integer column whose value may be a string (left to Archivist).
    mutating func stringValued(column: String, path: String) -> SQLPredicate {
        if integersAreNumbers { return .never }
        let type = "jsonb_typeof(doc #> \(parameter(ReplicaColumn.arrayLiteral(FieldPath.components(path)), "text[]")))"
        return SQLPredicate(sure: "FALSE", possible: "COALESCE(\(type) <> 'number', true)")
    }

    /// Equality through a `jsonb` path: each value at the path, or each element of an array there.
    mutating func jsonMembership(_ path: String, _ members: Members) -> SQLPredicate {
        var tests: [String] = []
        var variables: [JSONMember] = []
        if !members.strings.isEmpty {
            tests.append("(@.type() == \"string\" && @ == $s[*])")
            variables.append(JSONMember(key: "s", value: .array(members.strings.map { .string($0) })))
        }
        let integers = members.safeIntegers
        if !integers.isEmpty {
            tests.append("(@.type() == \"number\" && @ == $n[*])")
            variables.append(JSONMember(key: "n", value: .array(integers)))
        }
        if !members.booleans.isEmpty {
            tests.append("(@.type() == \"boolean\" && @ == $b[*])")
            variables.append(JSONMember(key: "b", value: .array(members.booleans.map { .bool($0) })))
        }
        if members.null { tests.append("@.type() == \"null\"") }
        var decided: SQLPredicate = .never
        if !tests.isEmpty {
            decided = jsonPredicate(path, variables: variables) { at in
                let found = "exists(\(at) ? (\(tests.joined(separator: " || "))))"
                return members.null ? "(!exists(\(at)) || \(found))" : found
            }
        }
        let undecided = !members.dates.isEmpty || members.unsafeNumbers
        return undecided ? .any([decided, .undecided]) : decided
    }

    // MARK: - Ranges

    /// `op` (`>`, `>=`, `<`, `<=`) against `value`, within its type.
    mutating func comparison(_ path: String, _ op: String, _ value: JSONValue) -> SQLPredicate {
        if value == .null { return op.hasSuffix("=") ? membership(path, [.null]) : .never }
        var json: SQLPredicate = .undecided
        switch value {
        case .string(let text) where ISODate.interval(of: text) == nil:
            json = jsonPredicate(path, variables: [JSONMember(key: "v", value: value)]) { at in
                "exists(\(at) ? (@.type() == \"string\" && @ \(op) $v))"
            }
        case .number(let literal):
            if let number = Double(literal), number == number.rounded(), abs(number) < 9_007_199_254_740_992 {
                json = jsonPredicate(path, variables: [JSONMember(key: "v", value: .number(String(Int64(number))))]) { at in
                    "exists(\(at) ? (@.type() == \"number\" && @ \(op) $v))"
                }
            }
        default: break
        }
        // A missing field is never on either side of a range (null is handled above).
        return SQLFilter.typed(columns, path, json: json, absent: false) { column, kind in
            self.typedComparison(column, kind, op, value, path: path)
        }
    }

    /// A range condition on the typed value of a row.
    mutating func typedComparison(
        _ column: String, _ kind: ReplicaColumn.Kind, _ op: String, _ value: JSONValue, path: String
    ) -> SQLPredicate {
        switch (kind, value) {
        case (.text, .string(let text)):
            let compared = "\(column) COLLATE \"C\" \(op) \(parameter(text, "text"))"
            guard ISODate.interval(of: text) != nil else { return .exact(compared) }
            return SQLPredicate(
                sure: "(\(column) !~ \(SQLFilter.datePattern) AND \(compared))",
                possible: "(\(column) ~ \(SQLFilter.datePattern) OR \(compared))")
        case (.textArray, .string(let text)):
            let compared = "x COLLATE \"C\" \(op) \(parameter(text, "text"))"
            guard ISODate.interval(of: text) != nil else {
                return .exact("EXISTS (SELECT 1 FROM unnest(\(column)) x WHERE \(compared))")
            }
            return SQLPredicate(
                sure: "EXISTS (SELECT 1 FROM unnest(\(column)) x WHERE x !~ \(SQLFilter.datePattern) AND \(compared))",
                possible: "EXISTS (SELECT 1 FROM unnest(\(column)) x WHERE x ~ \(SQLFilter.datePattern) OR \(compared))")
        case (.timestamp, .string(let text)):
            guard let interval = ISODate.interval(of: text) else { return .undecided }
            // Within the query's day (or millisecond) is equal: greater is past its end.
            switch op {
            case ">": return .exact("\(column) >= \(parameter(Timestamp(milliseconds: interval.end).description, "timestamptz"))")
            case ">=": return .exact("\(column) >= \(parameter(Timestamp(milliseconds: interval.start).description, "timestamptz"))")
            case "<": return .exact("\(column) < \(parameter(Timestamp(milliseconds: interval.start).description, "timestamptz"))")
            default: return .exact("\(column) < \(parameter(Timestamp(milliseconds: interval.end).description, "timestamptz"))")
            }
        case (.number, .number(let literal)):
            guard Double(literal) != nil else { return .undecided }
            return .exact("\(column) \(op) \(parameter(literal, "float8"))")
        case (.integer, .number(let literal)):
            guard let number = Double(literal) else { return .undecided }
            // A whole number compares through the B-tree of the column; others as doubles.
            let compared =
                number == number.rounded() && abs(number) < 9_007_199_254_740_992
                ? "\(column) \(op) \(parameter(String(Int64(number)), "bigint"))"
                : "\(column)::float8 \(op) \(parameter(literal, "float8"))"
            return integerGuarded(compared, column: column, path: path)
        case (.integer, .string):
            return stringValued(column: column, path: path)
        case (.boolean, .bool(let flag)):
            return .exact("\(column) \(op) \(parameter(flag ? "t" : "f", "boolean"))")
        default:
            // Across types nothing compares.
            return .never
        }
    }

    // MARK: - Containing text (`~`)

    /// `~`: a string value containing the text, in any case and accents. Decided in SQL for
    /// values in ASCII (where Archivist's folding is lower case, as `ILIKE` compares); values with
    /// other characters are left to Archivist's own folding.
    mutating func contains(_ column: String, _ kind: ReplicaColumn.Kind, _ needle: String) -> SQLPredicate {
        let folded = TextFolding.fold(needle)
        switch kind {
        case .text, .textArray:
            let value = kind == .text ? column : "x"
            let decided: SQLPredicate
            if folded.isEmpty {
                decided = .always
            } else if folded.utf8.allSatisfy({ $0 < 0x80 }) {
                let pattern = "%" + SQLFilter.likeEscaped(folded) + "%"
                let like = "\(value) ILIKE \(parameter(pattern, "text"))"
                decided = SQLPredicate(
                    sure: "(\(value) !~ \(SQLFilter.nonASCII) AND \(like))", possible: "(\(value) ~ \(SQLFilter.nonASCII) OR \(like))")
            } else {
                decided = SQLPredicate(sure: "FALSE", possible: "\(value) ~ \(SQLFilter.nonASCII)")
            }
            guard kind == .textArray else { return decided }
            func any(_ condition: String) -> String {
                condition == "TRUE" || condition == "FALSE"
                    ? condition : "EXISTS (SELECT 1 FROM unnest(\(column)) x WHERE \(condition))"
            }
            return SQLPredicate(sure: any(decided.sure), possible: any(decided.possible))
        case .integer, .timestamp:
            // Whole numbers written as strings are strings to `~`, and a date column keeps the
            // instant, not the text the document wrote: Archivist reads those rows.
            return SQLPredicate(sure: "FALSE", possible: "TRUE")
        default:
            return .never
        }
    }

    /// `text` with LIKE's wildcards and escape taken literally.
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    // MARK: - jsonb paths

    /// A predicate over `doc` as an SQL/JSON path (lax mode, which crosses arrays on the way as
    /// MongoDB does); `body` is handed the path of the field (`lax $."headline"."main"`) and
    /// returns the predicate. Undecided for a path with a numeric or empty key (MongoDB indexes
    /// arrays with those; SQL/JSON paths do not).
    mutating func jsonPredicate(_ path: String, variables: [JSONMember] = [], _ body: (String) -> String) -> SQLPredicate {
        let keys = FieldPath.components(path)
        guard !keys.contains(where: { $0.isEmpty || $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }) else { return .undecided }
        let at = "$" + keys.map { "." + SQLFilter.jsonPathString($0) }.joined()
        let text = "lax " + body(at)
        let path = parameter(text, "jsonpath")
        let vars = parameter(JSONWriter.compactString(.object(sorting: variables)), "jsonb")
        return .exact("COALESCE(jsonb_path_match(doc, \(path), \(vars), true), false)")
    }

    /// A string literal of the SQL/JSON path language.
    static func jsonPathString(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    literal += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    literal.unicodeScalars.append(scalar)
                }
            }
        }
        return literal + "\""
    }
}
