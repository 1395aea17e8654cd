import ArchivistBase

/// The contents of `archivist.json`: the format version and the projected fields (its grammar:
/// `docs/FORMAT.md`, "archivist.json").
public struct StoreMetadata: Sendable, Equatable {
    /// The format version this build writes: 4, the folder whose query structures are segments
    /// (`segments/`; format 3's index lines carry sequence numbers, format 2 added the snapshot,
    /// `index.snapshot`); folders of formats 1 to 3 are migrated when opened.
    public static let currentFormat = 4

    /// The folder's format version.
    public var format: Int
    /// When the folder was created.
    public var createdAt: Timestamp
    /// The fields projected into the index.
    public var projection: Projection
    /// No change is numbered at or below this again: the highest sequence number given out when
    /// the index was last rewritten (compaction and rebuilds drop lines, maybe the last ones).
    public var sequenceFloor = 0
    /// The changes feed is whole only after this sequence number: changes at or below it may have
    /// been dropped. Only `compact(purgeRemovals: true)` (the tombstones) and a rebuild of an
    /// unreadable or missing index (every number) move it; `compact`, `repair` of a readable
    /// index and `index add`/`drop` keep each ID's last change with its number.
    public var feedStart = 0
    /// The ID prefix the folder's file names leave out (`StoreSchema.idPrefix`): the folder's own,
    /// whatever schema opens it later, so that every build finds the files where they are.
    public var idPrefix = StoreMetadata.earlierIDPrefix

    /// The ID prefix of a folder whose `archivist.json` names none: the rule every folder was
    /// written with before the prefix became the schema's (and kept out of the file for it, so
    /// that those folders' files stay byte for byte as they were).
    public static let earlierIDPrefix = "nyt://"
    /// The longest ID prefix a folder takes.
    static let maximumIDPrefixBytes = 64

    /// Creates metadata.
    public init(format: Int = StoreMetadata.currentFormat, createdAt: Timestamp, projection: Projection) {
        self.format = format
        self.createdAt = createdAt
        self.projection = projection
    }

    /// The file's bytes.
    func encoded() -> [UInt8] {
        var members = [
            JSONMember(key: "created_at", value: .string(createdAt.description)),
            JSONMember(key: "format", value: .number(String(format))),
            JSONMember(key: "projection", value: .array(projection.paths.map { .string($0) })),
        ]
        if feedStart > 0 { members.insert(JSONMember(key: "feed_start", value: .number(String(feedStart))), at: 1) }
        if idPrefix != Self.earlierIDPrefix {
            members.insert(JSONMember(key: "id_prefix", value: .string(idPrefix)), at: members.count - 1)
        }
        if sequenceFloor > 0 { members.append(JSONMember(key: "sequence_floor", value: .number(String(sequenceFloor)))) }
        return JSONWriter.prettyBytes(.object(members))
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
        var metadata = StoreMetadata(format: format, createdAt: createdAt, projection: projection)
        metadata.sequenceFloor = try count(file, "sequence_floor")
        metadata.feedStart = try count(file, "feed_start")
        if let prefix = file["id_prefix"] {
            guard case .string(let text) = prefix, text.utf8.count <= maximumIDPrefixBytes else {
                throw file.invalid("id_prefix", "expected a string of at most \(maximumIDPrefixBytes) bytes")
            }
            metadata.idPrefix = text
        }
        return metadata
    }

    /// An optional non-negative integer member (0 when absent).
    private static func count(_ file: SideFile, _ key: String) throws(StoreError) -> Int {
        guard let value = file[key] else { return 0 }
        guard case .number(let text) = value, let number = Int(text), number >= 0 else {
            throw file.invalid(key, "expected a non-negative integer")
        }
        return number
    }
}
