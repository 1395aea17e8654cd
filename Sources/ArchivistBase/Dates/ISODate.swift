/// Recognises ISO-8601 dates and timestamps in strings and turns them into instants.
///
/// `2015-07-04` (the whole UTC day), `2015-07-04T00:00:00Z`, `2019-02-15T05:00:00+0000`,
/// `2019-02-15T05:00:00.123+05:30`, `2019-02-15T05:00` (UTC). Parsed by hand: queries test every
/// document's date.
public enum ISODate {
    /// The interval a string stands for, in milliseconds since 1970 (`end` excluded): a whole day
    /// for a date, one millisecond for a timestamp. Nil when the string is not a date.
    public static func interval(of text: String) -> (start: Int64, end: Int64)? {
        var text = text
        return text.withUTF8 { interval(of: $0) }
    }

    /// The instant a date string names (the start of the day for a date-only string).
    public static func instant(of text: String) -> Int64? {
        interval(of: text)?.start
    }

    static func interval(of b: UnsafeBufferPointer<UInt8>) -> (start: Int64, end: Int64)? {
        let n = b.count
        guard n >= 10, n <= 35 else { return nil }
        @inline(__always) func digit(_ i: Int) -> Int64? {
            guard i < n else { return nil }
            let c = b[i]
            return c >= 48 && c <= 57 ? Int64(c - 48) : nil
        }
        @inline(__always) func two(_ i: Int) -> Int64? {
            guard let a = digit(i), let c = digit(i + 1) else { return nil }
            return a * 10 + c
        }
        guard let y1 = two(0), let y2 = two(2), b[4] == UInt8(ascii: "-"), let month = two(5), b[7] == UInt8(ascii: "-"),
            let day = two(8)
        else { return nil }
        let year = y1 * 100 + y2
        guard isValid(year: year, month: month, day: day) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let dayStart = days * 86_400_000
        if n == 10 { return (dayStart, dayStart + 86_400_000) }
        guard b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "), let hour = two(11), n > 13, b[13] == UInt8(ascii: ":"),
            let minute = two(14), hour < 24, minute < 60
        else { return nil }
        var i = 16
        var second: Int64 = 0
        var millis: Int64 = 0
        if i < n, b[i] == UInt8(ascii: ":") {
            guard let s = two(i + 1), s < 61 else { return nil }
            second = s
            i += 3
            if i < n, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
                i += 1
                var scale: Int64 = 100
                let fractionStart = i
                while i < n, let d = digit(i) {
                    millis += d * scale
                    scale /= 10
                    i += 1
                }
                guard i > fractionStart else { return nil }
            }
        }
        var offsetMinutes: Int64 = 0
        if i < n {
            let c = b[i]
            if c == UInt8(ascii: "Z") || c == UInt8(ascii: "z") {
                i += 1
            } else if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                guard let oh = two(i + 1) else { return nil }
                var j = i + 3
                if j < n, b[j] == UInt8(ascii: ":") { j += 1 }
                guard let om = two(j) else { return nil }
                offsetMinutes = (oh * 60 + om) * (c == UInt8(ascii: "-") ? -1 : 1)
                i = j + 2
            } else {
                return nil
            }
        }
        guard i == n else { return nil }
        let start = dayStart + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis
        return (start, start + 1)
    }

    /// Whether a day exists in the proleptic Gregorian calendar (no February 30th).
    public static func isValid(year: Int64, month: Int64, day: Int64) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let lengths: [Int64] = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[Int(month - 1)]
    }

    /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar (Howard Hinnant's
    /// days_from_civil).
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The day of the proleptic Gregorian calendar that is `days` days from 1970-01-01 (Howard
    /// Hinnant's civil_from_days, the inverse of `daysFromCivil`).
    public static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
