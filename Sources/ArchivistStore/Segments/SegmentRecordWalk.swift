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
    /// The cursors not past their end, as a binary heap by their current ID.
    private var heap: [Int] = []
    private var started = false
    private var rows = 0

    /// A walk over `segments`' live records.
    init(_ segments: [OpenSegment]) {
        for segment in segments {
            cursors.append(Cursor(segment: segment, tombstones: false))
            cursors.append(Cursor(segment: segment, tombstones: true))
        }
    }

    /// The record the walk is at, or nil past the last.
    mutating func current() throws(StoreError) -> Record? {
        try damage { () throws(SegmentDamage) in
            if !started {
                started = true
                for index in cursors.indices where cursors[index].advance() { heap.append(index) }
                for position in stride(from: heap.count / 2 - 1, through: 0, by: -1) { try siftDown(position) }
            }
            guard let top = heap.first else { return nil }
            return try record(of: cursors[top])
        }
    }

    /// Moves past the current record.
    mutating func advance() throws(StoreError) {
        _ = try current()
        try damage { () throws(SegmentDamage) in
            guard let top = heap.first else { return }
            if !cursors[top].advance() {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            try siftDown(0)
            rows += 1
            if rows % Self.rowsBetweenDrops == 0 {
                for cursor in cursors where !cursor.tombstones { cursor.segment.mapped.reader.file.dropResidentPages() }
            }
        }
    }

    /// The digest of what a live entry and the log line that made it agree on: FNV-1a 64 of the
    /// five words' little-endian bytes (as `FNV1a64.hash` of them, without an array).
    static func entryFacts(hash: UInt64, size: UInt64, storedAt: Int64, updatedAt: Int64, fields: UInt64) -> UInt64 {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        for word in [hash, size, UInt64(bitPattern: storedAt), UInt64(bitPattern: updatedAt), fields] {
            for shift in stride(from: 0, to: 64, by: 8) {
                state = (state ^ UInt64(truncatingIfNeeded: word >> UInt64(shift))) &* 0x0000_0100_0000_01b3
            }
        }
        return state
    }

    /// The digest of what a tombstone and the removal line that made it agree on.
    static func removalFacts(removedAt: Int64, fields: UInt64) -> UInt64 {
        entryFacts(hash: 0, size: 0, storedAt: removedAt, updatedAt: removedAt, fields: fields)
    }

    // MARK: Private

    private func record(of cursor: Cursor) throws(SegmentDamage) -> Record {
        let mapped = cursor.segment.mapped
        let id = try cursor.idBytes()
        if cursor.tombstones {
            let tombstone = try mapped.tombstone(at: cursor.index)
            return Record(
                id: id, number: tombstone.sequence, kind: Kind.removal,
                digest: Self.removalFacts(removedAt: tombstone.removedAt.milliseconds, fields: tombstone.fieldsDigest))
        }
        let row = BinaryReader(buffer: try mapped.entryRowBytes(at: cursor.index))
        guard let hash = row.uint64(at: 0), let size = row.uint64(at: 8), let stored = row.uint64(at: 16),
            let updated = row.uint64(at: 24), let fifth = row.uint64(at: 32), let sixth = row.uint64(at: 40),
            fifth <= UInt64(Int.max)
        else { throw .unreadable("segment entry \(cursor.index) out of bounds") }
        guard mapped.isSegmentFile else { return Record(id: id, number: 0, kind: Kind.unmatched, digest: 0) }
        return Record(
            id: id, number: Int(fifth), kind: Kind.entry,
            digest: Self.entryFacts(
                hash: hash, size: size, storedAt: Int64(bitPattern: stored), updatedAt: Int64(bitPattern: updated), fields: sixth))
    }

    private func less(_ a: Int, _ b: Int) throws(SegmentDamage) -> Bool {
        let order = ValueOrder.compareBytes(try cursors[a].idBytes(), try cursors[b].idBytes())
        return order != 0 ? order < 0 : a < b
    }

    private mutating func siftDown(_ from: Int) throws(SegmentDamage) {
        var parent = from
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var child = left
            if left + 1 < heap.count, try less(heap[left + 1], heap[left]) { child = left + 1 }
            guard try less(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            parent = child
        }
    }

    private func damage<T>(_ body: () throws(SegmentDamage) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .damagedSnapshot(path: FileNames.segments, reason: error.description)
        }
    }
}
