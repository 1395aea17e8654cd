import ArchivistBase

/// The live records of some segments (documents and tombstones no newer segment superseded), in
/// the byte order of their IDs: a k-way merge over each segment's documents and tombstones, each
/// read front to back, the pages read let go every `rowsBetweenDrops` records. `check` walks it
/// beside the log's lines sorted by ID (`SortedRuns`).
///
/// Each record carries its number, its kind and a digest of what the log line that made it must
/// say (`entryFacts`, `removalFacts`), so that the two sides compare as numbers.
struct SegmentRecordWalk {
    /// A record (`id` valid until the walk moves on).
    struct Record {
        var id: UnsafeRawBufferPointer
        var number: Int
        var kind: UInt8
        var digest: UInt64
        /// For a live document, the digest of what its file must hold (`documentFacts`: hash,
        /// size, projected fields); nil for a tombstone or an unmatched record.
        var document: UInt64? = nil
    }

    /// The kinds of record.
    enum Kind {
        /// A live document (an entry line).
        static let entry: UInt8 = 1
        /// A tombstone (a removal line).
        static let removal: UInt8 = 2
        /// A record no line can match (an entry of a snapshot before segment files).
        static let unmatched: UInt8 = 0
    }

    /// Records read between two drops of the segments' resident pages.
    static let rowsBetweenDrops = 32_768

    /// One segment's documents or tombstones, and where the walk is in them.
    private struct Cursor {
        let segment: OpenSegment
        let tombstones: Bool
        var index = -1
        var count: Int { tombstones ? segment.mapped.tombstoneCount : segment.mapped.count }

        /// Moves to the next live member; false past the last.
        mutating func advance() -> Bool {
            index += 1
            while index < count, segment.isDeleted(tombstones ? segment.mapped.count + index : index) { index += 1 }
            return index < count
        }

        func idBytes() throws(SegmentDamage) -> UnsafeRawBufferPointer {
            tombstones ? try segment.mapped.tombstoneIDBytes(at: index) : try segment.mapped.idBytes(at: index)
        }
    }

    private var cursors: [Cursor] = []
    /// The cursors not past their end, by their current ID.
    private var heap: IndexHeap
    private var rows = 0

    /// A walk over `segments`' live records.
    init(_ segments: [OpenSegment]) throws(StoreError) {
        for segment in segments {
            cursors.append(Cursor(segment: segment, tombstones: false))
            cursors.append(Cursor(segment: segment, tombstones: true))
        }
        var live: [Int] = []
        for index in cursors.indices where cursors[index].advance() { live.append(index) }
        let cursors = cursors
        heap = try Self.damage { () throws(SegmentDamage) in
            try IndexHeap(live) { (a, b) throws(SegmentDamage) in try Self.less(cursors, a, b) }
        }
    }

    /// The record the walk is at, or nil past the last.
    func current() throws(StoreError) -> Record? {
        guard let top = heap.top else { return nil }
        return try Self.damage { () throws(SegmentDamage) in try Self.record(of: cursors[top]) }
    }

    /// Moves past the current record.
    mutating func advance() throws(StoreError) {
        guard let top = heap.top else { return }
        let exhausted = !cursors[top].advance()
        let cursors = cursors
        try Self.damage { () throws(SegmentDamage) in
            try heap.topChanged(exhausted: exhausted) { (a, b) throws(SegmentDamage) in try Self.less(cursors, a, b) }
        }
        rows += 1
        if rows % Self.rowsBetweenDrops == 0 {
            for cursor in cursors where !cursor.tombstones { cursor.segment.mapped.reader.file.dropResidentPages() }
        }
    }

    /// The digest of what a live entry and the log line that made it agree on: FNV-1a 64 of the
    /// five words, little-endian.
    static func entryFacts(hash: UInt64, size: UInt64, storedAt: Int64, updatedAt: Int64, fields: UInt64) -> UInt64 {
        var words = BinaryWriter(capacity: 40)
        words.append(hash)
        words.append(size)
        words.append(storedAt)
        words.append(updatedAt)
        words.append(fields)
        return FNV1a64.hash(words.bytes)
    }

    /// The digest of what a document file and its live entry agree on: its hash, size and the
    /// digest of its projected fields (`check` compares documents with entries by it).
    static func documentFacts(hash: UInt64, size: UInt64, fields: UInt64) -> UInt64 {
        entryFacts(hash: hash, size: size, storedAt: 0, updatedAt: 0, fields: fields)
    }

    /// The digest of what a tombstone and the removal line that made it agree on.
    static func removalFacts(removedAt: Int64, fields: UInt64) -> UInt64 {
        entryFacts(hash: 0, size: 0, storedAt: removedAt, updatedAt: removedAt, fields: fields)
    }

    // MARK: Private

    private static func record(of cursor: Cursor) throws(SegmentDamage) -> Record {
        let mapped = cursor.segment.mapped
        let id = try cursor.idBytes()
        if cursor.tombstones {
            let tombstone = try mapped.tombstone(at: cursor.index)
            return Record(
                id: id, number: tombstone.sequence, kind: Kind.removal,
                digest: Self.removalFacts(removedAt: tombstone.removedAt.milliseconds, fields: tombstone.fieldsDigest))
        }
        let row = try mapped.entryRow(at: cursor.index)
        guard case .logLine(let fields) = row.fields else { return Record(id: id, number: 0, kind: Kind.unmatched, digest: 0) }
        return Record(
            id: id, number: row.sequence, kind: Kind.entry,
            digest: Self.entryFacts(
                hash: row.hash, size: UInt64(row.size), storedAt: row.storedAt.milliseconds, updatedAt: row.updatedAt.milliseconds,
                fields: fields),
            document: Self.documentFacts(hash: row.hash, size: UInt64(row.size), fields: fields))
    }

    private static func less(_ cursors: [Cursor], _ a: Int, _ b: Int) throws(SegmentDamage) -> Bool {
        let order = ValueOrder.compareBytes(try cursors[a].idBytes(), try cursors[b].idBytes())
        return order != 0 ? order < 0 : a < b
    }

    private static func damage<T>(_ body: () throws(SegmentDamage) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .damagedSnapshot(path: FileNames.segments, reason: error.description)
        }
    }
}
