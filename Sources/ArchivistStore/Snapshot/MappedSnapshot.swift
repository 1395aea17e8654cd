import Synchronization

/// The query structures of a snapshot, read where they lie in the mapped file: the documents' IDs
/// and entries by ordinal, each projected field's dictionary and postings, the text index.
/// Nothing is copied or decoded until a query asks for it.
final class MappedSnapshot: Sendable {
    /// The checked file.
    let reader: SnapshotReader
    /// The projected paths, in the order of their fields.
    let paths: [String]
    private let idOffsets: SnapshotFile.Section
    private let idHeap: SnapshotFile.Section
    private let entryRows: SnapshotFile.Section
    /// The ordinals of IDs a query answered with lately, so that reading those documents next
    /// (by ID) skips the binary search; a hint is used only when the ID at it is the one asked for.
    private let hints = Mutex<[String: Int]>([:])
    /// How many hints are kept at most (then they are dropped and gathered again).
    static let hintLimit = 1024

    /// The number of documents.
    var count: Int { reader.documentCount }

    /// Opens the structures of a checked file; throws when a section is missing or of the wrong size.
    init(_ reader: SnapshotReader) throws(SnapshotDamage) {
        self.reader = reader
        guard let idOffsets = reader.section(.idOffsets), let idHeap = reader.section(.idHeap),
            let entryRows = reader.section(.entries), let names = reader.section(.fieldNames),
            idOffsets.length == (reader.documentCount + 1) * 8,
            entryRows.length == reader.documentCount * SnapshotBuilder.entryRowSize
        else { throw .unreadable("snapshot sections missing or of the wrong size") }
        self.idOffsets = idOffsets
        self.idHeap = idHeap
        self.entryRows = entryRows
        let text = String(decoding: try reader.bytes(of: names), as: UTF8.self)
        paths = text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    // MARK: IDs and entries

    /// The ID bytes of an ordinal.
    func idBytes(at ordinal: Int) throws(SnapshotDamage) -> UnsafeRawBufferPointer {
        let offsets = BinaryReader(buffer: try reader.bytes(of: idOffsets, at: ordinal * 8, count: 16))
        guard let start = offsets.uint64(at: 0), let end = offsets.uint64(at: 8), start <= end,
            end <= UInt64(idHeap.length)
        else { throw .unreadable("snapshot ID \(ordinal) out of bounds") }
        return try reader.bytes(of: idHeap, at: Int(start), count: Int(end - start))
    }

    /// The ID of an ordinal.
    func id(at ordinal: Int) throws(SnapshotDamage) -> String {
        String(decoding: try idBytes(at: ordinal), as: UTF8.self)
    }

    /// The ID of an ordinal; when a query wants at most `needed` documents and that is few
    /// (`hintLimit`), it is remembered as a hint for `ordinal(of:)`: the caller reads those
    /// documents next.
    func id(at ordinal: Int, hinted needed: Int) throws(SnapshotDamage) -> String {
        let id = try id(at: ordinal)
        guard needed <= Self.hintLimit else { return id }
        hints.withLock { hints in
            if hints.count >= Self.hintLimit { hints.removeAll(keepingCapacity: true) }
            hints[id] = ordinal
        }
        return id
    }

    /// The ordinal of an ID (binary search over the IDs' bytes), or nil.
    func ordinal(of id: String) throws(SnapshotDamage) -> Int? {
        let wanted = Array(id.utf8)
        if let hint = hints.withLock({ $0[id] }), hint < count {
            let matches = wanted.withUnsafeBytes { (raw) -> Result<Bool, SnapshotDamage> in
                do throws(SnapshotDamage) { return .success(ValueOrder.compareBytes(try idBytes(at: hint), raw) == 0) } catch {
                    return .failure(error)
                }
            }
            if try matches.get() { return hint }
        }
        let result = wanted.withUnsafeBytes { (raw) -> Result<Int?, SnapshotDamage> in
            var low = 0, high = count
            while low < high {
                let mid = (low + high) / 2
                let candidate: UnsafeRawBufferPointer
                do throws(SnapshotDamage) { candidate = try idBytes(at: mid) } catch { return .failure(error) }
                let order = ValueOrder.compareBytes(candidate, raw)
                if order == 0 { return .success(mid) }
                if order < 0 { low = mid + 1 } else { high = mid }
            }
            return .success(nil)
        }
        return try result.get()
    }

    /// The entry of an ordinal (its fields a span of the index file).
    func entry(at ordinal: Int) throws(SnapshotDamage) -> IndexEntry {
        let row = BinaryReader(
            buffer: try reader.bytes(
                of: entryRows, at: ordinal * SnapshotBuilder.entryRowSize,
                count: SnapshotBuilder.entryRowSize))
        guard let hash = row.uint64(at: 0), let size = row.uint64(at: 8), let stored = row.uint64(at: 16),
            let updated = row.uint64(at: 24), let offset = row.uint64(at: 32), let length = row.uint32(at: 40),
            size <= UInt64(Int.max), offset <= UInt64(Int.max)
        else { throw .unreadable("snapshot entry \(ordinal) out of bounds") }
        return IndexEntry(
            id: try id(at: ordinal), hash: hash, size: Int(size),
            storedAt: Timestamp(milliseconds: Int64(bitPattern: stored)),
            updatedAt: Timestamp(milliseconds: Int64(bitPattern: updated)),
            fields: .indexFile(offset: Int(offset), length: Int(length)))
    }

    /// The 48 bytes of an ordinal's entry row, as the file holds them.
    func entryRowBytes(at ordinal: Int) throws(SnapshotDamage) -> UnsafeRawBufferPointer {
        try reader.bytes(of: entryRows, at: ordinal * SnapshotBuilder.entryRowSize, count: SnapshotBuilder.entryRowSize)
    }

    // MARK: Fields

    /// The dictionary and postings of a projected path, or nil when the path is not projected.
    func field(_ path: String) throws(SnapshotDamage) -> SnapshotField? {
        guard let position = paths.firstIndex(of: path) else { return nil }
        return try SnapshotField(reader, field: UInt32(position), documentCount: count)
    }

    /// The text index.
    func text() throws(SnapshotDamage) -> SnapshotText {
        try SnapshotText(reader, documentCount: count)
    }
}

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
