/// Sebastiano Vigna's SplitMix64: a tiny, fast random generator that gives the same numbers on
/// every platform, so a seed names one generated data set, query or fault.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The state: advanced by a constant at each draw.
    public var state: UInt64

    /// A generator starting from a state (the seed).
    public init(state: UInt64) { self.state = state }

    /// The finalizer alone: a bijection of `UInt64`.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SplitMix64.mix(state)
    }

    /// A number in `0..<bound` (bound > 0), by Lemire's multiply-shift (the tiny bias is irrelevant here).
    public mutating func below(_ bound: UInt64) -> UInt64 {
        next().multipliedFullWidth(by: bound).high
    }
}
