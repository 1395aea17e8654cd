import ArchivistBase

/// Index lines held aside by a rebuild of the log, with their sequence numbers, in runs (one per
/// bucket of documents), each sorted by number, in a temporary file; read back merged in number
/// order (a k-way merge over a heap of the runs). Writing holds one run; reading, a window of
/// each run: the memory does not grow with the store.
final class SequenceRuns {
    private let fileSystem: any FileSystem
    /// The temporary file the runs are written to (removed by `discard`).
    let path: String
    private var pending: [UInt8] = []
    private var written = 0
    private var runs: [Range<Int>] = []
    /// How many lines the runs hold.
    private(set) var count = 0

    /// Runs written to `path` (created when the first run is added).
    init(fileSystem: any FileSystem, path: String) {
        self.fileSystem = fileSystem
        self.path = path
    }

    /// Adds a run: lines (without their newlines) with their numbers, in any order.
    func addRun(_ lines: [(sequence: Int, bytes: [UInt8])]) throws(StoreError) {
        guard !lines.isEmpty else { return }
        let start = written + pending.count
        for line in lines.sorted(by: { $0.sequence < $1.sequence }) {
            withUnsafeBytes(of: UInt64(line.sequence).littleEndian) { pending.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(line.bytes.count).littleEndian) { pending.append(contentsOf: $0) }
            pending.append(contentsOf: line.bytes)
        }
        runs.append(start..<(written + pending.count))
        count += lines.count
        if pending.count >= 1 << 20 { try flushPending() }
    }

    private func flushPending() throws(StoreError) {
        guard !pending.isEmpty else { return }
        if written == 0 { try fileSystem.write(pending, to: path) } else { try fileSystem.append(pending, to: path) }
        written += pending.count
        pending.removeAll(keepingCapacity: true)
    }

    /// Removes the temporary file.
    func discard() {
        if written > 0 { _ = try? fileSystem.removeFile(path) }
        written = 0
        pending = []
        runs = []
    }

    deinit { discard() }

    /// The runs read back merged, smallest number first (once every run is added).
    func merged() throws(StoreError) -> Merge {
        try flushPending()
        var merge = Merge(fileSystem: fileSystem, path: path, cursors: runs.map { Cursor(next: $0.lowerBound, end: $0.upperBound) })
        try merge.start()
        return merge
    }

    /// One run as it is read: a window of its bytes, and its current line.
    struct Cursor {
        var next: Int
        let end: Int
        var buffer: [UInt8] = []
        var at = 0
        var sequence = 0
        var line: Range<Int> = 0..<0
    }

    /// The lines of all runs in number order.
    struct Merge {
        let fileSystem: any FileSystem
        let path: String
        var cursors: [Cursor]
        /// The cursors that have a current line, as a binary heap by its number.
        var heap: [Int] = []

        mutating func start() throws(StoreError) {
            for index in cursors.indices where try advance(index) { push(index) }
        }

        /// The smallest number of the lines not yet taken, nil when none is left.
        var nextSequence: Int? { heap.first.map { cursors[$0].sequence } }

        /// Takes the line with the smallest number (there must be one): its bytes.
        mutating func take() throws(StoreError) -> [UInt8] {
            let index = heap[0]
            let bytes = Array(cursors[index].buffer[cursors[index].line])
            if try advance(index) {
                siftDown(0)
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
                if !heap.isEmpty { siftDown(0) }
            }
            return bytes
        }

        /// Moves a cursor to its next line; false at the end of its run.
        private mutating func advance(_ index: Int) throws(StoreError) -> Bool {
            guard try ensure(index, 12) else { return false }
            let header = cursors[index].at
            let (sequence, length) = cursors[index].buffer.withUnsafeBytes { raw in
                (
                    Int(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: header, as: UInt64.self))),
                    Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: header + 8, as: UInt32.self)))
                )
            }
            guard try ensure(index, 12 + length) else {
                throw .io(path: path, operation: "read", message: "the file is shorter than what was written to it")
            }
            let start = cursors[index].at + 12
            cursors[index].sequence = sequence
            cursors[index].line = start..<(start + length)
            cursors[index].at = start + length
            return true
        }

        /// Makes `count` bytes from the cursor's position available in its window (reading more
        /// of its run); false when the run has no byte left, an error when it has fewer.
        private mutating func ensure(_ index: Int, _ count: Int) throws(StoreError) -> Bool {
            var cursor = cursors[index]
            let available = cursor.buffer.count - cursor.at
            if available >= count { return true }
            if available == 0, cursor.next >= cursor.end { return false }
            let want = min(max(count - available, 64 << 10), cursor.end - cursor.next)
            guard want > 0, let chunk = try fileSystem.contents(of: path, from: cursor.next, limit: want), chunk.count == want else {
                throw .io(path: path, operation: "read", message: "the file is shorter than what was written to it")
            }
            cursor.buffer = Array(cursor.buffer[cursor.at...]) + chunk
            cursor.at = 0
            cursor.next += want
            cursors[index] = cursor
            guard cursor.buffer.count >= count else {
                throw .io(path: path, operation: "read", message: "the file is shorter than what was written to it")
            }
            return true
        }

        private mutating func push(_ index: Int) {
            heap.append(index)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard cursors[heap[child]].sequence < cursors[heap[parent]].sequence else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        private mutating func siftDown(_ start: Int) {
            var parent = start
            while true {
                var smallest = parent
                for child in [2 * parent + 1, 2 * parent + 2]
                where child < heap.count && cursors[heap[child]].sequence < cursors[heap[smallest]].sequence {
                    smallest = child
                }
                guard smallest != parent else { return }
                heap.swapAt(smallest, parent)
                parent = smallest
            }
        }
    }
}
