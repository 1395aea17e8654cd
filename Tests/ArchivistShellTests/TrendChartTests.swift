import ArchivistBase
import ArchivistStore
import Testing

@testable import ArchivistShell

/// The trend chart and its axes, drawn in memory: sizes, gaps against zeros, the two styles.
@Suite("trend charts")
struct TrendChartTests {
    static let year: Int64 = 365 * 86_400_000

    /// A yearly trend from 2001 with these totals and series counts.
    static func trend(totals: [Int], _ series: [(String, [Int])]) -> Trend {
        let first = TimeBucket.year.start(of: 31 * year)
        var starts: [Int64] = [first]
        while starts.count < totals.count { starts.append(TimeBucket.year.next(after: starts.last!)) }
        return Trend(
            bucket: .year, starts: starts, totals: totals, series: series.map { Trend.Series(name: $0.0, counts: $0.1) }, within: nil)
    }

    @Test(arguments: [
        (0.37, 5, true, 0.1, "40%"),
        (0.0123, 5, true, 0.0025, "1.25%"),
        (0.0, 4, true, 0.0025, "1.00%"),
        (1_234.0, 5, false, 250.0, "1,250"),
        (3.0, 5, false, 1.0, "3"),
    ])
    func theValueAxisEndsOnARoundStep(largest: Double, intervals: Int, percent: Bool, step: Double, top: String) {
        let scale = ChartScale(largest: largest, intervals: intervals, percent: percent)
        #expect(abs(scale.step - step) < 1e-12, "\(scale)")
        #expect(scale.maximum >= largest)
        #expect(scale.label(scale.maximum) == top)
        #expect(scale.ticks.first == 0)
        #expect(
            Set(scale.ticks.map(scale.label)).count == scale.ticks.count, "labels tell the ticks apart: \(scale.ticks.map(scale.label))")
    }

    /// `text` without its colour escape sequences (ESC [ digits m).
    static func withoutColours(_ text: String) -> String {
        var out = ""
        var inEscape = false
        for character in text {
            if character == "\u{1B}" {
                inEscape = true
            } else if inEscape {
                if character == "m" { inEscape = false }
            } else {
                out.append(character)
            }
        }
        return out
    }

    @Test func yearLabelsFallOnRoundYearsAndNeverCrowd() {
        let starts = (1851...2025).map { TimeBucket.year.start(of: ISODate.instant(of: "\($0)-06-01")!) }
        let chosen = ChartScale.labelledSpans(starts, bucket: .year, room: 12)
        let years = chosen.map { 1851 + $0 }
        #expect(years.count <= 12 && years.count >= 6, "\(years)")
        #expect(years.allSatisfy { $0 % 20 == 0 }, "\(years)")
    }

    @Test(arguments: [40, 41, 60, 80, 99, 120, 160, 200])
    func theChartFitsTheWidthAndHeight(width: Int) {
        let counts = (0..<175).map { ($0 * 37) % 100 }
        let trend = Self.trend(
            totals: Array(repeating: 1_000, count: 175),
            [("inflation", counts), ("unemployment", counts.reversed()), ("\"climate change\"", counts.map { $0 / 3 })])
        for height in [12, 24, 50] {
            for fancy in [true, false] {
                let lines = TrendChart(trend: trend, plotsCounts: false, width: width, height: height, isFancy: fancy).lines()
                #expect(lines.count <= height - 1, "\(width)x\(height): \(lines.count) lines")
                for line in lines {
                    let shown = Self.withoutColours(line)
                    #expect(DisplayWidth.of(shown) <= width, "\(width)x\(height) fancy \(fancy): \(shown)")
                }
                let text = lines.joined(separator: "\n")
                for name in ["inflation", "unemployment", "\"climate change\""] { #expect(text.contains(name)) }
                #expect(["2001", "2020", "2050", "2100"].contains { text.contains($0) }, "a year on the time axis")
                let braille = text.unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) }
                #expect(braille == fancy)
                #expect(text.contains("\u{1B}[") == fancy)
                if !fancy { #expect(text.unicodeScalars.allSatisfy { $0.isASCII }, "plain characters only") }
            }
        }
    }

    @Test func aSpanWithoutArticlesIsAGapAndASpanWithoutMatchesIsZero() {
        // 2001: articles, no match (zero); 2002: no articles at all (a gap); 2003: 5 of 10.
        let trend = Self.trend(totals: [10, 0, 10], [("knicks", [0, 0, 5])])
        #expect(trend.share(0, at: 0) == 0)
        #expect(trend.share(0, at: 1) == nil)
        #expect(trend.share(0, at: 2) == 0.5)
        let lines = TrendChart(trend: trend, plotsCounts: false, width: 41, height: 16, isFancy: false).lines()
        let plot = Array(lines[1...(lines.firstIndex { $0.contains("+-") }! - 1)])
        let gutter = plot[0].firstIndex(of: "+")!.utf16Offset(in: plot[0]) + 1
        func marker(row: Int, column: Int) -> Bool {
            let line = Array(plot[row])
            return gutter + column < line.count && line[gutter + column] == "*"
        }
        let columns = 41 - gutter - 1
        // The zero of 2001 sits on the bottom row at the left; 2003's half at the top right.
        #expect(marker(row: plot.count - 1, column: 0), "\(lines.joined(separator: "\n"))")
        #expect(marker(row: 0, column: columns - 1), "\(lines.joined(separator: "\n"))")
        // Nothing in the middle column (2002), nor a line across it.
        for row in plot.indices { #expect(!marker(row: row, column: columns / 2), "row \(row): \(plot[row])") }
        #expect(lines.contains("blank: spans with no articles at all"))
        let records = trend.records
        #expect(records[1].fields.map(\.name) == ["bucket", "series", "count", "total", "share"])
        #expect(records.map { $0.fields[4].value } == [.number("0.0"), .null, .number("0.5")])
    }
}
