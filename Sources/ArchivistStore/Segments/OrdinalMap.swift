/// A merge's map of one input's live ordinals to their new ones, in about 1.5 bytes a document
/// instead of an array's 4: a merge keeps each input's ID order, so an input's new ordinals rise
/// with its old ones. They are kept a block of 64 live documents at a time, as the first one's
/// new ordinal and each one's distance from it packed in as few bits as the block's largest
/// distance needs (Lucene's packed ints); an old ordinal's place among the live ones is counted
/// from the live set's words and a count of the members before each word.
struct OrdinalMap {
    /// The live documents of the input: the ones the map has a new ordinal for.
    private let live: OrdinalSet
    /// The live members before each word of `live`.
    private let ranks: [UInt32]
    /// Each block's first new ordinal.
    private var bases: [UInt32] = []
    /// Where each block's distances start in `packed`, in bits.
    private var starts: [Int] = []
    /// The bits of each of a block's distances (0 for a block of one document).
    private var widths: [UInt8] = []
    /// The distances, packed.
    private var packed: [UInt64] = []
    private var bits = 0
    /// The new ordinals of the block being filled.
    private var block: [UInt32] = []
    /// How many new ordinals were appended.
    private var count = 0

    /// The live documents in a block.
    static let blockSize = 64

    /// An empty map of the members of `live`, whose new ordinals `append` then gives in
    /// ascending order of the old.
    init(live: OrdinalSet) {
        self.live = live
        var ranks: [UInt32] = []
        ranks.reserveCapacity(live.words.count)
        var total: UInt32 = 0
        for word in live.words {
            ranks.append(total)
            total += UInt32(word.nonzeroBitCount)
        }
        self.ranks = ranks
        block.reserveCapacity(Self.blockSize)
    }

    /// Appends the new ordinal of the next live member (in ascending order of the old, each
    /// greater than the one before).
    mutating func append(_ ordinal: UInt32) {
        precondition(block.last.map { $0 < ordinal } ?? true, "a merge's new ordinals rise with the old")
        block.append(ordinal)
        count += 1
        if block.count == Self.blockSize { seal() }
    }

    /// Packs the block being filled; `finish` calls it for the last.
    private mutating func seal() {
        guard let base = block.first, let last = block.last else { return }
        let span = last - base
        let width = span == 0 ? 0 : UInt32.bitWidth - span.leadingZeroBitCount
        bases.append(base)
        starts.append(bits)
        widths.append(UInt8(width))
        if width > 0 {
            packed.append(contentsOf: repeatElement(0, count: (bits + block.count * width + 63) / 64 - packed.count))
            for ordinal in block {
                let value = UInt64(ordinal - base)
                packed[bits >> 6] |= value << UInt64(bits & 63)
                if bits & 63 + width > 64 { packed[(bits >> 6) + 1] |= value >> UInt64(64 - bits & 63) }
                bits += width
            }
        }
        block.removeAll(keepingCapacity: true)
    }

    /// Packs what is left; every live member must have its new ordinal by then.
    mutating func finish() {
        seal()
        block = []
        precondition(count == live.count, "a merge's map has a new ordinal for each live document")
    }

    /// The new ordinal of old ordinal `ordinal`, or nil when it is not carried over (not live, or
    /// past the input's end).
    @inline(__always)
    subscript(ordinal: Int) -> UInt32? {
        guard ordinal >= 0, ordinal < live.capacity else { return nil }
        let word = live.words[ordinal >> 6]
        let bit = UInt64(ordinal & 63)
        guard (word >> bit) & 1 == 1 else { return nil }
        let rank = Int(ranks[ordinal >> 6]) + (word & ((1 << bit) &- 1)).nonzeroBitCount
        let number = rank / Self.blockSize
        let width = Int(widths[number])
        guard width > 0 else { return bases[number] }
        let start = starts[number] + (rank % Self.blockSize) * width
        var value = packed[start >> 6] >> UInt64(start & 63)
        if start & 63 + width > 64 { value |= packed[(start >> 6) + 1] << UInt64(64 - start & 63) }
        return bases[number] + UInt32(truncatingIfNeeded: value & ((1 << UInt64(width)) - 1))
    }

    /// The bytes it holds, about: what a merge keeps per document of its inputs.
    var heldBytes: Int {
        live.words.count * 8 + ranks.count * 4 + bases.count * 4 + starts.count * 8 + widths.count + packed.count * 8
    }
}
