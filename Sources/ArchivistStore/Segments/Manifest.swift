import ArchivistBase

/// The contents of `segments/manifest.json`: which segment files are live, the deletions of each,
/// and how far into `index.jsonl` they reach (its grammar: `docs/FORMAT.md`, "segments").
///
/// Segments and their manifest are derived data: the log and the documents are the truth. A writer
/// writes a new manifest aside, syncs it and renames it over the old one, after the files it names
/// are in place and synced, so a reader sees one whole set of segments or the one before. A
/// manifest that does not parse, names a file that is not there, or covers another log than the
/// folder's is not used: the segments are then built again from the log.
struct Manifest: Equatable, Sendable {
    /// The version of the manifest's own grammar.
    static let format = 1

    /// What the manifest says of one segment file.
    struct Segment: Equatable, Sendable {
        /// The segment's number: its file is `segments/<number, 6 digits>.seg`.
        var number: Int
        /// Documents it holds (live or deleted since).
        var documents: Int
        /// Removals it records (tombstones).
        var tombstones: Int
        /// The file's size in bytes.
        var bytes: Int
        /// The lowest and highest sequence number of its documents and tombstones.
        var firstSequence: Int
        var lastSequence: Int
        /// The checksum of the file's footer (it names the file's contents: a file put in its
        /// place by anything but this writer is not taken for it).
        var footerHash: UInt64
        /// The sum of the sizes of its documents that are not deleted.
        var liveBytes: Int
        /// Its documents and tombstones deleted since it was written (superseded by newer
        /// changes), and the generation of the file listing them (`<number>-<generation>.del`;
        /// 0: none).
        var deletedDocuments: Int = 0
        var deletedTombstones: Int = 0
        var deletesGeneration: Int = 0

        /// The segment's file name in `segments/`.
        var fileName: String { Manifest.fileName(number: number) }
        /// The deletes file's name in `segments/`, or nil when none is deleted.
        var deletesFileName: String? {
            deletesGeneration == 0 ? nil : Manifest.deletesFileName(number: number, generation: deletesGeneration)
        }
        /// Its live documents.
        var liveDocuments: Int { documents - deletedDocuments }
    }

    /// How far into the log the segments reach: every line up to `offset` (of the file with this
    /// identity) is in them; the lines after it are the tail, read at open.
    struct Coverage: Equatable, Sendable {
        /// The identity of `index.jsonl` (its inode); a rewritten log is another file.
        var identity: UInt64
        /// Bytes of the log covered (the end of a complete line).
        var offset: Int
        /// Lines covered (blank lines not counted).
        var lines: Int
        /// The sequence number of the last line covered.
        var sequence: Int
        /// `WordHash` of the up to 4,096 bytes before `offset`.
        var tailHash: UInt64
    }

    /// The checksum of the schema the segments were built with (projection, text fields, weights).
    var schemaHash: UInt64
    /// What the segments cover of the log.
    var coverage: Coverage
    /// The number the next segment file gets.
    var nextNumber: Int
    /// The live segments, oldest first.
    var segments: [Segment]

    /// `000012.seg`.
    static func fileName(number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".seg"
    }

    /// `000012-3.del`.
    static func deletesFileName(number: Int, generation: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits + "-\(generation).del"
    }

    /// The file's bytes: pretty JSON, keys sorted.
    func encoded() -> [UInt8] {
        func number(_ value: Int) -> JSONValue { .number(String(value)) }
        func hex(_ value: UInt64) -> JSONValue { .string(Hex.digits(value, width: 16)) }
        let segments: [JSONValue] = segments.map { segment in
            var members = [
                JSONMember(key: "bytes", value: number(segment.bytes)),
                JSONMember(key: "deleted_documents", value: number(segment.deletedDocuments)),
                JSONMember(key: "deleted_tombstones", value: number(segment.deletedTombstones)),
                JSONMember(key: "documents", value: number(segment.documents)),
                JSONMember(key: "file", value: .string(segment.fileName)),
                JSONMember(key: "first_seq", value: number(segment.firstSequence)),
                JSONMember(key: "footer_hash", value: hex(segment.footerHash)),
                JSONMember(key: "last_seq", value: number(segment.lastSequence)),
                JSONMember(key: "live_bytes", value: number(segment.liveBytes)),
                JSONMember(key: "number", value: number(segment.number)),
                JSONMember(key: "tombstones", value: number(segment.tombstones)),
            ]
            if let deletes = segment.deletesFileName { members.insert(JSONMember(key: "deletes", value: .string(deletes)), at: 1) }
            return .object(members)
        }
        let log: JSONValue = .object([
            JSONMember(key: "identity", value: .number(String(coverage.identity))),
            JSONMember(key: "lines", value: number(coverage.lines)),
            JSONMember(key: "offset", value: number(coverage.offset)),
            JSONMember(key: "seq", value: number(coverage.sequence)),
            JSONMember(key: "tail_hash", value: hex(coverage.tailHash)),
        ])
        return JSONWriter.prettyBytes(
            .object([
                JSONMember(key: "format", value: number(Self.format)),
                JSONMember(key: "log", value: log),
                JSONMember(key: "next_segment", value: number(nextNumber)),
                JSONMember(key: "schema_hash", value: hex(schemaHash)),
                JSONMember(key: "segments", value: .array(segments)),
            ]))
    }

