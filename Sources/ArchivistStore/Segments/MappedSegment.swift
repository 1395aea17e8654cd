import ArchivistBase
import Synchronization

/// The query structures of a segment file, read where they lie in the mapped file: the documents'
/// IDs and entries by ordinal, each projected field's dictionary and postings, the text index,
/// and (layout 4) the ID filter and the tombstones of removed IDs. Nothing is copied or decoded
/// until a query asks for it.
///
/// Layouts 1 to 3 are `index.snapshot` of formats 2 and 3 (read as one segment of a folder that
/// is not migrated yet, on a read-only mount); their entries point into the log by offset.
final class MappedSegment: Sendable {
    /// The checked file.
    let reader: SegmentReader
    /// The projected paths, in the order of their fields.
    let paths: [String]
    private let idOffsets: SegmentFile.Section
    private let idHeap: SegmentFile.Section
    private let entryRows: SegmentFile.Section
    private let filter: SegmentFile.Section?
    private let tombstoneOffsets: SegmentFile.Section?
    private let tombstoneHeap: SegmentFile.Section?
    private let tombstoneRows: SegmentFile.Section?
    /// The ordinals of IDs a query answered with lately, so that reading those documents next
    /// (by ID) skips the binary search; a hint is used only when the ID at it is the one asked for.
    private let hints = Mutex<[String: Int]>([:])
    /// Whether any hint was ever given (a look-up skips the hints' lock until one is).
    private let hinted = Atomic<Bool>(false)
    /// How many hints are kept at most (then they are dropped and gathered again).
    static let hintLimit = 1024

    /// The number of documents.
    var count: Int { reader.footer.documentCount }
    /// Whether the entries carry sequence numbers and field digests (layout 4, a segment file).
    var isSegmentFile: Bool { reader.layout >= 4 }
    /// The number of tombstones (layout 4; 0 before).
    let tombstoneCount: Int
    /// Layout 4: the segment's number (its file name), and the lowest and highest sequence number
    /// of its documents and tombstones.
    var number: Int { isSegmentFile ? Int(truncatingIfNeeded: reader.footer.coverage.identity) : 0 }
    var firstSequence: Int { isSegmentFile ? reader.footer.coverage.offset : 0 }
    var lastSequence: Int { reader.footer.coverage.sequence }

