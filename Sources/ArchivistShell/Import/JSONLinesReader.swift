import ArchivistStore

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Reads JSON Lines from a file descriptor a chunk at a time, so an import of any size holds only
/// one batch in memory.
public final class JSONLinesReader {
    private let descriptor: Int32
    private var pending: [UInt8]
    private var lineNumber = 1
    private var atEnd = false
    private var isFirstLine = true
    /// The longest line read: a longer one stops the reading with ``readError``.
    static let maximumLineBytes = DocumentStore.maximumDocumentBytes

    /// The error that stopped reading, if any.
    public private(set) var readError: String?

    /// A reader of `descriptor` that first serves `prefix`, bytes already read from it.
    public init(descriptor: Int32, prefix: [UInt8]) {
        self.descriptor = descriptor
        self.pending = prefix
    }

    /// A reader of bytes already in memory.
    public init(bytes: [UInt8]) {
        self.descriptor = -1
        self.pending = bytes
        self.atEnd = true
    }

    /// The next items (at most `maxCount` lines that are not blank), or nil at the end.
    public func nextItems(maxCount: Int) -> [ImportReader.Item]? {
        var ranges: [Range<Int>] = []
        var numbers: [Int] = []
        var lineStart = 0
        var scanned = 0
        while ranges.count < maxCount {
            // Find the next newline in what is pending, reading more when there is none.
            var newline: Int?
            var tooLong = false
            while newline == nil {
                if let found = Self.firstNewline(in: pending, from: scanned) {
                    newline = found
                } else {
                    scanned = pending.count
                    if pending.count - lineStart > Self.maximumLineBytes {
                        // No document is this long (`/dev/zero` is not JSON Lines): stop, bounded.
                        readError = "line \(lineNumber) is longer than \(Self.maximumLineBytes >> 20) MiB, the largest document"
                        pending.removeSubrange(lineStart...)
                        atEnd = true
                        tooLong = true
                        break
                    }
                    if atEnd || !fill() { break }
                }
            }
            if tooLong { break }
            let end = newline ?? pending.count
            if newline == nil && lineStart == end { break }
            var range = lineStart..<end
            if isFirstLine, pending[range].starts(with: [0xEF, 0xBB, 0xBF]) { range = (range.lowerBound + 3)..<end }
            isFirstLine = false
            if !pending[range].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                ranges.append(range)
                numbers.append(lineNumber)
            }
            lineNumber += 1
            lineStart = min(end + 1, pending.count)
            scanned = lineStart
            if newline == nil { break }
        }
        if ranges.isEmpty && lineStart >= pending.count && atEnd {
            pending.removeAll()
            return nil
        }
        let items = pending.withUnsafeBufferPointer { ImportReader.parseLines($0, ranges: ranges, numbers: numbers) }
        pending.removeSubrange(0..<lineStart)
        return items
    }

    /// Where the first newline at or after `start` is in `bytes` (memchr: fast in any build).
    static func firstNewline(in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBytes { buffer in
            memchr(buffer.baseAddress! + start, 0x0A, buffer.count - start).map { UnsafeRawPointer($0) - buffer.baseAddress! }
        }
    }

    /// Reads up to 4 MiB more; false at the end of input (or on a read error).
    private func fill() -> Bool {
        let n = Self.read(descriptor, upTo: 4 << 20, appendingTo: &pending)
        if n < 0 { readError = systemErrorMessage() }
        if n <= 0 {
            atEnd = true
            return false
        }
        return true
    }

    /// One read(2) of at most `count` bytes appended to `bytes`; returns what read(2) returned.
    /// The read goes to uninitialized scratch space, so a pipe's small reads cost only their size.
    static func read(_ descriptor: Int32, upTo count: Int, appendingTo bytes: inout [UInt8]) -> Int {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer -> Int in
            var n: Int
            repeat {
                n = Glibc.read(descriptor, buffer.baseAddress!, count)
            } while n < 0 && errno == EINTR
            if n > 0 { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<n])) }
            return n
        }
    }
}
