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
    /// Where the projected fields are: the compact JSON object of the index line
    /// (`{"headline.main":...}`), either in the index file or, until it is written there, in memory.
    ///
    /// Only a reference is kept: opening a large folder reads the index once and keeps no copy of
    /// the projection, so `stats`, `get` and `put` stay fast and small. Queries load the fields
    /// when they need them (`DocumentStore.queryIndex(loading:)`).
    public var fields: FieldsReference

    /// Creates an entry.
    public init(id: String, hash: UInt64, size: Int, storedAt: Timestamp, updatedAt: Timestamp, fields: FieldsReference) {
        self.id = id
        self.hash = hash
        self.size = size
        self.storedAt = storedAt
        self.updatedAt = updatedAt
        self.fields = fields
    }

    /// Whether two entries describe the same document content (ID, hash and size).
    func hasSameContent(as other: IndexEntry) -> Bool {
        id == other.id && hash == other.hash && size == other.size
    }

    /// The document file, relative to the data folder.
    public var file: String { FileNames.documentPath(for: id) }

    /// The entry as an index line (without the newline). The ID comes first, for people; the
    /// projected fields come last, so opening the index can take their span without reading them.
    func line(fields fieldsJSON: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fieldsJSON.count + id.utf8.count * 2 + 160)
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &out)
        out.append(contentsOf: #","file":"#.utf8)
        JSONWriter.writeString(file, into: &out)
        out.append(contentsOf: #","hash":""#.utf8)
        out.append(contentsOf: FNV1a64.hex(hash).utf8)
        out.append(contentsOf: #"","size":"#.utf8)
        out.append(contentsOf: String(size).utf8)
        out.append(contentsOf: #","stored_at":""#.utf8)
        out.append(contentsOf: storedAt.description.utf8)
        out.append(contentsOf: #"","updated_at":""#.utf8)
        out.append(contentsOf: updatedAt.description.utf8)
        out.append(contentsOf: #"","fields":"#.utf8)
        out.append(contentsOf: fieldsJSON)
        out.append(UInt8(ascii: "}"))
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

    static let knownKeys: [(name: String, bytes: [UInt8])] = ["id", "file", "hash", "size", "stored_at", "updated_at", "fields", "removed_at"]
        .map { ($0, Array($0.utf8)) }

    /// A hash written as hex digits (nil for anything else).
    static func hexValue(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 97...102: digit = byte - 87
            case 65...70: digit = byte - 55
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// Decodes one index line without building a tree for its fields (they are only checked for
    /// syntax, and referred to at `lineOffset` plus their place in the line). Throws on invalid
    /// JSON; nil when the JSON is not an index line.
    static func decode(_ line: UnsafeBufferPointer<UInt8>, lineOffset: Int) throws(JSONSyntaxError) -> Line? {
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
            repeat {
                // Keys and the short string values are compared and read as bytes: no String is
                // made for them (this runs on every line at every open).
                let keyBytes = UnsafeBufferPointer(rebasing: line[try reader.memberKey()])
                let key = Self.knownKeys.first { $0.bytes.elementsEqual(keyBytes) }?.name ?? "?"
                let start = reader.index
                switch key {
                case "fields":
                    guard start < line.count, line[start] == UInt8(ascii: "{") else {
                        try reader.skipValue()
                        valid = false
                        break
                    }
                    // Written last: its span runs to the line's closing brace. Its content is
                    // checked when a query reads it (and by `check`), not at every open.
                    var end = line.count
                    while end > start, [0x20, 0x09, 0x0D].contains(line[end - 1]) { end -= 1 }
                    if end - 1 > start, line[end - 1] == UInt8(ascii: "}"), line[end - 2] == UInt8(ascii: "}") {
                        fields = start..<(end - 1)
                        reader.index = end - 1
                    } else {
                        try reader.skipValue()
                        fields = start..<reader.index
                    }
                case "hash", "stored_at", "updated_at":
                    guard start < line.count, line[start] == UInt8(ascii: "\"") else {
                        try reader.skipValue()
                        valid = false
                        break
                    }
                    try reader.skipString()
                    let value = UnsafeBufferPointer(rebasing: line[(start + 1)..<(reader.index - 1)])
                    switch key {
                    case "hash": hash = Self.hexValue(value)
                    case "stored_at": storedAt = Timestamp(bytes: value)
                    default: updatedAt = Timestamp(bytes: value)
                    }
                case "id":
                    guard case .string(let text) = try reader.parseValue() else { valid = false; break }
                    id = text
                case "size":
                    if case .number(let text) = try reader.parseValue() { size = Int(text) } else { valid = false }
                case "removed_at":
                    try reader.skipValue()
                    removed = true
                default:
                    try reader.skipValue()
                }
            } while try reader.memberSeparator()
        }
        reader.skipWhitespace()
        if reader.index < line.count { throw reader.fail("unexpected data after the value") }
        guard valid, let id, !id.isEmpty else { return nil }
        if removed { return .removal(id) }
        guard let hash, let size, let storedAt, let updatedAt else { return nil }
        let reference = fields.map { FieldsReference.indexFile(offset: lineOffset + $0.lowerBound, length: $0.count) } ?? .inline(Array("{}".utf8))
        return .entry(IndexEntry(id: id, hash: hash, size: size, storedAt: storedAt, updatedAt: updatedAt, fields: reference))
    }
}
