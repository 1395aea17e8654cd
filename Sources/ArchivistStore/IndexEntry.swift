/// What the index knows of one live document.
public struct IndexEntry: Sendable, Equatable {
    /// The document's ID.
    public var id: String
    /// FNV-1a 64 of the document file's bytes.
    public var hash: UInt64
    /// Size of the document file in bytes.
    public var size: Int
    /// When the document was first stored.
    public var storedAt: Timestamp
    /// When the document's content last changed.
    public var updatedAt: Timestamp
    /// The projected fields as the compact JSON object of the index line (`{"headline.main":...}`).
    ///
    /// Kept as bytes: one allocation per document instead of a tree of values, which keeps the
    /// open of a large folder fast and small. `fields` decodes it.
    public var fieldsJSON: [UInt8]

    /// Creates an entry.
    public init(id: String, hash: UInt64, size: Int, storedAt: Timestamp, updatedAt: Timestamp, fieldsJSON: [UInt8]) {
        self.id = id
        self.hash = hash
        self.size = size
        self.storedAt = storedAt
        self.updatedAt = updatedAt
        self.fieldsJSON = fieldsJSON
    }

    /// The projected fields as an object keyed by dotted path.
    public var fields: JSONValue {
        (try? JSONParser.parse(fieldsJSON)) ?? .object([])
    }

    /// The document file, relative to the data folder.
    public var file: String { FileNames.documentPath(for: id) }

    /// The entry as an index line (without the newline), keys in sorted order.
    func line() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fieldsJSON.count + id.utf8.count * 2 + 160)
        out.append(contentsOf: #"{"fields":"#.utf8)
        out.append(contentsOf: fieldsJSON)
        out.append(contentsOf: #","file":"#.utf8)
        JSONWriter.writeString(file, into: &out)
        out.append(contentsOf: #","hash":""#.utf8)
        out.append(contentsOf: FNV1a64.hex(hash).utf8)
        out.append(contentsOf: #"","id":"#.utf8)
        JSONWriter.writeString(id, into: &out)
        out.append(contentsOf: #","size":"#.utf8)
        out.append(contentsOf: String(size).utf8)
        out.append(contentsOf: #","stored_at":""#.utf8)
        out.append(contentsOf: storedAt.description.utf8)
        out.append(contentsOf: #"","updated_at":""#.utf8)
        out.append(contentsOf: updatedAt.description.utf8)
        out.append(contentsOf: #""}"#.utf8)
        return out
    }

    /// A removal line.
    static func removalLine(id: String, at time: Timestamp) -> [UInt8] {
        JSONWriter.compactBytes(.object([
            JSONMember(key: "id", value: .string(id)),
            JSONMember(key: "removed_at", value: .string(time.description)),
        ]))
    }

    /// One decoded index line: an entry, or the removal of an ID.
    enum Line: Sendable {
        case entry(IndexEntry)
        case removal(String)
    }

    /// Decodes one index line without building a tree for its fields (they are only checked for
    /// syntax and kept as bytes). Throws on invalid JSON; nil when the JSON is not an index line.
    static func decode(_ line: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> Line? {
        var reader = JSONParser.Reader(line)
        reader.skipWhitespace()
        guard reader.index < line.count, line[reader.index] == UInt8(ascii: "{") else {
            _ = try reader.parseDocument()
            return nil
        }
        reader.index += 1
        var id: String?
        var hash: UInt64?
        var size: Int?
        var storedAt: Timestamp?
        var updatedAt: Timestamp?
        var fields: Range<Int>?
        var removed = false
        var valid = true
        reader.skipWhitespace()
        if reader.index < line.count, line[reader.index] == UInt8(ascii: "}") {
            reader.index += 1
        } else {
            while true {
                reader.skipWhitespace()
                guard reader.index < line.count, line[reader.index] == UInt8(ascii: "\"") else { throw reader.fail("expected a string key") }
                let key = try reader.parseString()
                reader.skipWhitespace()
                guard reader.index < line.count, line[reader.index] == UInt8(ascii: ":") else { throw reader.fail("expected ':'") }
                reader.index += 1
                reader.skipWhitespace()
                let start = reader.index
                switch key {
                case "fields":
                    try reader.skipValue()
                    if line[start] == UInt8(ascii: "{") { fields = start..<reader.index } else { valid = false }
                case "id", "hash", "stored_at", "updated_at":
                    guard case .string(let text) = try reader.parseValue() else { valid = false; break }
                    switch key {
                    case "id": id = text
                    case "hash": hash = UInt64(text, radix: 16)
                    case "stored_at": storedAt = Timestamp(parsing: text)
                    default: updatedAt = Timestamp(parsing: text)
                    }
                case "size":
                    if case .number(let text) = try reader.parseValue() { size = Int(text) } else { valid = false }
                case "removed_at":
                    try reader.skipValue()
                    removed = true
                default:
                    try reader.skipValue()
                }
                reader.skipWhitespace()
                guard reader.index < line.count else { throw reader.fail("unexpected end of input") }
                if line[reader.index] == UInt8(ascii: ",") { reader.index += 1; continue }
                if line[reader.index] == UInt8(ascii: "}") { reader.index += 1; break }
                throw reader.fail("expected ',' or '}'")
            }
        }
        reader.skipWhitespace()
        if reader.index < line.count { throw reader.fail("unexpected data after the value") }
        guard valid, let id, !id.isEmpty else { return nil }
        if removed { return .removal(id) }
        guard let hash, let size, let storedAt, let updatedAt else { return nil }
        let fieldsJSON = fields.map { Array(UnsafeBufferPointer(rebasing: line[$0])) } ?? Array("{}".utf8)
        return .entry(IndexEntry(id: id, hash: hash, size: size, storedAt: storedAt, updatedAt: updatedAt, fieldsJSON: fieldsJSON))
    }
}
