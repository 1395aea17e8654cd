/// Fast 64-bit checksums of bytes, eight at a time (FNV-1a's step over 64-bit words, then a
/// finalizer): the checksums of the derived files, which must be verified as fast as they are
/// read. They detect damage (a torn write, a flipped bit, a truncated or foreign file), not
/// tampering.
///
/// `hash` is one chain of steps, each waiting for the last (about 3.4 GB/s here); `striped` runs
/// four chains over the four words of each 32 bytes, which a processor computes side by side
/// (about 12 GB/s), and joins them at the end. Snapshot layouts 1 and 2 use `hash`, layout 3
/// `striped`.
public enum WordHash {
    private static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The checksum of `bytes`, one word after another.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        finish(0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count), bytes, from: 0)
    }

    /// Steps `hash` over the whole words of `bytes` from `start`, then over the bytes left as one
    /// word, and finalizes it.
    @inline(__always)
    private static func finish(_ hash: UInt64, _ bytes: UnsafeRawBufferPointer, from start: Int) -> UInt64 {
        var hash = hash
        var at = start
        while at + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) &* prime
            hash ^= hash >> 29
            at += 8
        }
        var rest: UInt64 = 0
        for (shift, position) in (at..<bytes.count).enumerated() {
            rest |= UInt64(bytes[position]) << (8 * UInt64(shift))
        }
        hash = (hash ^ rest) &* prime
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash
    }

    /// The checksum of a byte array, one word after another.
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// The checksum of `bytes` in four lanes: word `4k + j` of each 32 bytes goes to lane `j`
    /// (FNV-1a's step then `x ^= x >> 29`, as in `hash`); the lanes are then joined, each mixed
    /// by MurmurHash3's finalizer before the next is added, followed by the words and bytes after
    /// the last whole 32 (as in `hash`) and `hash`'s finalizer.
    public static func striped(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        var b: UInt64 = 0x9e37_79b9_7f4a_7c15
        var c: UInt64 = 0xc2b2_ae3d_27d4_eb4f
        var d: UInt64 = 0x1656_67b1_9e37_79f9
        let stripes = bytes.count / 32
        var index = 0
        while index < stripes {
            let at = index * 32
            a = (a ^ bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) &* prime
            b = (b ^ bytes.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)) &* prime
            c = (c ^ bytes.loadUnaligned(fromByteOffset: at + 16, as: UInt64.self)) &* prime
            d = (d ^ bytes.loadUnaligned(fromByteOffset: at + 24, as: UInt64.self)) &* prime
            a ^= a >> 29
            b ^= b >> 29
            c ^= c >> 29
            d ^= d >> 29
            index += 1
        }
        // Each lane is mixed before the next is added: folded by a plain step, the same bit of
        // two lanes would cancel out.
        return finish(mix(mix(mix(mix(a) ^ b) ^ c) ^ d), bytes, from: stripes * 32)
    }

    /// MurmurHash3's 64-bit finalizer: every input bit changes about half the output bits.
    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var value = value
        value ^= value >> 33
        value &*= 0xff51_afd7_ed55_8ccd
        value ^= value >> 33
        value &*= 0xc4ce_b9fe_1a85_ec53
        value ^= value >> 33
        return value
    }

    /// The striped checksum of a byte array.
    public static func striped(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { striped($0) }
    }

    /// The checksum a snapshot of `layout` uses: `hash` in layouts 1 and 2, `striped` after.
    static func checksum(layout: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        layout <= 2 ? hash(bytes) : striped(bytes)
    }
}
