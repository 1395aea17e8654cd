import Foundation

/// Byte-wise comparison of strings' UTF-8 (Swift's `String` equality and order follow canonical
/// equivalence, which would merge a precomposed and a decomposed "é"): one `memcmp` over the
/// strings' own storage, where the generic `elementsEqual` and `lexicographicallyPrecedes` of
/// `String.UTF8View` step a byte at a time.
public enum UTF8Bytes {
    /// Whether `a` and `b` hold the same bytes.
    @inlinable @inline(__always)
    public static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && compare(a, b) == 0
    }

    /// Whether `a`'s bytes sort before `b`'s (byte order, a prefix first).
    @inlinable @inline(__always)
    public static func precedes(_ a: String, _ b: String) -> Bool {
        compare(a, b) < 0
    }

    /// Negative, zero or positive as `a`'s bytes sort before, equal to or after `b`'s.
    @inlinable
    public static func compare(_ a: String, _ b: String) -> Int {
        let result = a.utf8.withContiguousStorageIfAvailable { first in
            b.utf8.withContiguousStorageIfAvailable { second in compare(first, second) }
        }
        if let result, let result { return result }
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
    }

    /// Negative, zero or positive as `a` sorts before, equal to or after `b` (byte order).
    @inlinable @inline(__always)
    public static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }

    /// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or code points past
    /// U+10FFFF), as `String(validating:as:)` decides, without its generic path.
    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        @inline(__always) func continuation(_ at: Int) -> Bool { bytes[at] & 0xC0 == 0x80 }
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
            } else if lead < 0xC2 {
                return false
            } else if lead < 0xE0 {
                guard index + 1 < count, continuation(index + 1) else { return false }
                index += 2
            } else if lead < 0xF0 {
                guard index + 2 < count, continuation(index + 2) else { return false }
                let second = bytes[index + 1]
                switch lead {
                case 0xE0: guard second >= 0xA0, second <= 0xBF else { return false }
                case 0xED: guard second >= 0x80, second <= 0x9F else { return false }
                default: guard continuation(index + 1) else { return false }
                }
                index += 3
            } else if lead < 0xF5 {
                guard index + 3 < count, continuation(index + 2), continuation(index + 3) else { return false }
                let second = bytes[index + 1]
                switch lead {
                case 0xF0: guard second >= 0x90, second <= 0xBF else { return false }
                case 0xF4: guard second >= 0x80, second <= 0x8F else { return false }
                default: guard continuation(index + 1) else { return false }
                }
                index += 4
            } else {
                return false
            }
        }
        return true
    }

    /// The string of well-formed UTF-8 `bytes`, or nil when they are not.
    @inlinable @inline(__always)
    public static func string(validating bytes: UnsafeBufferPointer<UInt8>) -> String? {
        isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }
}
