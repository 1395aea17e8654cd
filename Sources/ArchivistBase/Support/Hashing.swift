/// FNV-1a, 64-bit: the content hash of documents and the hash that picks a document's bucket.
///
/// Not cryptographic; a matching hash and size are confirmed by comparing bytes before a
/// document is called unchanged.
public enum FNV1a64 {
    @usableFromInline static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    @usableFromInline static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The hash of `bytes` (inlinable, so that the engine's calls are specialized for their
    /// sequences).
    @inlinable
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash = offsetBasis
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* prime
        }
        return hash
    }

    /// The hash of a byte array (a fast path over contiguous storage).
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            var hash = offsetBasis
            for byte in buffer {
                hash = (hash ^ UInt64(byte)) &* prime
            }
            return hash
        }
    }

    /// The hash as 16 lowercase hex digits.
    public static func hex(_ hash: UInt64) -> String {
        Hex.digits(hash, width: 16)
    }
}
