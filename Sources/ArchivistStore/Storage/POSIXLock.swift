#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A held flock.
final class POSIXLock: FileLockToken, @unchecked Sendable {
    private var fd: Int32
    private let guardLock = NSLock()

    init(fd: Int32) { self.fd = fd }

    func release() {
        guardLock.lock()
        defer { guardLock.unlock() }
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}
