#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's bytes, read or mapped; valid while this object lives.
public final class FileBytes: @unchecked Sendable {
    /// The bytes.
    public let buffer: UnsafeBufferPointer<UInt8>
    private let release: () -> Void
    /// Whether the bytes are a mapping of the file (mmap), whose pages the kernel can drop.
    public let isMapped: Bool

    /// Bytes whose storage `release` frees; `isMapped` when they are a read-only mapping.
    public init(buffer: UnsafeBufferPointer<UInt8>, isMapped: Bool = false, release: @escaping () -> Void) {
        self.buffer = buffer
        self.isMapped = isMapped
        self.release = release
    }

    /// Lets the pages of a mapping go from this process (madvise `MADV_DONTNEED`): they stay in
    /// the page cache, and a later read maps them again. A merge that streams through large
    /// segments calls it as it goes, so that what it has read does not stay counted in its memory.
    public func dropResidentPages() {
        guard isMapped, let base = buffer.baseAddress, buffer.count > 0 else { return }
        // Whole pages only: the mapping starts on a page.
        _ = madvise(UnsafeMutableRawPointer(mutating: base), buffer.count, MADV_DONTNEED)
    }

    /// Copies of bytes.
    public convenience init(_ bytes: [UInt8]) {
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        _ = storage.initialize(from: bytes)
        self.init(buffer: UnsafeBufferPointer(rebasing: storage[0..<bytes.count])) { storage.deallocate() }
    }

    deinit { release() }
}
