import ArchivistBase

/// Records of (ID, number, kind, digest) sorted by the ID's bytes and then by number, in memory
/// that does not grow with how many there are: they are gathered in a buffer of `runBytes`,
/// sorted and written to a run file in `folder` each time it fills, and read back by a k-way merge
/// of the runs (LevelDB's and Lucene's way with what does not fit: sorted files, merged). `check`
/// sorts the log's lines by ID this way to compare each ID's last change with the segments, which
/// are in ID order, without a look-up per line (which would touch pages all over the segments).
///
/// A run's record, little-endian (`BinaryWriter`): the ID's length (4 bytes), its bytes, the
/// number (8), the kind (1) and the digest (8). Run files are named `prefix-N.run`, removed by
/// `discard` (and when the value goes away); a crash leaves them in `tmp/`, where `check` reports
/// them and `repair` removes them like any leftover.
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
    private var buffer = BinaryWriter()
    private var starts: [Int] = []
    /// The run files written so far.
    private var runs: [String] = []

    /// The bytes each run's reader reads at a time (nil: `readBudget` shared among the runs).
    private let readChunk: Int?

    /// An empty sorter whose runs go to `folder` (created when the first run is written) as
    /// `prefix-N.run`, a run each `runBytes` of records; `readChunk` fixes the bytes a reader
    /// reads at a time (tests make it smaller than a record).
    init(fileSystem: any FileSystem, folder: String, prefix: String, runBytes: Int = 16 << 20, readChunk: Int? = nil) {
        self.fileSystem = fileSystem
        self.folder = folder
        self.prefix = prefix
        self.runBytes = max(64, runBytes)
        self.readChunk = readChunk.map { max(1, $0) }
    }

    /// How many run files it has written.
    var runCount: Int { runs.count }

    /// Adds a record.
    func append(id: UnsafeRawBufferPointer, number: Int, kind: UInt8, digest: UInt64) throws(StoreError) {
        starts.append(buffer.bytes.count)
        buffer.append(UInt32(id.count))
        buffer.append(contentsOf: id)
        buffer.append(Int64(number))
        buffer.append(kind)
        buffer.append(digest)
        if buffer.bytes.count >= runBytes { try writeRun() }
    }

    /// Calls `body` with every record in order (ID bytes, then number; equal ones in the order
    /// they were added), the runs merged; `body` returns false to stop. The records are then gone
    /// (run files removed).
    func forEach(_ body: (Record) throws(StoreError) -> Bool) throws(StoreError) {
        defer { discard() }
        if runs.isEmpty {
            // Everything fits in memory: one sorted pass, no file.
            let order = sortedStarts()
            let failure = buffer.bytes.withUnsafeBytes { raw -> StoreError? in
                do throws(StoreError) {
                    for start in order where try !body(Self.record(in: raw, at: start)) { return nil }
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
        // The readers share one budget: a chunk each of `readBudget / runs`, so that the merge's
        // memory stays the same however many runs a larger store makes.
        let chunkBytes = readChunk ?? max(Self.smallestChunk, Self.readBudget / runs.count)
        for run in runs { readers.append(try RunReader(fileSystem: fileSystem, path: run, chunkBytes: chunkBytes)) }
        // Ties go to the earlier run, so that equal records keep the order they were added in.
        let less = { (a: Int, b: Int) -> Bool in
            let order = readers[a].withCurrent { x in readers[b].withCurrent { y in Self.compare(x, y) } }
            return order != 0 ? order < 0 : a < b
        }
        var heap = IndexHeap(readers.indices.filter { readers[$0].current != nil }, less: less)
        while let top = heap.top {
            let more = readers[top].withCurrent { record -> Result<Bool, StoreError> in
                do throws(StoreError) {
                    return .success(try body(record))
                } catch {
                    return .failure(error)
                }
            }
            guard try more.get() else { return }
            try readers[top].advance()
            heap.topChanged(exhausted: readers[top].current == nil, less: less)
        }
    }

    /// The bytes the merge's readers read ahead, all runs together.
    static let readBudget = 4 << 20
    /// The least a reader reads at a time, however many runs there are.
    static let smallestChunk = 16 << 10

    /// Forgets every record and removes the run files.
    func discard() {
        for run in runs { _ = try? fileSystem.removeFile(run) }
        runs = []
        buffer = BinaryWriter()
        starts = []
    }

    deinit { discard() }

    // MARK: Runs

    /// Sorts the buffered records and writes them as a run file.
    private func writeRun() throws(StoreError) {
        guard !starts.isEmpty else { return }
        let order = sortedStarts()
        var out: [UInt8] = []
        out.reserveCapacity(buffer.bytes.count)
        buffer.bytes.withUnsafeBytes { raw in
            for start in order {
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[start..<(start + Self.length(of: raw, at: start))]))
            }
        }
        try fileSystem.createFolder(folder)
        let path = folder + "/" + prefix + "-\(runs.count + 1).run"
        runs.append(path)
        try fileSystem.write(out, to: path)
        buffer = BinaryWriter(capacity: runBytes + runBytes / 8)
        starts.removeAll(keepingCapacity: true)
    }

    /// The starts of the buffered records in record order (equal records in the order they were
    /// added).
    private func sortedStarts() -> [Int] {
        buffer.bytes.withUnsafeBytes { raw in
            starts.enumerated().sorted { a, b in
                let order = Self.compare(Self.record(in: raw, at: a.element), Self.record(in: raw, at: b.element))
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

    /// The bytes a record takes after its ID.
    private static let fixedBytes = 8 + 1 + 8

    /// The length of the whole record at `start` of `raw` (which holds at least its ID's length).
    fileprivate static func length(of raw: UnsafeRawBufferPointer, at start: Int) -> Int {
        4 + Int(BinaryReader(buffer: raw).uint32(at: start)!) + fixedBytes
    }

    /// The record at `start` of `raw`, which holds it whole.
    fileprivate static func record(in raw: UnsafeRawBufferPointer, at start: Int) -> Record {
        let reader = BinaryReader(buffer: raw)
        let after = start + 4 + Int(reader.uint32(at: start)!)
        return Record(
            id: UnsafeRawBufferPointer(rebasing: raw[(start + 4)..<after]),
            number: Int(Int64(bitPattern: reader.uint64(at: after)!)),
            kind: reader.uint8(at: after + 8)!,
            digest: reader.uint64(at: after + 9)!)
    }

    /// Reads one run file front to back, a chunk at a time.
    private struct RunReader {
        let fileSystem: any FileSystem
        let path: String
        /// The bytes read and not yet consumed, and where the current record starts in them.
        private var pending: [UInt8] = []
        private var start = 0
        private var fileOffset = 0
        /// The current record's start in `pending`, or nil past the last.
        private(set) var current: Int?

        /// The bytes it reads at a time.
        let chunkBytes: Int

        init(fileSystem: any FileSystem, path: String, chunkBytes: Int) throws(StoreError) {
            self.fileSystem = fileSystem
            self.path = path
            self.chunkBytes = chunkBytes
            try load()
        }

        /// Calls `body` with the current record.
        func withCurrent<T>(_ body: (Record) -> T) -> T {
            pending.withUnsafeBytes { body(SortedRuns.record(in: $0, at: current!)) }
        }

        /// Moves to the next record.
        mutating func advance() throws(StoreError) {
            guard let current else { return }
            start = current + pending.withUnsafeBytes { SortedRuns.length(of: $0, at: current) }
            try load()
        }

        /// Makes the record at `start` current, reading on as it needs; nil at the end of the
        /// file, an error when it ends inside a record.
        private mutating func load() throws(StoreError) {
            guard try fill(4) else {
                current = nil
                return
            }
            // With some bytes pending, an end before the record's last is an error (`fill`).
            _ = try fill(pending.withUnsafeBytes { SortedRuns.length(of: $0, at: start) })
            current = start
        }

        /// Reads on until `count` bytes are pending past `start`; false when the file ends with
        /// none pending, an error when it ends with some but fewer than `count`.
        private mutating func fill(_ count: Int) throws(StoreError) -> Bool {
            while pending.count - start < count {
                guard let chunk = try fileSystem.contents(of: path, from: fileOffset, limit: chunkBytes), !chunk.isEmpty else {
                    if pending.count > start { throw .invalidFile(path: path, reason: "a sort run ends inside a record") }
                    return false
                }
                fileOffset += chunk.count
                pending.removeFirst(start)
                start = 0
                pending.append(contentsOf: chunk)
            }
            return true
        }
    }
}
