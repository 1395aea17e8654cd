import ArchivistBase
import ArchivistStore
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct CalendarDayTests {
    // MARK: Parsing

    @Test(arguments: [
        // Both spellings of ordinary days.
        ("2024-03-15", "2024-03-15" as String?),
        ("20240315", "2024-03-15"),
        ("1970-01-01", "1970-01-01"),
        ("19700101", "1970-01-01"),
        ("1851-09-18", "1851-09-18"),
        ("0001-01-01", "0001-01-01"),
        ("9999-12-31", "9999-12-31"),
        // Month ends.
        ("2024-01-31", "2024-01-31"),
        ("2024-04-30", "2024-04-30"),
        ("2024-12-31", "2024-12-31"),
        // Leap days: every 4 years, not every 100, but every 400.
        ("2024-02-29", "2024-02-29"),
        ("20240229", "2024-02-29"),
        ("2000-02-29", "2000-02-29"),
        ("1600-02-29", "1600-02-29"),
        ("2023-02-29", nil),
        ("20230229", nil),
        ("1900-02-29", nil),
        ("2100-02-29", nil),
        ("2024-02-30", nil),
        // Months and days out of range.
        ("2024-13-01", nil),
        ("20241301", nil),
        ("2024-00-10", nil),
        ("2024-01-00", nil),
        ("20240100", nil),
        ("2024-01-32", nil),
        ("2024-04-31", nil),
        ("2024-06-31", nil),
        ("2024-09-31", nil),
        ("2024-11-31", nil),
        // Wrong lengths.
        ("", nil),
        ("2024", nil),
        ("2024-1-01", nil),
        ("2024-01-1", nil),
        ("2024-01-011", nil),
        ("2024031", nil),
        ("202403150", nil),
        (" 2024-03-15", nil),
        ("2024-03-15 ", nil),
        ("2024-03-15T00:00:00Z", nil),
        // Other separators and non-digits.
        ("2024/03/15", nil),
        ("2024.03.15", nil),
        ("2024-0315-", nil),
        ("2024-0a-15", nil),
        ("2024031x", nil),
        ("abcdefgh", nil),
        ("-024-03-15", nil),
        ("+2024031", nil),
        ("2024- 3-15", nil),
        ("２０２４-03-15", nil),  // full-width digits
        ("٢٠٢٤٠٣١٥", nil),  // Arabic-Indic digits
    ])
    func parsesBothSpellingsOfRealDaysOnly(text: String, expected: String?) {
        #expect(CalendarDay(text)?.description == expected)
    }

    @Test func bothSpellingsOfADayAreTheSameDay() throws {
        let dashed = try #require(CalendarDay("2021-07-04"))
        let compact = try #require(CalendarDay("20210704"))
        #expect(dashed == compact)
        #expect(dashed.components == (2021, 7, 4))
    }

    // MARK: Round trips

    @Test(arguments: [
        "0001-01-01", "0999-12-31", "1582-10-15", "1851-09-18", "1899-12-31", "1900-01-01", "1900-02-28",
        "1900-03-01", "1969-12-31", "1970-01-01", "1999-12-31", "2000-02-29", "2000-03-01", "2024-02-29",
        "2038-01-19", "2100-03-01", "9999-12-31",
    ])
    func descriptionAndCompactReadBackAsTheSameDay(text: String) throws {
        let day = try #require(CalendarDay(text))
        #expect(day.description == text)
        #expect(day.compact == text.replacingOccurrences(of: "-", with: ""))
        #expect(CalendarDay(day.description) == day)
        #expect(CalendarDay(day.compact) == day)
    }

    @Test func everyDayOfTwoCenturiesRoundTripsThroughBothSpellings() {
        // 1900-01-01 to 2099-12-31, every day; then every 997th day of years 1 to 9999.
        let first = Int(ISODate.daysFromCivil(year: 1900, month: 1, day: 1))
        let last = Int(ISODate.daysFromCivil(year: 2099, month: 12, day: 31))
        var failures: [Int] = []
        var previous: (year: Int, month: Int, day: Int)?
        for number in first...last {
            let day = CalendarDay(dayNumber: number)
            if CalendarDay(day.description) != day || CalendarDay(day.compact) != day { failures.append(number) }
            // Consecutive days: the next day is the day after in the calendar.
            let components = day.components
            if let previous {
                let next =
                    ISODate.isValid(year: Int64(previous.year), month: Int64(previous.month), day: Int64(previous.day + 1))
                    ? (previous.year, previous.month, previous.day + 1)
                    : previous.month < 12 ? (previous.year, previous.month + 1, 1) : (previous.year + 1, 1, 1)
                if next != components { failures.append(number) }
            }
            previous = components
        }
        let lowest = Int(ISODate.daysFromCivil(year: 1, month: 1, day: 1))
        let highest = Int(ISODate.daysFromCivil(year: 9999, month: 12, day: 31))
        for number in stride(from: lowest, through: highest, by: 997) {
            let day = CalendarDay(dayNumber: number)
            if CalendarDay(day.description) != day || CalendarDay(day.compact) != day { failures.append(number) }
        }
        #expect(failures.isEmpty, "day numbers that did not round trip: \(failures.prefix(10))")
    }

    @Test func componentsAgreeWithFoundationsGregorianCalendarInUTC() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // Foundation's Gregorian calendar is Julian before 1582-10-15, so compare from 1583 on.
        let first = Int(ISODate.daysFromCivil(year: 1583, month: 1, day: 1))
        let last = Int(ISODate.daysFromCivil(year: 2400, month: 12, day: 31))
        var mismatches: [String] = []
        for number in stride(from: first, through: last, by: 37) {
            let day = CalendarDay(dayNumber: number)
            let expected = calendar.dateComponents([.year, .month, .day], from: day.start)
            if expected.year != day.components.year || expected.month != day.components.month || expected.day != day.components.day {
                mismatches.append("\(day): Foundation says \(expected)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    // MARK: Arithmetic

    @Test(arguments: [
        ("2023-12-31", 1, "2024-01-01"),
        ("2024-01-01", -1, "2023-12-31"),
        ("2024-01-31", 1, "2024-02-01"),
        ("2024-02-28", 1, "2024-02-29"),
        ("2024-02-29", 1, "2024-03-01"),
        ("2023-02-28", 1, "2023-03-01"),
        ("2024-03-01", -1, "2024-02-29"),
        ("2100-03-01", -1, "2100-02-28"),
        ("2000-03-01", -1, "2000-02-29"),
        ("2024-01-01", 366, "2025-01-01"),
        ("2023-01-01", 365, "2024-01-01"),
        ("1970-01-01", -1, "1969-12-31"),
        ("1969-12-31", 1, "1970-01-01"),
        ("2024-06-15", 0, "2024-06-15"),
        ("2024-06-15", -10_000, "1997-01-28"),
        ("1970-01-01", 20_000, "2024-10-04"),
    ])
    func addingDaysCrossesMonthAndYearEnds(start: String, days: Int, expected: String) throws {
        let day = try #require(CalendarDay(start))
        #expect(day.adding(days: days).description == expected)
        #expect(day.adding(days: days).adding(days: -days) == day)
    }

    @Test(arguments: [
        ("1970-01-01", 0),
        ("1970-01-02", 1),
        ("1969-12-31", -1),
        ("1969-01-01", -365),
        ("1900-01-01", -25_567),
        ("1851-09-18", -43_204),
        ("0001-01-01", -719_162),
        ("2000-01-01", 10_957),
        ("2024-02-29", 19_782),
    ])
    func dayNumberCountsDaysFrom1970IncludingBefore(text: String, dayNumber: Int) throws {
        let day = try #require(CalendarDay(text))
        #expect(day.dayNumber == dayNumber)
        #expect(CalendarDay(dayNumber: dayNumber) == day)
    }

    // MARK: Dates

    @Test(arguments: [
        (0.0, "1970-01-01"),
        (86_399.999, "1970-01-01"),
        (86_400, "1970-01-02"),
        (-0.001, "1969-12-31"),
        (-86_400, "1969-12-31"),
        (-86_400.5, "1969-12-30"),
        (1_709_251_199, "2024-02-29"),  // 2024-02-29T23:59:59Z
        (1_709_251_200, "2024-03-01"),  // 2024-03-01T00:00:00Z
        (-2_208_988_800, "1900-01-01"),
    ])
    func dayOfADateIsItsUTCDay(seconds: Double, expected: String) {
        #expect(CalendarDay(Date(timeIntervalSince1970: seconds)).description == expected)
    }

    @Test func dayOfADateIgnoresTheLocalTimeZone() {
        // 23:30 UTC is already the next day east of UTC and still the day before in New York, but
        // the day is the UTC day either way.
        #expect(CalendarDay(utc(2024, 3, 10, 23, 30)).description == "2024-03-10")
        #expect(CalendarDay(utc(2024, 3, 11, 0, 30)).description == "2024-03-11")
    }

    @Test(arguments: ["1969-12-31", "1970-01-01", "2024-02-29", "1851-09-18"])
    func startIsMidnightUTCAndReadsBackAsTheSameDay(text: String) throws {
        let day = try #require(CalendarDay(text))
        #expect(day.start.timeIntervalSince1970 == Double(day.dayNumber) * 86_400)
        #expect(CalendarDay(day.start) == day)
        #expect(CalendarDay(day.start.addingTimeInterval(86_399)) == day)
        #expect(CalendarDay(day.start.addingTimeInterval(-1)) == day.adding(days: -1))
    }

    @Test func todayIsTheUTCDayOfNow() {
        let before = CalendarDay(Date())
        let today = CalendarDay.today
        let after = CalendarDay(Date())
        #expect(today == before || today == after)
    }

    // MARK: Ordering

    @Test func daysOrderByDateAndHashByDay() throws {
        let texts = ["2024-03-01", "1969-12-31", "2024-02-29", "1970-01-01", "1851-09-18", "2023-12-31"]
        let days = try texts.map { try #require(CalendarDay($0)) }
        #expect(days.sorted().map(\.description) == ["1851-09-18", "1969-12-31", "1970-01-01", "2023-12-31", "2024-02-29", "2024-03-01"])
        let leap = try #require(CalendarDay("2024-02-29"))
        let march = try #require(CalendarDay("2024-03-01"))
        #expect(leap < march)
        #expect(!(march < leap))
        #expect(!(leap < leap))
        #expect(leap <= leap && march > leap)
        #expect(Set(days + days).count == days.count)
        #expect(Set([leap, try #require(CalendarDay("20240229"))]).count == 1)
    }
}
