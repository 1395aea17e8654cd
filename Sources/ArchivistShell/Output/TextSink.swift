#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// A buffered writer to a file descriptor (stdout, stderr) or to memory, for tests and the REPL.
public final class TextSink: @unchecked Sendable {
    private let descriptor: Int32?
    private var buffer: [UInt8] = []
    private let lock = NSLock()
    /// Whether a write to the descriptor failed (a full disk, a closed pipe).
    public private(set) var hasFailed = false
    /// Everything written, when this sink writes to memory.
    public private(set) var captured: [UInt8] = []

    /// A sink that writes to a file descriptor.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A sink that keeps what is written in `captured`.
    public init() {
        self.descriptor = nil
    }

    /// Whether the descriptor is a terminal.
    public var isTerminal: Bool {
        guard let descriptor else { return false }
        return isatty(descriptor) == 1
    }

    /// The captured text.
    public var capturedText: String { String(decoding: captured, as: UTF8.self) }

    /// Writes text.
    public func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    /// Writes a line of text followed by a newline.
    public func line(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        write(bytes: bytes)
    }

    /// Writes bytes.
    public func write(bytes: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        if descriptor == nil {
            captured.append(contentsOf: bytes)
            return
        }
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flushLocked() }
    }

    /// Writes out what is buffered.
    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        flushLocked()
    }

    private func flushLocked() {
        guard let descriptor, !buffer.isEmpty else { return }
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, buffer.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                hasFailed = true
                break
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flushLocked() }
}
