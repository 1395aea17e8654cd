/// A file's bytes, read or mapped; valid while this object lives.
public final class FileBytes: @unchecked Sendable {
    /// The bytes.
    public let buffer: UnsafeBufferPointer<UInt8>
    private let release: () -> Void

    /// Bytes whose storage `release` frees.
    public init(buffer: UnsafeBufferPointer<UInt8>, release: @escaping () -> Void) {
        self.buffer = buffer
        self.release = release
    }

    /// Copies of bytes.
    public convenience init(_ bytes: [UInt8]) {
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        _ = storage.initialize(from: bytes)
        self.init(buffer: UnsafeBufferPointer(rebasing: storage[0..<bytes.count])) { storage.deallocate() }
    }

    deinit { release() }
}
