/// A blocked Bloom filter of a segment's IDs (its `idFilter` section): whether an ID may be in
/// the segment, answered from one 64-byte block (one cache line), so that looking an ID up in
/// many segments costs a memory read per segment and a binary search only where it may be.
///
/// About 10 bits per ID and 7 bits set per ID within its block: some 1 to 2% of the IDs not in
/// a segment pass (`docs/FORMAT.md`, "segments").
enum IDFilter {
    /// Bytes per block.
    static let blockBytes = 64
    /// Bits per ID, about.
    static let bitsPerID = 10
    /// Bits set per ID.
    static let probes = 7

    /// The hash of an ID's bytes the filter uses.
    static func hash(_ id: UnsafeRawBufferPointer) -> UInt64 {
        WordHash.hash(id)
    }

    /// The filter's bytes for IDs with these hashes.
    static func build(_ hashes: [UInt64]) -> [UInt8] {
        var builder = Builder(count: hashes.count)
        for hash in hashes { builder.insert(hash) }
        return builder.bytes
    }

    /// A filter filled one ID at a time, sized for `count` IDs.
    struct Builder {
        private var words: [UInt64]
        private let blocks: Int

        init(count: Int) {
            blocks = max(1, (count * IDFilter.bitsPerID + IDFilter.blockBytes * 8 - 1) / (IDFilter.blockBytes * 8))
            words = [UInt64](repeating: 0, count: blocks * IDFilter.blockBytes / 8)
        }

        /// Adds the ID with this hash.
        mutating func insert(_ hash: UInt64) {
            let block = IDFilter.block(hash, blocks: blocks)
            var mixed = IDFilter.bits(hash)
            for _ in 0..<IDFilter.probes {
                let bit = Int(mixed & 511)
                words[block * 8 + bit >> 6] |= 1 << UInt64(bit & 63)
                mixed >>= 9
            }
        }

        /// The filter's bytes.
        var bytes: [UInt8] {
            var writer = BinaryWriter(capacity: words.count * 8)
            for word in words { writer.append(word) }
            return writer.bytes
        }
    }

    /// Whether an ID with this hash may be among those the filter was built of (false: it is not).
    static func mayContain(_ hash: UInt64, in filter: UnsafeRawBufferPointer) -> Bool {
        guard let offset = blockOffset(hash, filterBytes: filter.count) else { return true }
        return mayContain(hash, inBlock: UnsafeRawBufferPointer(rebasing: filter[offset..<(offset + blockBytes)]))
    }

    /// Where in a filter of `filterBytes` bytes the block an ID with this hash sets its bits in
    /// starts, nil for a filter of no block: a reader reads (and checks) those 64 bytes alone.
    static func blockOffset(_ hash: UInt64, filterBytes: Int) -> Int? {
        let blocks = filterBytes / blockBytes
        guard blocks > 0 else { return nil }
        return block(hash, blocks: blocks) * blockBytes
    }

    /// Whether an ID with this hash may be among those the filter was built of, given the one
    /// block of it at `blockOffset(_:filterBytes:)` (`blockBytes` bytes).
    static func mayContain(_ hash: UInt64, inBlock block: UnsafeRawBufferPointer) -> Bool {
        var mixed = bits(hash)
        for _ in 0..<probes {
            let bit = Int(mixed & 511)
            let word = block.loadUnaligned(fromByteOffset: (bit >> 6) * 8, as: UInt64.self)
            if word & (1 << UInt64(bit & 63)) == 0 { return false }
            mixed >>= 9
        }
        return true
    }

    /// The block a hash sets its bits in.
    @inline(__always)
    fileprivate static func block(_ hash: UInt64, blocks: Int) -> Int {
        Int(((hash >> 32) &* UInt64(blocks)) >> 32)
    }

    /// Seven 9-bit positions within the block, lowest first.
    @inline(__always)
    fileprivate static func bits(_ hash: UInt64) -> UInt64 {
        var mixed = hash &* 0x9E37_79B9_7F4A_7C15
        mixed ^= mixed >> 29
        return mixed
    }
}
