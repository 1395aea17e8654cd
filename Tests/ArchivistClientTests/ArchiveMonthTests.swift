import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct ArchiveMonthTests {
    @Test(
        arguments: [
            ("2019-01", 2019, 1), ("1851-09", 1851, 9), ("2025-12", 2025, 12), ("0999-01", nil, nil), ("2019-13", nil, nil),
            ("2019-00", nil, nil), ("2019-1", nil, nil), ("201901", nil, nil), ("2019/01", nil, nil), ("２019-01", nil, nil),
            ("", nil, nil), ("2019-01-01", nil, nil), ("-019-01", nil, nil),
        ] as [(String, Int?, Int?)])
    func monthsAreReadAsYYYYMMOnly(text: String, year: Int?, month: Int?) {
        let parsed = ArchiveMonth(text)
        #expect(parsed?.year == year)
        #expect(parsed?.month == month)
        if let parsed { #expect(parsed.description == text) }
    }

    @Test func theURLHasNoLeadingZeroAndShowsTheKeyOnlyWhenAsked() throws {
        let month = try #require(ArchiveMonth("2019-01"))
        #expect(month.path == "/svc/archive/v1/2019/1.json")
        #expect(
            month.url(base: "https://api.nytimes.com/", apiKey: "k+y")?.absoluteString
                == "https://api.nytimes.com/svc/archive/v1/2019/1.json?api-key=k%2By")
        #expect(month.redactedURL(base: "http://127.0.0.1:9") == "http://127.0.0.1:9/svc/archive/v1/2019/1.json?api-key=REDACTED")
        #expect(month.url(base: "ftp://x", apiKey: "k") == nil)
    }

    @Test func monthArithmeticCrossesYears() throws {
        let december = try #require(ArchiveMonth("1999-12"))
        #expect(december.adding(months: 1).description == "2000-01")
        #expect(december.adding(months: -12).description == "1998-12")
        #expect(ArchiveMonth(ordinal: december.ordinal) == december)
        #expect(ArchiveMonth.first.description == "1851-09")
    }
}
