import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

/// The rule that keeps the key out of text, on text made to slip past it.
@Suite struct KeyRedactionTests {
    @Test(arguments: [
        ("invalid key SECRET", "invalid key REDACTED"),
        ("SECRET\u{301} echoed with a combining mark after it", "REDACTED\u{301} echoed with a combining mark after it"),
        ("\u{301}SECRETSECRET", "\u{301}REDACTEDREDACTED"),
        ("SECRE T and SECRE", "SECRE T and SECRE"),
        ("é SECRET\r\n", "é REDACTED\r\n"),
    ])
    func everyOccurrenceIsHiddenWhateverFollowsIt(text: String, expected: String) {
        let redacted = KeyRedaction(key: "SECRET")(text)
        #expect(Array(redacted.unicodeScalars) == Array(expected.unicodeScalars))
        let bytes = Array(redacted.utf8)
        #expect(!bytes.indices.contains { bytes[$0...].starts(with: "SECRET".utf8) })
    }

    @Test func anEmptyKeyHidesNothing() {
        #expect(KeyRedaction(key: "")("text") == "text")
    }
}
