import Foundation

/// Milliseconds since 1970 in UTC, written in the index as `2026-11-29T19:25:56.123Z`.
///
/// The fixed format is formatted and parsed by hand: the index holds two per document and is read
/// at every open.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    /// Wraps a count of milliseconds.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// The instant of a `Date`, to the millisecond (rounded down).
    public init(_ date: Date) {
        self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The current time.
    public static func now() -> Timestamp {
        Timestamp(Date())
    }

    /// `time`, or one millisecond after `earlier` when `time` is not after it (an update's time,
    /// which must be after the first-stored time however fast the update comes).
    public static func later(_ time: Timestamp, than earlier: Timestamp) -> Timestamp {
        time > earlier ? time : Timestamp(milliseconds: earlier.milliseconds + 1)
    }

    /// The instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// Orders by time.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public var description: String {
        let ms = milliseconds
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let msOfDay = ms - days * 86_400_000
        let (year, month, day) = ISODate.civilFromDays(days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        let h = msOfDay / 3_600_000, m = msOfDay / 60_000 % 60, s = msOfDay / 1000 % 60, f = msOfDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(f, 3))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS(.fff)Z`; nil for anything else.
    public init?(parsing text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Timestamp(bytes: $0) }) else { return nil }
        self = parsed
    }

    /// Parses the same form from bytes (the index loader calls this on each line).
    package init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                let b = bytes[i]
                guard b >= 48, b <= 57 else { return nil }
                value = value * 10 + Int64(b - 48)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            ISODate.isValid(year: year, month: month, day: day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction: Int64 = 0
        if bytes.count > 20 {
            // Milliseconds from the first three digits; any further digits are checked and
            // dropped (a long fraction once overflowed here: found by `scripts/fuzz index-line`).
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            for i in 20..<(bytes.count - 1) where bytes[i] < 48 || bytes[i] > 57 { return nil }
            for i in 20..<23 { fraction = fraction * 10 + (i < bytes.count - 1 ? Int64(bytes[i] - 48) : 0) }
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = ISODate.daysFromCivil(year: year, month: month, day: day)
        milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + fraction
    }
}
