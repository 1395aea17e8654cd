import ArchivistBase
import Foundation

/// A day of the proleptic Gregorian calendar in UTC, as the API's `begin_date`/`end_date` mean it.
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let dayNumber: Int

    /// The day `dayNumber` days after 1970-01-01.
    public init(dayNumber: Int) {
        self.dayNumber = dayNumber
    }

    /// The day of a date, in UTC.
    public init(_ date: Date) {
        dayNumber = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// Reads `YYYY-MM-DD` (the form users type) or `YYYYMMDD` (the API's); nil for anything else,
    /// including days that do not exist (`2023-02-29`).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        let digits: [UInt8]
        if bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") {
            digits = Array(bytes[0..<4] + bytes[5..<7] + bytes[8..<10])
        } else if bytes.count == 8 {
            digits = bytes
        } else {
            return nil
        }
        guard digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + Int($1 - 48) } }
        let year = number(0..<4), month = number(4..<6), day = number(6..<8)
        guard ISODate.isValid(year: Int64(year), month: Int64(month), day: Int64(day)) else { return nil }
        dayNumber = Int(ISODate.daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    /// Today in UTC.
    public static var today: CalendarDay { CalendarDay(Date()) }

    /// Year, month (1–12) and day (1–31).
    public var components: (year: Int, month: Int, day: Int) {
        let (year, month, day) = ISODate.civilFromDays(Int64(dayNumber))
        return (Int(year), Int(month), Int(day))
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        let (year, month, day) = components
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// `YYYYMMDD`, as the API takes it.
    public var compact: String {
        let (year, month, day) = components
        return pad(year, 4) + pad(month, 2) + pad(day, 2)
    }

    /// Midnight UTC at the start of the day.
    public var start: Date { Date(timeIntervalSince1970: Double(dayNumber) * 86_400) }

    /// The day `days` days later (earlier when negative).
    public func adding(days: Int) -> CalendarDay { CalendarDay(dayNumber: dayNumber + days) }

    /// Whether `a` is an earlier day than `b`.
    public static func < (a: CalendarDay, b: CalendarDay) -> Bool { a.dayNumber < b.dayNumber }

    private func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
