import ArchivistBase
import ArchivistStore
import Testing

@testable import ArchivistShell

/// Tables in a terminal line up and clip by display columns, not by characters.
@Suite("display width of table cells")
struct DisplayWidthTests {
    @Test(arguments: [
        ("plain", 5),
        ("", 0),
        ("Zürich", 6),  // precomposed ü
        ("Zu\u{0308}rich", 6),  // u + combining diaeresis: one column
        ("東京", 4),
        ("서울 Rising", 11),
        ("ｆｕｌｌ", 8),  // fullwidth Latin
        ("👍", 2),
        ("👩‍👩‍👧", 2),  // a ZWJ family is one emoji
        ("❤️", 2),  // text heart with emoji presentation selector
        ("a\u{200B}b", 2),  // zero-width space (format)
        ("Ángel Di María", 14),
    ])
    func columnsOfText(text: String, columns: Int) {
        #expect(DisplayWidth.of(text) == columns)
    }

    @Test(arguments: [
        ("東京タワー", 6, "東京…"),
        ("東京タワー", 5, "東京…"),
        ("東京タワー", 10, "東京タワー"),
        ("abcdef", 4, "abc…"),
        ("a東", 2, "a…"),
        ("abc", 0, ""),
    ])
    func clippingNeverExceedsTheWidth(text: String, width: Int, expected: String) {
        let clipped = DisplayWidth.clipped(text, to: width)
        #expect(clipped == expected)
        #expect(DisplayWidth.of(clipped) <= width)
    }

    @Test func tableColumnsLineUpWithWideCharacters() {
        let records = [
            Record([("_id", .string("a")), ("headline", .string("東京の夜")), ("section", .string("World"))]),
            Record([("_id", .string("b")), ("headline", .string("Plain headline")), ("section", .string("Arts"))]),
            Record([("_id", .string("c")), ("headline", .string("👍 up")), ("section", .string("Tech"))]),
        ]
        let sink = TextSink()
        Renderer(format: .table).render(list: records, to: sink)
        let lines = sink.capturedText.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        // The third column starts at the same display column on every line.
        let starts = lines.map { line -> Int in
            let words = ["section", "World", "Arts", "Tech"]
            let word = words.first { line.contains($0) }!
            return DisplayWidth.of(String(line[..<line.range(of: word)!.lowerBound]))
        }
        #expect(Set(starts).count == 1, "\(lines)")
    }

    @Test func clippedTableLinesFitTheTerminalWidth() {
        let records = [Record([("_id", .string("a")), ("headline", .string(String(repeating: "東", count: 60)))])]
        let sink = TextSink()
        Renderer(format: .table).render(list: records, to: sink, clippingTo: 40)
        for line in sink.capturedText.split(separator: "\n") {
            #expect(DisplayWidth.of(String(line)) <= 40, "\(line)")
        }
        #expect(sink.capturedText.contains("…"))
    }
}
