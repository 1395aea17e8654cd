import ArchivistBase

/// Records of (ID, number, kind, digest) sorted by the ID's bytes and then by number, in memory
/// that does not grow with how many there are: they are gathered in a buffer of `runBytes`,
/// sorted and written to a run file in `folder` each time it fills, and read back by a k-way merge
/// of the runs (LevelDB's and Lucene's way with what does not fit: sorted files, merged). `check`
/// sorts the log's lines by ID this way to compare each ID's last change with the segments, which
/// are in ID order, without a look-up per line (which would touch pages all over the segments).
///
/// A run's record: the ID's length (2 bytes, little-endian), its bytes, the number (8), the kind
/// (1) and the digest (8). Run files are named `prefix-N.run`, removed by `discard` (and when
/// the value goes away); a crash leaves them in `tmp/`, where `check` reports them and `repair`
/// removes them like any leftover.
final class SortedRuns {
    /// One record, as the merge hands it over (`id` valid during the call only).
    struct Record {
        var id: UnsafeRawBufferPointer
        var number: Int
        var kind: UInt8
        var digest: UInt64
    }

    private let fileSystem: any FileSystem
    private let folder: String
    private let prefix: String
    private let runBytes: Int
    /// The records not yet in a run, packed, and where each starts.
    private var buffer: [UInt8] = []
    private var starts: [Int32] = []
    /// The run files written so far.
    private var runs: [String] = []

    /// The longest ID a record holds (the length is stored in 2 bytes).
    static let maximumIDBytes = Int(UInt16.max)

    /// An empty sorter whose runs go to `folder` (created when the first run is written) as
    /// `prefix-N.run`, a run each `runBytes` of records.
    init(fileSystem: any FileSystem, folder: String, prefix: String, runBytes: Int = 16 << 20) {
        self.fileSystem = fileSystem
        self.folder = folder
        self.prefix = prefix
        self.runBytes = max(64, runBytes)
    }

    /// How many run files it has written.
    var runCount: Int { runs.count }

    /// Adds a record.
    func append(id: UnsafeRawBufferPointer, number: Int, kind: UInt8, digest: UInt64) throws(StoreError) {
        guard id.count <= Self.maximumIDBytes else {
            throw .invalidFile(path: folder, reason: "an ID of \(id.count) bytes is too long to sort")
        }
        starts.append(Int32(buffer.count))
        buffer.append(UInt8(id.count & 0xFF))
        buffer.append(UInt8(id.count >> 8))
        buffer.append(contentsOf: id)
        Self.appendWord(UInt64(bitPattern: Int64(number)), to: &buffer)
        buffer.append(kind)
        Self.appendWord(digest, to: &buffer)
        if buffer.count >= runBytes { try writeRun() }
    }

    /// Calls `body` with every record in order (ID bytes, then number), the runs merged; `body`
    /// returns false to stop. The records are then gone (run files removed).
    func forEach(_ body: (Record) throws(StoreError) -> Bool) throws(StoreError) {
        defer { discard() }
        if runs.isEmpty {
            // Everything fits in memory: one sorted pass, no file.
            let order = sortedStarts()
            let failure = buffer.withUnsafeBytes { raw -> StoreError? in
                do throws(StoreError) {
                    for start in order {
                        guard try body(Self.record(in: raw, at: Int(start)).record) else { return nil }
                    }
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
            return
        }
        try writeRun()
        var readers: [RunReader] = []
        for run in runs { readers.append(try RunReader(fileSystem: fileSystem, path: run)) }
        // A binary heap of the readers by their current record (ties: the earlier run first, so
        // that equal records keep the order they were added in).
        var heap: [Int] = readers.indices.filter { readers[$0].current != nil }
        func less(_ a: Int, _ b: Int) -> Bool {
            let order = Self.compare(readers[a].current!, readers[b].current!)
            return order != 0 ? order < 0 : a < b
        }
        func siftDown(_ from: Int) {
            var parent = from
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                var child = left
                if left + 1 < heap.count, less(heap[left + 1], heap[left]) { child = left + 1 }
                guard less(heap[child], heap[parent]) else { return }
                heap.swapAt(child, parent)
                parent = child
            }
        }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        while let top = heap.first {
            let record = readers[top].current!
            let more = record.id.withUnsafeBytes { id -> Result<Bool, StoreError> in
                do throws(StoreError) {
                    return .success(try body(Record(id: id, number: record.number, kind: record.kind, digest: record.digest)))
                } catch {
                    return .failure(error)
                }
            }
            guard try more.get() else { return }
            try readers[top].advance()
            if readers[top].current == nil {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            siftDown(0)
        }
    }

    /// Forgets every record and removes the run files.
    func discard() {
        for run in runs { _ = try? fileSystem.removeFile(run) }
        runs = []
        buffer = []
        starts = []
    }

    deinit { discard() }

    // MARK: Runs

    /// A record read from a run (owning its ID's bytes).
    fileprivate struct OwnedRecord {
        var id: [UInt8]
        var number: Int
        var kind: UInt8
        var digest: UInt64
    }

    /// Sorts the buffered records and writes them as a run file.
    private func writeRun() throws(StoreError) {
        guard !starts.isEmpty else { return }
        let order = sortedStarts()
        var out: [UInt8] = []
        out.reserveCapacity(buffer.count)
        buffer.withUnsafeBytes { raw in
            for start in order {
                let length = Self.recordLength(in: raw, at: Int(start))
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[Int(start)..<(Int(start) + length)]))
            }
        }
        try fileSystem.createFolder(folder)
        let path = folder + "/" + prefix + "-\(runs.count + 1).run"
        runs.append(path)
        try fileSystem.write(out, to: path)
        buffer.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
    }

