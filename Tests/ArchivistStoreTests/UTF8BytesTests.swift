import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

@Suite("UTF-8 bytes")
struct UTF8BytesTests {
    /// What the standard library says of the same bytes.
    static func standardValidity(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) } != nil
    }

    static func validity(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { UTF8Bytes.isValid($0) }
    }

    @Test(
        arguments: [
            ([], true),
            (Array("plain ascii".utf8), true),
            (Array("café ’quoted’ 😀".utf8), true),
            ([0xC3], false),  // cut off
            ([0xC0, 0x80], false),  // overlong NUL
            ([0xC1, 0xBF], false),  // overlong
            ([0xE0, 0x80, 0x80], false),  // overlong 3-byte
            ([0xE0, 0xA0, 0x80], true),  // U+0800
            ([0xED, 0xA0, 0x80], false),  // surrogate U+D800
            ([0xED, 0x9F, 0xBF], true),  // U+D7FF
            ([0xEF, 0xBF, 0xBF], true),  // U+FFFF
            ([0xF0, 0x8F, 0xBF, 0xBF], false),  // overlong 4-byte
            ([0xF0, 0x90, 0x80, 0x80], true),  // U+10000
            ([0xF4, 0x8F, 0xBF, 0xBF], true),  // U+10FFFF
            ([0xF4, 0x90, 0x80, 0x80], false),  // past U+10FFFF
            ([0xF5, 0x80, 0x80, 0x80], false),
            ([0xFF], false),
            ([0x80], false),  // a lone continuation byte
            ([0xE2, 0x80], false),  // cut off 3-byte
            ([0xE2, 0x28, 0xA1], false),  // bad continuation
            ([0x61, 0xF0, 0x9F, 0x98], false),  // emoji cut off at the end
        ] as [([UInt8], Bool)])
    func validationDecidesAsTheStandardLibrary(bytes: [UInt8], valid: Bool) {
        #expect(Self.validity(bytes) == valid)
        #expect(Self.standardValidity(bytes) == valid)
    }

    @Test func validationAgreesWithTheStandardLibraryOnEveryTwoByteSequenceAndOnRandomBytes() {
        for first in 0...255 {
            for second in 0...255 {
                let bytes = [UInt8(first), UInt8(second)]
                #expect(Self.validity(bytes) == Self.standardValidity(bytes), "\(bytes)")
            }
        }
        // Random sequences biased towards lead and continuation bytes, where the rules are.
        var random = SplitMix64(state: 11)
        let interesting: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
        ]
        for _ in 0..<50_000 {
            let count = Int.random(in: 1...7, using: &random)
            let bytes = (0..<count).map { _ in
                Bool.random(using: &random) ? interesting.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            #expect(Self.validity(bytes) == Self.standardValidity(bytes), "\(bytes)")
        }
    }

    @Test func equalityAndOrderAreThoseOfTheBytes() {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)  // Swift's equality: canonical equivalence
        #expect(!UTF8Bytes.equal(precomposed, decomposed))
        #expect(UTF8Bytes.precedes(decomposed, precomposed))  // "e" (0x65) before 0xC3
        let words = [
            "", "a", "ab", "b", "B", "a\u{0}", "é", "z", "zz", "日本", "😀", "long string past fifteen bytes",
            "long string past fifteen bytez",
        ]
        for a in words {
            for b in words {
                #expect(UTF8Bytes.equal(a, b) == a.utf8.elementsEqual(b.utf8), "\(a) \(b)")
                #expect(UTF8Bytes.precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a) \(b)")
                let order = UTF8Bytes.compare(a, b)
                #expect((order < 0) == a.utf8.lexicographicallyPrecedes(b.utf8) && (order == 0) == (a.utf8.elementsEqual(b.utf8)))
            }
        }
    }
}
