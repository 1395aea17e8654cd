/// A set of ordinals `0 ..< capacity` as a bitset: what a query over a snapshot computes, combined
/// with `and`, `or` and `not` a word at a time.
struct OrdinalSet: Equatable {
    private(set) var words: [UInt64]
    /// The ordinals it may hold: `0 ..< capacity`.
    let capacity: Int

    /// An empty set, or (with `full`) every ordinal below `capacity`.
    init(capacity: Int, full: Bool = false) {
        self.capacity = capacity
        words = [UInt64](repeating: full ? ~0 : 0, count: (capacity + 63) / 64)
        if full { clearTail() }
    }

    private mutating func clearTail() {
        let extra = words.count * 64 - capacity
        if extra > 0, !words.isEmpty { words[words.count - 1] &= ~0 >> UInt64(extra) }
    }

    @inline(__always)
    mutating func insert(_ ordinal: Int) {
        words[ordinal >> 6] |= 1 << UInt64(ordinal & 63)
    }

    @inline(__always)
    mutating func remove(_ ordinal: Int) {
        words[ordinal >> 6] &= ~(1 << UInt64(ordinal & 63))
    }

    @inline(__always)
    func contains(_ ordinal: Int) -> Bool {
        words[ordinal >> 6] & (1 << UInt64(ordinal & 63)) != 0
    }

    /// How many ordinals it holds.
    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// How many of `ordinals` it holds (each counted as often as it is listed; ordinals at or
    /// past `capacity` are not held). A tight loop: a million ordinals take about a millisecond.
    func count(of ordinals: UnsafeBufferPointer<UInt32>) -> Int {
        words.withUnsafeBufferPointer { words in
            var total = 0
            let limit = UInt32(clamping: capacity)
            for ordinal in ordinals where ordinal < limit {
                total &+= Int(truncatingIfNeeded: (words[Int(ordinal >> 6)] >> UInt64(ordinal & 63)) & 1)
            }
            return total
        }
    }

    /// Keeps the ordinals `other` holds too.
    mutating func formIntersection(_ other: OrdinalSet) {
        for index in words.indices { words[index] &= other.words[index] }
    }

    /// Adds the ordinals `other` holds.
    mutating func formUnion(_ other: OrdinalSet) {
        for index in words.indices { words[index] |= other.words[index] }
    }

    /// Removes the ordinals `other` holds.
    mutating func subtract(_ other: OrdinalSet) {
        for index in words.indices { words[index] &= ~other.words[index] }
    }

    /// Calls `body` with each ordinal, ascending, until it returns false.
    func forEach(_ body: (Int) -> Bool) {
        for (index, word) in words.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                let bit = bits.trailingZeroBitCount
                if !body(index << 6 | bit) { return }
                bits &= bits - 1
            }
        }
    }

    /// The ordinals, ascending.
    var ordinals: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        forEach {
            result.append($0); return true
        }
        return result
    }
}