    /// Reads the file's bytes; `path` is for messages. Anything missing, of the wrong type or out
    /// of range is an error naming the key path (the manifest is then not used).
    static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Manifest {
        guard bytes.count <= maximumBytes else {
            throw .invalidFile(path: path, reason: "larger than \(maximumBytes >> 20) MiB, not a manifest")
        }
        let file = try SideFile(bytes, path: path)
        func integer(_ value: JSONValue?, _ keyPath: String, minimum: Int = 0) throws(StoreError) -> Int {
            guard case .number(let text)? = value, let number = Int(text), number >= minimum else {
                throw file.invalid(keyPath, "missing or not an integer of at least \(minimum)")
            }
            return number
        }
        func hex(_ value: JSONValue?, _ keyPath: String) throws(StoreError) -> UInt64 {
            guard case .string(let text)? = value, text.utf8.count == 16, let number = Hex.value(text) else {
                throw file.invalid(keyPath, "missing or not 16 hex digits")
            }
            return number
        }
        let format = try integer(file["format"], "format", minimum: 1)
        guard format == Self.format else { throw file.invalid("format", "manifest format \(format), this archivist reads \(Self.format)") }
        guard let log = file["log"], log.isObject else { throw file.invalid("log", "missing or not an object") }
        guard case .number(let identityText)? = log["identity"], let identity = UInt64(identityText) else {
            throw file.invalid("log.identity", "missing or not an unsigned integer")
        }
        let coverage = Coverage(
            identity: identity, offset: try integer(log["offset"], "log.offset"), lines: try integer(log["lines"], "log.lines"),
            sequence: try integer(log["seq"], "log.seq"), tailHash: try hex(log["tail_hash"], "log.tail_hash"))
        guard case .array(let items)? = file["segments"] else { throw file.invalid("segments", "missing or not an array") }
        guard items.count <= maximumSegments else { throw file.invalid("segments", "more than \(maximumSegments) segments") }
        var segments: [Segment] = []
        for (index, item) in items.enumerated() {
            let at = "segments[\(index)]"
            guard item.isObject else { throw file.invalid(at, "not an object") }
            var segment = Segment(
                number: try integer(item["number"], at + ".number", minimum: 1),
                documents: try integer(item["documents"], at + ".documents"),
                tombstones: try integer(item["tombstones"], at + ".tombstones"),
                bytes: try integer(item["bytes"], at + ".bytes"),
                firstSequence: try integer(item["first_seq"], at + ".first_seq"),
                lastSequence: try integer(item["last_seq"], at + ".last_seq"),
                footerHash: try hex(item["footer_hash"], at + ".footer_hash"),
                liveBytes: try integer(item["live_bytes"], at + ".live_bytes"))
            segment.deletedDocuments = try integer(item["deleted_documents"], at + ".deleted_documents")
            segment.deletedTombstones = try integer(item["deleted_tombstones"], at + ".deleted_tombstones")
            guard segment.deletedDocuments <= segment.documents else {
                throw file.invalid(at + ".deleted_documents", "more than the segment holds")
            }
            guard segment.deletedTombstones <= segment.tombstones else {
                throw file.invalid(at + ".deleted_tombstones", "more than the segment holds")
            }
            if let deletes = item["deletes"] {
                guard case .string(let name) = deletes, let generation = Self.deletesGeneration(name, number: segment.number) else {
                    throw file.invalid(at + ".deletes", "not \(Self.deletesFileName(number: segment.number, generation: 1))-like")
                }
                segment.deletesGeneration = generation
            } else if segment.deletedDocuments + segment.deletedTombstones > 0 {
                throw file.invalid(at + ".deletes", "missing while some are deleted")
            }
            guard item["file"]?.stringValue == segment.fileName else { throw file.invalid(at + ".file", "not \(segment.fileName)") }
            segments.append(segment)
        }
        // Numbers told apart by sorting (no hash set: a process that opens a store pays for the
        // first use of each kind of one).
        let byNumber = segments.indices.sorted { (segments[$0].number, $0) < (segments[$1].number, $1) }
        for (earlier, later) in zip(byNumber, byNumber.dropFirst()) where segments[earlier].number == segments[later].number {
            throw file.invalid("segments[\(later)].number", "segment \(segments[later].number) twice")
        }
        let next = try integer(file["next_segment"], "next_segment", minimum: 1)
        guard segments.allSatisfy({ $0.number < next }) else { throw file.invalid("next_segment", "not above every segment's number") }
        return Manifest(schemaHash: try hex(file["schema_hash"], "schema_hash"), coverage: coverage, nextNumber: next, segments: segments)
    }

    /// The generation of a deletes file name of segment `number`, or nil when it is not one.
    static func deletesGeneration(_ name: String, number: Int) -> Int? {
        let prefix = String(deletesFileName(number: number, generation: 0).dropLast("0.del".count))
        guard name.hasPrefix(prefix), name.hasSuffix(".del") else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(4)
        guard !digits.isEmpty, digits.count < 10, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), value > 0
        else {
            return nil
        }
        return value
    }

    /// The largest manifest read (a few hundred bytes a segment).
    static let maximumBytes = 16 << 20
    /// The most segments a manifest may name.
    static let maximumSegments = 100_000
}
