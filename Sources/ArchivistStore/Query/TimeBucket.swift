import ArchivistBase

/// A span of calendar time (UTC) that a timeline counts documents by.
public enum TimeBucket: String, CaseIterable, Sendable {
    /// A calendar year: `2019`.
    case year
    /// A calendar month: `2019-01`.
    case month
    /// An ISO week, Monday to Sunday, named by its Monday: `2019-01-14`.
    case week
    /// A day: `2019-01-05`.
    case day

    static let millisecondsPerDay: Int64 = 86_400_000

    /// The first instant (milliseconds since 1970, UTC) of the bucket that holds `instant`.
    public func start(of instant: Int64) -> Int64 {
        let days = Self.floorDivide(instant, Self.millisecondsPerDay)
        let (year, month, _) = ISODate.civilFromDays(days)
        let first: Int64
        switch self {
        case .year: first = ISODate.daysFromCivil(year: year, month: 1, day: 1)
        case .month: first = ISODate.daysFromCivil(year: year, month: month, day: 1)
        case .week: first = days - (days + 3 - Self.floorDivide(days + 3, 7) * 7)  // 1970-01-01 was a Thursday
        case .day: first = days
        }
        return first * Self.millisecondsPerDay
    }

    /// The first instant of the bucket after the one that starts at `start`.
    public func next(after start: Int64) -> Int64 {
        let days = Self.floorDivide(start, Self.millisecondsPerDay)
        let (year, month, _) = ISODate.civilFromDays(days)
        let next: Int64
        switch self {
        case .year: next = ISODate.daysFromCivil(year: year + 1, month: 1, day: 1)
        case .month:
            next =
                month == 12
                ? ISODate.daysFromCivil(year: year + 1, month: 1, day: 1) : ISODate.daysFromCivil(year: year, month: month + 1, day: 1)
        case .week: next = days + 7
        case .day: next = days + 1
        }
        return next * Self.millisecondsPerDay
    }

    /// The name of the bucket that starts at `start`: `2019`, `2019-01`, `2019-01-14`.
    public func label(_ start: Int64) -> String {
        let (year, month, day) = ISODate.civilFromDays(Self.floorDivide(start, Self.millisecondsPerDay))
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(abs(value))
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
        }
        switch self {
        case .year: return pad(year, 4)
        case .month: return pad(year, 4) + "-" + pad(month, 2)
        case .week, .day: return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        }
    }

    /// `a / b` rounded down (b > 0).
    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }
}
