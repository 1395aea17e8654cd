import ArchivistBase
import Foundation
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A buffered writer to a file descriptor (stdout, stderr) or to memory, for tests and the REPL.
public final class TextSink: Sendable {
    /// What the lock guards.
    private struct State {
        /// Bytes not yet written to the descriptor.
        var buffer: [UInt8] = []
        /// Whether a write to the descriptor failed.
        var hasFailed = false
        /// The C library's message for the first failed write.
        var failure: String?
        /// Everything written, when the sink writes to memory.
        var captured: [UInt8] = []
        /// Whether writes are held in the buffer until `stopHolding` (a command's output that may
        /// go to a pager).
        var isHolding = false
    }

    private let descriptor: Int32?
    private let state = Mutex(State())

    /// A sink that writes to a file descriptor.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A sink that keeps what is written in `captured`.
    public init() {
        self.descriptor = nil
    }

    /// Whether a write to the descriptor failed (a full disk, a closed pipe).
    public var hasFailed: Bool { state.withLock { $0.hasFailed } }

    /// Why a write to the descriptor failed (`no space left on device`), nil when none did.
    public var failure: String? { state.withLock { $0.failure } }

    /// Everything written, when this sink writes to memory.
    public var captured: [UInt8] { state.withLock { $0.captured } }

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
        state.withLock { state in
            if descriptor == nil {
                state.captured.append(contentsOf: bytes)
                return
            }
            state.buffer.append(contentsOf: bytes)
            if state.buffer.count >= 1 << 16, !state.isHolding { flush(&state) }
        }
    }

    /// Holds what is written from now on, unwritten, until `stopHolding` (what was buffered
    /// before is written first).
    public func startHolding() {
        state.withLock { state in
            flush(&state)
            state.isHolding = true
        }
    }

    /// Stops holding and returns what was held (the caller writes it, here or to a pager).
    public func stopHolding() -> [UInt8] {
        state.withLock { state in
            state.isHolding = false
            defer { state.buffer.removeAll(keepingCapacity: true) }
            return state.buffer
        }
    }

    /// Drops what is buffered, unwritten (the descriptor is about to be closed and its file
    /// abandoned).
    public func discard() {
        state.withLock { $0.buffer.removeAll() }
    }

    /// Writes out what is buffered.
    public func flush() {
        state.withLock { flush(&$0) }
    }

    /// Writes the buffer to the descriptor (the lock held), retrying interrupted writes.
    private func flush(_ state: inout State) {
        guard let descriptor, !state.buffer.isEmpty, !state.isHolding else { return }
        var offset = 0
        while offset < state.buffer.count {
            let n = state.buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                state.hasFailed = true
                if state.failure == nil { state.failure = systemErrorMessage() }
                break
            }
            offset += n
        }
        state.buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