    /// Opens the structures of a checked file; throws when a section is missing or of the wrong size.
    init(_ reader: SegmentReader) throws(SegmentDamage) {
        self.reader = reader
        guard let idOffsets = reader.section(.idOffsets), let idHeap = reader.section(.idHeap),
            let entryRows = reader.section(.entries), let names = reader.section(.fieldNames),
            idOffsets.length == (reader.footer.documentCount + 1) * 8,
            entryRows.length == reader.footer.documentCount * SegmentBuilder.entryRowSize
        else { throw .unreadable("segment sections missing or of the wrong size") }
        self.idOffsets = idOffsets
        self.idHeap = idHeap
        self.entryRows = entryRows
        if reader.layout >= 4 {
            let tombstones = reader.footer.coverage.lines
            guard let filter = reader.section(.idFilter), filter.length % IDFilter.blockBytes == 0,
                let offsets = reader.section(.tombstoneOffsets), let heap = reader.section(.tombstoneHeap),
                let rows = reader.section(.tombstoneRows),
                offsets.length == (tombstones + 1) * 8, rows.length == tombstones * SegmentBuilder.tombstoneRowSize
            else { throw .unreadable("segment filter or tombstone sections missing or of the wrong size") }
            self.filter = filter
            tombstoneOffsets = offsets
            tombstoneHeap = heap
            tombstoneRows = rows
            tombstoneCount = tombstones
        } else {
            filter = nil
            tombstoneOffsets = nil
            tombstoneHeap = nil
            tombstoneRows = nil
            tombstoneCount = 0
        }
        let text = String(decoding: try reader.bytes(of: names), as: UTF8.self)
        paths = text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    // MARK: IDs and entries

    /// The ID bytes of an ordinal.
    func idBytes(at ordinal: Int) throws(SegmentDamage) -> UnsafeRawBufferPointer {
        try Self.bytes(at: ordinal, offsets: idOffsets, heap: idHeap, reader: reader)
    }

    /// The bytes of item `index` of an offsets section into a heap.
    private static func bytes(
        at index: Int, offsets: SegmentFile.Section, heap: SegmentFile.Section, reader: SegmentReader
    ) throws(SegmentDamage) -> UnsafeRawBufferPointer {
        let words = BinaryReader(buffer: try reader.bytes(of: offsets, at: index * 8, count: 16))
        guard let start = words.uint64(at: 0), let end = words.uint64(at: 8), start <= end, end <= UInt64(heap.length) else {
            throw .unreadable("segment ID \(index) out of bounds")
        }
        return try reader.bytes(of: heap, at: Int(start), count: Int(end - start))
    }

    /// The ID of an ordinal.
    func id(at ordinal: Int) throws(SegmentDamage) -> String {
        String(decoding: try idBytes(at: ordinal), as: UTF8.self)
    }

    /// The ID of an ordinal; when a query wants at most `needed` documents and that is few
    /// (`hintLimit`), it is remembered as a hint for `ordinal(of:)`: the caller reads those
    /// documents next.
    func id(at ordinal: Int, hinted needed: Int) throws(SegmentDamage) -> String {
        let id = try id(at: ordinal)
        guard needed <= Self.hintLimit else { return id }
        hinted.store(true, ordering: .relaxed)
        hints.withLock { hints in
            if hints.count >= Self.hintLimit { hints.removeAll(keepingCapacity: true) }
            hints[id] = ordinal
        }
        return id
    }

    /// Whether the ID with this `IDFilter` hash may be in the segment, as a document or a
    /// tombstone (always true before layout 4).
    func mayContain(idHash: UInt64) throws(SegmentDamage) -> Bool {
        guard let filter, let offset = IDFilter.blockOffset(idHash, filterBytes: filter.length) else { return true }
        // The one 64-byte block the ID's bits are in: its 4 KiB checked, not the whole filter's.
        return IDFilter.mayContain(idHash, inBlock: try reader.bytes(of: filter, at: offset, count: IDFilter.blockBytes))
    }

    /// The ordinal of an ID (binary search over the IDs' bytes), or nil.
    func ordinal(of id: String) throws(SegmentDamage) -> Int? {
        if let hint = try hintedOrdinal(of: id) { return hint }
        return try Self.search(id, count: count) { (index) throws(SegmentDamage) in try idBytes(at: index) }
    }

    /// The ordinal of an ID when a query of this process read it here lately (`id(at:hinted:)`):
    /// no filter probe or search, only the hinted ID's bytes compared; nil otherwise.
    func hintedOrdinal(of id: String) throws(SegmentDamage) -> Int? {
        guard hinted.load(ordering: .relaxed), let hint = hints.withLock({ $0[id] }), hint < count else { return nil }
        var wanted = id
        let matches = wanted.withUTF8 { (raw) -> Result<Bool, SegmentDamage> in
            do throws(SegmentDamage) {
                return .success(ValueOrder.compareBytes(try idBytes(at: hint), UnsafeRawBufferPointer(raw)) == 0)
            } catch {
                return .failure(error)
            }
        }
        return try matches.get() ? hint : nil
    }

    /// The place of `id` among `count` IDs in byte order, read by `idAt`, or nil.
    private static func search(
        _ id: String, count: Int, _ idAt: (Int) throws(SegmentDamage) -> UnsafeRawBufferPointer
    ) throws(SegmentDamage) -> Int? {
        var wanted = id
        let result = wanted.withUTF8 { (utf8) -> Result<Int?, SegmentDamage> in
            let raw = UnsafeRawBufferPointer(utf8)
            var low = 0
            var high = count
            while low < high {
                let mid = (low + high) / 2
                let candidate: UnsafeRawBufferPointer
                do throws(SegmentDamage) { candidate = try idAt(mid) } catch { return .failure(error) }
                let order = ValueOrder.compareBytes(candidate, raw)
                if order == 0 { return .success(mid) }
                if order < 0 { low = mid + 1 } else { high = mid }
            }
            return .success(nil)
        }
        return try result.get()
    }

    /// The entry of an ordinal: in a segment file with its sequence number and fields digest, in
    /// an older snapshot with its fields' span of the log.
    func entry(at ordinal: Int) throws(SegmentDamage) -> IndexEntry {
        let row = try entryRow(at: ordinal)
        return IndexEntry(
            id: try id(at: ordinal), hash: row.hash, size: row.size, storedAt: row.storedAt, updatedAt: row.updatedAt,
            fields: row.fields, sequence: row.sequence)
    }

    /// What an entry row holds, decoded (an entry without its ID).
    struct EntryRow {
        var hash: UInt64
        var size: Int
        var storedAt: Timestamp
        var updatedAt: Timestamp
        /// The fields' digest (`.logLine`) in a segment file, their span of the log before.
        var fields: FieldsReference
        /// The change's number (0 before layout 4).
        var sequence: Int
    }

    /// The row of an ordinal's entry, decoded, without reading its ID.
    func entryRow(at ordinal: Int) throws(SegmentDamage) -> EntryRow {
        let row = BinaryReader(buffer: try entryRowBytes(at: ordinal))
        guard let hash = row.uint64(at: 0), let size = row.uint64(at: 8), let stored = row.uint64(at: 16),
            let updated = row.uint64(at: 24), let fifth = row.uint64(at: 32), let sixth = row.uint64(at: 40),
            size <= UInt64(Int.max), fifth <= UInt64(Int.max)
        else { throw .unreadable("segment entry \(ordinal) out of bounds") }
        let fields: FieldsReference
        var sequence = 0
        if isSegmentFile {
            sequence = Int(fifth)
            fields = .logLine(digest: sixth)
        } else {
            fields = .indexFile(offset: Int(fifth), length: Int(UInt32(truncatingIfNeeded: sixth)))
        }
        return EntryRow(
            hash: hash, size: Int(size), storedAt: Timestamp(milliseconds: Int64(bitPattern: stored)),
            updatedAt: Timestamp(milliseconds: Int64(bitPattern: updated)), fields: fields, sequence: sequence)
    }

    /// The sequence number of an ordinal's entry (0 before layout 4).
    func sequence(at ordinal: Int) throws(SegmentDamage) -> Int {
        guard isSegmentFile else { return 0 }
        guard let value = BinaryReader(buffer: try entryRowBytes(at: ordinal)).uint64(at: 32), value <= UInt64(Int.max) else {
            throw .unreadable("segment entry \(ordinal) out of bounds")
        }
        return Int(value)
    }

    /// The size of an ordinal's document.
    func size(at ordinal: Int) throws(SegmentDamage) -> Int {
        guard let value = BinaryReader(buffer: try entryRowBytes(at: ordinal)).uint64(at: 8), value <= UInt64(Int.max) else {
            throw .unreadable("segment entry \(ordinal) out of bounds")
        }
        return Int(value)
    }

    /// The 48 bytes of an ordinal's entry row, as the file holds them.
    func entryRowBytes(at ordinal: Int) throws(SegmentDamage) -> UnsafeRawBufferPointer {
        try reader.bytes(of: entryRows, at: ordinal * SegmentBuilder.entryRowSize, count: SegmentBuilder.entryRowSize)
    }

    // MARK: Tombstones

    /// A removal a segment records: the ID, its sequence number, when, and the digest of the
    /// removed document's fields as the removal line holds them (0 when it holds none).
    struct Tombstone: Equatable, Sendable {
        var id: String
        var sequence: Int
        var removedAt: Timestamp
        var fieldsDigest: UInt64
    }

    /// The bytes of tombstone `index`'s ID.
    func tombstoneIDBytes(at index: Int) throws(SegmentDamage) -> UnsafeRawBufferPointer {
        guard let tombstoneOffsets, let tombstoneHeap else { throw .unreadable("segment has no tombstones") }
        return try Self.bytes(at: index, offsets: tombstoneOffsets, heap: tombstoneHeap, reader: reader)
    }

    /// Tombstone `index` (in ID order).
    func tombstone(at index: Int) throws(SegmentDamage) -> Tombstone {
        let row = try tombstoneRow(at: index)
        guard let sequence = row.uint64(at: 0), let removed = row.uint64(at: 8), let digest = row.uint64(at: 16),
            sequence <= UInt64(Int.max)
        else { throw .unreadable("segment tombstone \(index) out of bounds") }
        return Tombstone(
            id: String(decoding: try tombstoneIDBytes(at: index), as: UTF8.self), sequence: Int(sequence),
            removedAt: Timestamp(milliseconds: Int64(bitPattern: removed)), fieldsDigest: digest)
    }

    /// The sequence number of tombstone `index` (without reading its ID).
    func tombstoneSequence(at index: Int) throws(SegmentDamage) -> Int {
        guard let sequence = try tombstoneRow(at: index).uint64(at: 0), sequence <= UInt64(Int.max) else {
            throw .unreadable("segment tombstone \(index) out of bounds")
        }
        return Int(sequence)
    }

    /// The row of tombstone `index`: its number, removal time and fields' digest.
    private func tombstoneRow(at index: Int) throws(SegmentDamage) -> BinaryReader {
        guard let tombstoneRows else { throw .unreadable("segment has no tombstones") }
        return BinaryReader(
            buffer: try reader.bytes(
                of: tombstoneRows, at: index * SegmentBuilder.tombstoneRowSize, count: SegmentBuilder.tombstoneRowSize))
    }

    /// The index of the tombstone of an ID, or nil.
    func tombstoneIndex(of id: String) throws(SegmentDamage) -> Int? {
        guard tombstoneCount > 0 else { return nil }
        return try Self.search(id, count: tombstoneCount) { (index) throws(SegmentDamage) in try tombstoneIDBytes(at: index) }
    }

    // MARK: Fields

    /// The dictionary and postings of a projected path, or nil when the path is not projected.
    func field(_ path: String) throws(SegmentDamage) -> SegmentField? {
        guard let position = paths.firstIndex(of: path) else { return nil }
        return try SegmentField(reader, field: UInt32(position), documentCount: count)
    }

    /// The text index.
    func text() throws(SegmentDamage) -> SegmentText {
        try SegmentText(reader, documentCount: count)
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
