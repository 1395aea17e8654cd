/// A fast 64-bit checksum of bytes, eight at a time (FNV-1a's step over 64-bit words, then a
/// finalizer): the checksum of the derived files, which must be verified as fast as they are read.
/// It detects damage (a torn write, a flipped bit, a truncated or foreign file), not tampering.
public enum WordHash {
    /// The checksum of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        let words = bytes.count / 8
        var index = 0
        while index < words {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) &* 0x0000_0100_0000_01b3
            hash ^= hash >> 29
            index += 1
        }
        var rest: UInt64 = 0
        for (shift, position) in ((words * 8)..<bytes.count).enumerated() {
            rest |= UInt64(bytes[position]) << (8 * UInt64(shift))
        }
        hash = (hash ^ rest) &* 0x0000_0100_0000_01b3
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash
    }

    /// The checksum of a byte array.
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }
}
