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
    /// The projected fields, aligned with the store's `Projection.paths`.
    public var fields: [JSONValue?]

    /// Creates an entry.
    public init(id: String, hash: UInt64, size: Int, storedAt: Timestamp, updatedAt: Timestamp, fields: [JSONValue?]) {
        self.id = id
        self.hash = hash
        self.size = size
        self.storedAt = storedAt
        self.updatedAt = updatedAt
        self.fields = fields
    }

    /// The document file, relative to the data folder.
    public var file: String { FileNames.documentPath(for: id) }

    /// The entry as an index line (without the newline), keys in sorted order.
    func line(projection: Projection) -> [UInt8] {
        let value = JSONValue.object([
            JSONMember(key: "fields", value: projection.object(from: fields)),
            JSONMember(key: "file", value: .string(file)),
            JSONMember(key: "hash", value: .string(FNV1a64.hex(hash))),
            JSONMember(key: "id", value: .string(id)),
            JSONMember(key: "size", value: .number(String(size))),
            JSONMember(key: "stored_at", value: .string(storedAt.description)),
            JSONMember(key: "updated_at", value: .string(updatedAt.description)),
        ])
        return JSONWriter.compactBytes(value)
    }

    /// A removal line.
    static func removalLine(id: String, at time: Timestamp) -> [UInt8] {
        JSONWriter.compactBytes(.object([
            JSONMember(key: "id", value: .string(id)),
            JSONMember(key: "removed_at", value: .string(time.description)),
        ]))
    }

    /// One decoded index line: an entry, or the removal of an ID.
    enum Line {
        case entry(IndexEntry)
        case removal(String)
    }

    /// Decodes an index line; nil when it is not a well-formed line.
    static func decode(_ value: JSONValue, projection: Projection) -> Line? {
        guard case .string(let id)? = value["id"], !id.isEmpty else { return nil }
        if value["removed_at"] != nil { return .removal(id) }
        guard case .string(let hashText)? = value["hash"], let hash = UInt64(hashText, radix: 16),
              case .number(let sizeText)? = value["size"], let size = Int(sizeText),
              case .string(let stored)? = value["stored_at"], let storedAt = Timestamp(parsing: stored),
              case .string(let updated)? = value["updated_at"], let updatedAt = Timestamp(parsing: updated)
        else { return nil }
        let fields = value["fields"]
        if let fields, !fields.isObject { return nil }
        return .entry(IndexEntry(id: id, hash: hash, size: size, storedAt: storedAt, updatedAt: updatedAt,
                                 fields: projection.values(fromObject: fields)))
    }
}
