/// Hexadecimal digits: the one parser and formatter of the store (hashes in index lines, `%XX`
/// escapes in file names, bucket names).
public enum Hex {
    /// The value of one hex digit (either case), or nil.
    @inlinable @inline(__always)
    public static func digit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: return byte - 48
        case 97...102: return byte - 87
        case 65...70: return byte - 55
        default: return nil
        }
    }

    /// The value of 1 to 16 hex digits (either case); nil for anything else.
    @inlinable
    public static func value<Bytes: Collection>(_ bytes: Bytes) -> UInt64? where Bytes.Element == UInt8 {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard let digit = digit(byte) else { return nil }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// The value of a string of 1 to 16 hex digits; nil for anything else.
    public static func value(_ text: String) -> UInt64? { value(Array(text.utf8)) }

    /// `value` as exactly `width` lowercase digits (zero-padded; `width` at most 16).
    public static func digits(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
