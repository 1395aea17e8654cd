import ArchivistBase
import Testing

@testable import ArchivistShell

/// Tables narrower than their cells: the widest columns give way first, so every column shows.
@Suite struct TableWidthTests {
    @Test func theWidestColumnsAreNarrowedFirst() {
        #expect(Renderer.fittedWidths([10, 60, 40], to: 80) == [10, 33, 33])
        #expect(Renderer.fittedWidths([10, 60, 40], to: 200) == [10, 60, 40])
        #expect(Renderer.fittedWidths([24, 150], to: 130) == [24, 104])
        // Too narrow for every column at its least: each is cut to the least, no further.
        #expect(Renderer.fittedWidths([3, 30, 30, 30], to: 10) == [3, 6, 6, 6])
    }

    @Test func aLongHeadlineNoLongerPushesTheDateOffTheTerminal() {
        // The issue's example: find "mayor wagner" --fields headline.main,pub_date on 130 columns.
        let headline =
            "Mayor Wagner Says the City Will Not Raise the Subway Fare This Year, Despite the Deficit, and Asks "
            + "Albany for Aid to the Transit Authority"
        let records = [
            Record([("headline.main", .string(headline)), ("pub_date", .string("1961-03-14T05:00:00+0000"))]),
            Record([("headline.main", .string("Wagner Wins")), ("pub_date", .string("1961-11-08T05:00:00+0000"))]),
        ]
        let sink = TextSink()
        Renderer(format: .table).render(list: records, to: sink, clippingTo: 130)
        let lines = sink.capturedText.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("headline.main") && lines[0].hasSuffix("pub_date"), "\(lines[0])")
        #expect(lines[1].hasSuffix("1961-03-14T05:00:00+0000") && lines[1].contains("…"), "\(lines[1])")
        #expect(lines[2].hasSuffix("1961-11-08T05:00:00+0000"))
        for line in lines { #expect(DisplayWidth.of(line) <= 130, "\(line)") }
    }

    @Test(arguments: [40, 57, 80, 100, 130, 160, 200])
    func everyColumnShowsAtAnyWidth(width: Int) {
        let records = (0..<5).map { row in
            Record([
                ("_id", .string("nyt://article/\(row)4b7c2f1-77de-5c3c-9a0e-2f0a1b2c3d4e")),
                ("pub_date", .string("2019-02-15T05:00:00+0000")), ("section_name", .string("Business Day")),
                ("headline.main", .string(String(repeating: "東京 Climate Change Talks Resume ", count: row + 2))),
            ])
        }
        let sink = TextSink()
        Renderer(format: .table).render(list: records, to: sink, clippingTo: width)
        let lines = sink.capturedText.split(separator: "\n").map(String.init)
        for line in lines { #expect(DisplayWidth.of(line) <= width, "\(width): \(line)") }
        // Each header shows at least its first letters, in order.
        var position = lines[0].startIndex
        for name in ["_id", "pub_d", "secti", "headl"] {
            guard let found = lines[0].range(of: name, range: position..<lines[0].endIndex) else {
                Issue.record("\(width): \(name) missing from \(lines[0])")
                continue
            }
            position = found.upperBound
        }
    }
}
