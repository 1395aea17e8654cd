import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits, without using the processor, until a data folder's files may have changed: inotify on
/// the folder on Linux (an append to `index.jsonl` or a rename into the folder wakes it at once),
/// else a poll every 100 ms. `cancel()` wakes a waiter from any thread.
public final class LogWatcher: Sendable {
    /// Why a wait ended.
    public enum Outcome: Sendable, Equatable {
        /// The folder may have changed.
        case changed
        /// The time given passed.
        case timedOut
        /// `cancel()` was called.
        case cancelled
        /// The extra descriptor watched was closed at its other end (stdout's reader went away).
        case hungUp
        /// A signal interrupted the wait (Ctrl-C).
        case interrupted
    }

    private let inotify: Int32
    private let wake: (read: Int32, write: Int32)
    private let cancelled = Atomic<Bool>(false)

    /// A watcher of `folder`.
    public init(folder: String) {
        var descriptor: Int32 = -1
        #if os(Linux)
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if descriptor >= 0 {
            let mask = UInt32(IN_MODIFY | IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE)
            if inotify_add_watch(descriptor, folder, mask) < 0 {
                close(descriptor)
                descriptor = -1
            }
        }
        #endif
        inotify = descriptor
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        if inotify >= 0 { close(inotify) }
        if wake.read >= 0 { close(wake.read) }
        if wake.write >= 0 { close(wake.write) }
    }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Whether changes are noticed at once (inotify) rather than by polling.
    public var isImmediate: Bool { inotify >= 0 }

    /// Waits at most `timeout` seconds (nil: without end) for a change, `cancel()`, or (when given)
    /// the other end of `descriptor` closing.
    public func wait(timeout: Double?, hangUpOf descriptor: Int32? = nil) -> Outcome {
        if cancelled.load(ordering: .acquiring) { return .cancelled }
        var fds: [pollfd] = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        if inotify >= 0 { fds.append(pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)) }
        if let descriptor { fds.append(pollfd(fd: descriptor, events: 0, revents: 0)) }
        // Without inotify, a change is looked for every 100 ms.
        let pollInterval = inotify >= 0 ? nil : 0.1
        let limit = [timeout, pollInterval].compactMap { $0 }.min()
        let milliseconds = limit.map { Int32(min(max($0 * 1000, 0), Double(Int32.max))) } ?? -1
        let result = poll(&fds, nfds_t(fds.count), milliseconds)
        if result < 0 { return errno == EINTR ? .interrupted : .changed }
        if cancelled.load(ordering: .acquiring) { return .cancelled }
        if let descriptor, let last = fds.last, last.fd == descriptor, last.revents & Int16(POLLERR | POLLHUP) != 0 {
            return .hungUp
        }
        if inotify >= 0, fds[1].revents & Int16(POLLIN) != 0 {
            drain(inotify)
            return .changed
        }
        if result == 0 { return pollInterval != nil && limit == pollInterval ? .changed : .timedOut }
        return .changed
    }

    /// Wakes every wait, now and later.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    private func drain(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }
}
