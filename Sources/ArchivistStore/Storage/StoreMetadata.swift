/// The contents of `archivist.json`: the format version and the projected fields (its grammar:
/// `docs/FORMAT.md`, "archivist.json").
public struct StoreMetadata: Sendable, Equatable {
    /// The format version this build writes: 2, the folder with a snapshot (`index.snapshot`);
    /// folders of format 1 (the same files without one) are migrated when opened.
    public static let currentFormat = 2

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
        JSONWriter.prettyBytes(
            .object([
                JSONMember(key: "created_at", value: .string(createdAt.description)),
                JSONMember(key: "format", value: .number(String(format))),
                JSONMember(key: "projection", value: .array(projection.paths.map { .string($0) })),
            ]))
    }

    /// Reads the file's bytes; `path` is for messages. A file without a projection has the
    /// schema's; the schema names the long paths.
    static func decode(_ bytes: [UInt8], path: String, schema: StoreSchema) throws(StoreError) -> StoreMetadata {
        let file = try SideFile(bytes, path: path)
        guard case .number(let formatText)? = file["format"], let format = Int(formatText), format >= 1 else {
            throw file.invalid("format", "missing or not a positive integer")
        }
        if format > currentFormat {
            throw .newerFormat(path: path, found: format, supported: currentFormat)
        }
        let createdAt = file["created_at"]?.stringValue.flatMap(Timestamp.init(parsing:)) ?? Timestamp(milliseconds: 0)
        var projection = schema.projection
        if let list = file["projection"] {
            guard case .array(let items) = list else { throw file.invalid("projection", "expected an array of field paths") }
            var paths: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let field) = item, !field.isEmpty else {
                    throw file.invalid("projection[\(index)]", "expected a field path (a non-empty string)")
                }
                paths.append(field)
            }
            projection = Projection(paths: paths, longPaths: schema.longPaths)
        }
        return StoreMetadata(format: format, createdAt: createdAt, projection: projection)
    }
}
