import ArchivistBase
import Testing

@testable import ArchivistShell

/// How cells are written in CSV.
@Suite struct CSVCellTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("a,b", #""a,b""#),
        (#"say "hi""#, #""say ""hi""""#),
        ("two\nlines", "\"two\nlines\""),
        // A quote followed by a combining mark is one character to Swift, but a quote to a CSV reader.
        ("x\"\u{301}y", "\"x\"\"\u{301}y\""),
        ("\u{301}", "\u{301}"),
    ])
    func aCellIsQuotedWhenItHoldsACommaAQuoteOrALineBreak(cell: String, expected: String) {
        #expect(Array(Renderer.csvEscape(cell).unicodeScalars) == Array(expected.unicodeScalars))
    }
}
