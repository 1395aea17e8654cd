import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

@Suite("JSON string escaping")
struct JSONStringEscapingTests {
    @Test(arguments: [
        ("", #""""#),
        ("plain", #""plain""#),
        ("say \"hi\"", #""say \"hi\"""#),
        ("back\\slash", #""back\\slash""#),
        ("line\nbreak\ttab\rreturn", #""line\nbreak\ttab\rreturn""#),
        ("\u{8}\u{C}", #""\b\f""#),
        ("\u{0}\u{1F}\u{7F}", #""\u0000\u001f\u007f""#),
        ("\"", #""\"""#),
        ("ends with escape\n", #""ends with escape\n""#),
        ("\nstarts with one", #""\nstarts with one""#),
        ("café ’ 😀 / slash", #""café ’ 😀 / slash""#),
    ])
    func writesEachByteThatNeedsAnEscapeAndCopiesTheRest(text: String, expected: String) throws {
        var out: [UInt8] = []
        JSONWriter.writeString(text, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
        // And it reads back as the same text.
        #expect(try JSONParser.parse(out) == .string(text))
    }
}
