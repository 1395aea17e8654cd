import Foundation

/// A month of the Archive API: a year and a month (1–12), read and written as `YYYY-MM`.
public struct ArchiveMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The first month of the archive: the first issue came out on 1851-09-18.
    public static let first = ArchiveMonth(uncheckedYear: 1851, month: 9)

    /// The year (1851 on).
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int

    private init(uncheckedYear year: Int, month: Int) {
        self.year = year
        self.month = month
    }

    /// The month of `year` and `month`; nil when the month is not 1–12 or the year is outside
    /// 1000–9999.
    public init?(year: Int, month: Int) {
        guard (1000...9999).contains(year), (1...12).contains(month) else { return nil }
        self.init(uncheckedYear: year, month: month)
    }

    /// Reads `YYYY-MM` (four digits, a dash, two digits); nil for anything else.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[4] == UInt8(ascii: "-") else { return nil }
        let digits = bytes[0..<4] + bytes[5..<7]
        guard digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        func number(_ slice: ArraySlice<UInt8>) -> Int { slice.reduce(0) { $0 * 10 + Int($1 - 48) } }
        self.init(year: number(bytes[0..<4]), month: number(bytes[5..<7]))
    }

    /// The month of a date, in UTC.
    public init(_ date: Date) {
        let (year, month, _) = CalendarDay(date).components
        self.init(uncheckedYear: year, month: month)
    }

    /// This month in UTC.
    public static var current: ArchiveMonth { ArchiveMonth(Date()) }

    /// Months since January of year 0, for arithmetic.
    public var ordinal: Int { year * 12 + month - 1 }

    /// The month `ordinal` counts (see ``ordinal``).
    public init(ordinal: Int) {
        self.init(uncheckedYear: ordinal / 12, month: ordinal % 12 + 1)
    }

    /// The month `count` months later (earlier when negative).
    public func adding(months count: Int) -> ArchiveMonth { ArchiveMonth(ordinal: ordinal + count) }

    /// `YYYY-MM`.
    public var description: String {
        let monthText = month < 10 ? "0\(month)" : "\(month)"
        return "\(year)-\(monthText)"
    }

    /// The API's path for the month: `/svc/archive/v1/2019/1.json` (no leading zero).
    public var path: String { "/svc/archive/v1/\(year)/\(month).json" }

    /// The month's URL under `base` (`https://api.nytimes.com`), with the key, or `REDACTED` when
    /// `apiKey` is nil (the form for messages); nil when `base` is not an http(s) URL.
    public func url(base: String, apiKey: String?) -> URL? {
        APIURL.make(base: base, path: path, items: [URLQueryItem(name: "api-key", value: apiKey ?? KeyRedaction.placeholder)])
    }

    /// The URL as messages show it, with `api-key=REDACTED`.
    public func redactedURL(base: String) -> String {
        url(base: base, apiKey: nil)?.absoluteString ?? base + path
    }

    /// Whether `a` comes before `b`.
    public static func < (a: ArchiveMonth, b: ArchiveMonth) -> Bool { a.ordinal < b.ordinal }
}
