/// The contents of `archivist.json`: the format version and the projected fields.
public struct StoreMetadata: Sendable, Equatable {
    /// The format version this build writes.
    public static let currentFormat = 1

    /// The folder's format version.
    public var format: Int
    /// When the folder was created.
    public var createdAt: Timestamp
    /// The fields projected into the index.
    public var projection: Projection

    /// Creates metadata.
    public init(format: Int = StoreMetadata.currentFormat, createdAt: Timestamp, projection: Projection) {
        self.format = format
        self.createdAt = createdAt
        self.projection = projection
    }

    /// The file's bytes.
    func encoded() -> [UInt8] {
        JSONWriter.prettyBytes(.object([
            JSONMember(key: "created_at", value: .string(createdAt.description)),
            JSONMember(key: "format", value: .number(String(format))),
            JSONMember(key: "projection", value: .array(projection.paths.map { .string($0) })),
        ]))
    }

    /// Reads the file's bytes; `path` is for messages.
    static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> StoreMetadata {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw .invalidJSON(path: path, error: error)
        }
        guard case .number(let formatText)? = value["format"], let format = Int(formatText), format >= 1 else {
            throw .invalidMetadata(path: path, reason: "missing or invalid \"format\" (a positive integer)")
        }
        if format > currentFormat {
            throw .newerFormat(path: path, found: format, supported: currentFormat)
        }
        let createdAt = value["created_at"]?.stringValue.flatMap(Timestamp.init(parsing:)) ?? Timestamp(milliseconds: 0)
        var projection = Projection.nytDefault
        if let list = value["projection"] {
            guard case .array(let items) = list else {
                throw .invalidMetadata(path: path, reason: "\"projection\" must be an array of field paths")
            }
            var paths: [String] = []
            for item in items {
                guard case .string(let field) = item, !field.isEmpty else {
                    throw .invalidMetadata(path: path, reason: "\"projection\" must be an array of field paths")
                }
                paths.append(field)
            }
            projection = Projection(paths: paths)
        }
        return StoreMetadata(format: format, createdAt: createdAt, projection: projection)
    }
}
