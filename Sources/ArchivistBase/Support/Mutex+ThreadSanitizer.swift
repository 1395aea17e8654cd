#if ARCHIVIST_TSAN
import Synchronization

// Only in `scripts/sanitize thread` (Package.swift defines ARCHIVIST_TSAN there); other builds
// call Synchronization's `withLock` directly and compile none of this.
//
// ThreadSanitizer does not see Synchronization's `Mutex` on Linux: its lock is a futex in the
// uninstrumented Swift runtime, so two threads that take turns in `withLock` are reported as
// racing (four threads appending 20,000 elements each to a `Mutex<[Int]>`: 7 reports, and all
// 80,000 elements at the end; none with this). This `withLock` is chosen over Synchronization's in
// every module that imports ArchivistBase, being the more specific (a copyable value and result,
// which every lock here has), and tells ThreadSanitizer about the lock: it acquires the mutex's
// address once the lock is held and releases it before the lock is given up.

@_silgen_name("__tsan_acquire") private func threadSanitizerAcquire(_ address: UnsafeRawPointer)
@_silgen_name("__tsan_release") private func threadSanitizerRelease(_ address: UnsafeRawPointer)

extension Mutex {
    /// Synchronization's `withLock`, with the lock made visible to ThreadSanitizer.
    public borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let address = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
        return try self.Synchronization::withLock { (value: inout sending Value) throws(E) -> sending Result in
            threadSanitizerAcquire(address)
            defer { threadSanitizerRelease(address) }
            return try body(&value)
        }
    }
}
#endif
