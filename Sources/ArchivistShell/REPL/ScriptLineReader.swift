#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Reads a script's lines from a file descriptor a chunk at a time, as `Swift.readLine` does
/// (`\n` or `\r\n` ends a line, invalid UTF-8 is repaired) but with a bound: a line longer than
/// ``maximumBytes`` is not held; it reads as ``Line/tooLong`` and is skipped to its end.
final class ScriptLineReader {
    /// What one read gives.
    enum Line: Equatable {
        /// A line, without its line break.
        case text(String)
        /// A line longer than the maximum, skipped.
        case tooLong
    }

    /// The longest line held, in bytes (the same bound as a command's).
    let maximumBytes: Int
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0
    private var atEnd = false

    /// A reader of `descriptor` (standard input by default).
    init(descriptor: Int32 = STDIN_FILENO, maximumBytes: Int = PendingCommand.maximumBytes) {
        self.descriptor = descriptor
        self.maximumBytes = maximumBytes
    }

    /// The next line, or nil at the end of the input (or a read error).
    func next() -> Line? {
        var scanned = start
        var skipping = false
        while true {
            if let newline = firstNewline(from: scanned) {
                defer { start = newline + 1 }
                if skipping || newline - start > maximumBytes { return .tooLong }
                var end = newline
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                return .text(String(decoding: buffer[start..<end], as: UTF8.self))
            }
            if buffer.count - start > maximumBytes {
                // Too long already: drop what is held and look for the line's end.
                skipping = true
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            scanned = buffer.count
            guard !atEnd, fill() else {
                atEnd = true
                if skipping || buffer.count - start > maximumBytes { return .tooLong }
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return .text(String(decoding: buffer[start...], as: UTF8.self))
            }
        }
    }

    /// Where the first newline at or after `index` is in the buffer.
    private func firstNewline(from index: Int) -> Int? {
        guard index < buffer.count else { return nil }
        return buffer.withUnsafeBytes { bytes in
            memchr(bytes.baseAddress! + index, 0x0A, bytes.count - index).map { UnsafeRawPointer($0) - bytes.baseAddress! }
        }
    }

    /// Reads the next chunk; false at the end of the input.
    private func fill() -> Bool {
        var count = 0
        repeat {
            count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        } while count < 0 && errno == EINTR
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }
}