    /// The starts of the buffered records in record order (stable: equal records stay in the
    /// order they were added).
    private func sortedStarts() -> [Int32] {
        buffer.withUnsafeBytes { raw in
            starts.enumerated().sorted { a, b in
                let order = Self.compare(Self.record(in: raw, at: Int(a.element)).record, Self.record(in: raw, at: Int(b.element)).record)
                return order != 0 ? order < 0 : a.offset < b.offset
            }.map(\.element)
        }
    }

    /// The order of two records: their IDs' bytes, then their numbers.
    private static func compare(_ a: Record, _ b: Record) -> Int {
        let order = ValueOrder.compareBytes(a.id, b.id)
        if order != 0 { return order }
        return a.number < b.number ? -1 : (a.number > b.number ? 1 : 0)
    }

    private static func compare(_ a: OwnedRecord, _ b: OwnedRecord) -> Int {
        a.id.withUnsafeBytes { x in
            b.id.withUnsafeBytes { y in
                compare(
                    Record(id: x, number: a.number, kind: a.kind, digest: a.digest),
                    Record(id: y, number: b.number, kind: b.kind, digest: b.digest))
            }
        }
    }

    /// The bytes a record takes after its 2-byte length.
    static let fixedBytes = 8 + 1 + 8

    /// The length of the record at `start` of `raw` (whole, as `append` wrote it).
    private static func recordLength(in raw: UnsafeRawBufferPointer, at start: Int) -> Int {
        2 + (Int(raw[start]) | Int(raw[start + 1]) << 8) + fixedBytes
    }

    /// The record at `start` of `raw` (which holds it whole), and its length.
    fileprivate static func record(in raw: UnsafeRawBufferPointer, at start: Int) -> (record: Record, length: Int) {
        let idLength = Int(raw[start]) | Int(raw[start + 1]) << 8
        let idStart = start + 2
        let after = idStart + idLength
        return (
            Record(
                id: UnsafeRawBufferPointer(rebasing: raw[idStart..<after]),
                number: Int(Int64(bitPattern: word(in: raw, at: after))),
                kind: raw[after + 8],
                digest: word(in: raw, at: after + 9)),
            2 + idLength + fixedBytes
        )
    }

    private static func word(in raw: UnsafeRawBufferPointer, at start: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(raw[start + i]) << (8 * UInt64(i)) }
        return value
    }

    private static func appendWord(_ value: UInt64, to bytes: inout [UInt8]) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// Reads one run file front to back, a chunk at a time.
    private struct RunReader {
        let fileSystem: any FileSystem
        let path: String
        /// The bytes read and not yet consumed.
        private var pending: [UInt8] = []
        private var pendingStart = 0
        private var fileOffset = 0
        private var atEnd = false
        /// The record at the front, or nil past the last.
        private(set) var current: OwnedRecord?

        static let chunkBytes = 1 << 18

        init(fileSystem: any FileSystem, path: String) throws(StoreError) {
            self.fileSystem = fileSystem
            self.path = path
            try advance()
        }

        /// Moves to the next record.
        mutating func advance() throws(StoreError) {
            guard try fill(2) else {
                current = nil
                return
            }
            let idLength = Int(pending[pendingStart]) | Int(pending[pendingStart + 1]) << 8
            let length = 2 + idLength + SortedRuns.fixedBytes
            guard try fill(length) else {
                throw .invalidFile(path: path, reason: "a sort run ends inside a record")
            }
            current = pending.withUnsafeBytes { raw in
                let (record, _) = SortedRuns.record(in: raw, at: pendingStart)
                return OwnedRecord(id: Array(record.id), number: record.number, kind: record.kind, digest: record.digest)
            }
            pendingStart += length
        }

        /// Reads on until `count` bytes are pending; false when the file ends with none pending,
        /// an error when it ends inside a record.
        private mutating func fill(_ count: Int) throws(StoreError) -> Bool {
            while pending.count - pendingStart < count {
                if atEnd { return false }
                guard let chunk = try fileSystem.contents(of: path, from: fileOffset, limit: Self.chunkBytes), !chunk.isEmpty else {
                    atEnd = true
                    if pending.count - pendingStart > 0 {
                        throw .invalidFile(path: path, reason: "a sort run ends inside a record")
                    }
                    return false
                }
                fileOffset += chunk.count
                pending.removeFirst(pendingStart)
                pendingStart = 0
                pending.append(contentsOf: chunk)
            }
            return true
        }
    }
}
