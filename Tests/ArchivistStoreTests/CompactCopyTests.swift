import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

/// `JSONParser.compactCopy` gives, byte for byte, what a parse then a compact write give, or
/// nil when it cannot (and the parse then decides).
@Suite("compact copy")
struct CompactCopyTests {
    /// The compact form through a parse, or nil when the bytes do not parse.
    static func throughParse(_ bytes: [UInt8]) -> [UInt8]? {
        (try? JSONParser.parse(bytes)).map(JSONWriter.compactBytes)
    }

    @Test("stored documents, pretty and compact, are copied exactly as a parse and a write give them")
    func generatedDocumentsMatchTheWriter() throws {
        var generator = ArticleGenerator(seed: 21)
        for document in generator.documents(300) {
            for bytes in [JSONWriter.prettyBytes(document), JSONWriter.compactBytes(document)] {
                let copy = try #require(JSONParser.compactCopy(bytes))
                #expect(copy == JSONWriter.compactBytes(document))
            }
        }
    }

    @Test(
        "awkward values: a copy equals the parse and write, and nil comes only where a parse is needed",
        arguments: [
            #"{"a": "say \"hi\"", "b": "tab\there", "c": "\u00e9\u0301 \/ \ud83d\ude00"}"#,
            "{\"del\": \"x\u{7F}y\", \"uni\": \"caf\u{E9} \u{1F600}\"}",
            #"[1, -0, 2.50, 1e10, -3.1E-2, true, false, null, [], {}, [[]], {"a": {}}]"#,
            "\u{FEFF} {\"bom\": 1} \n",
            #"  "a lone string"  "#,
            "12.0",
            #"{"a": 1, "A": 2}"#,
            #"{"b": 1, "a": 2}"#,
            #"{"a": 1, "a": 2}"#,
            #"{"a": [{"z": 1, "y": 2}]}"#,
            #"{"a": 1,}"#,
            #"[1 2]"#,
            #"{"a": "\x"}"#,
            #"{"a": "\u12"}"#,
            "{\"a\": \"raw\ncontrol\"}",
            #"{"a": 01}"#,
            #"{"a": 1} x"#,
            #"{"a": "unterminated}"#,
            "",
            "   ",
        ])
    func awkwardValues(text: String) {
        let bytes = Array(text.utf8)
        let expected = Self.throughParse(bytes)
        if let copy = JSONParser.compactCopy(bytes) {
            #expect(copy == expected)
        } else if expected != nil {
            // Only keys out of order or repeated send a valid document to the parse.
            let outOfOrder = [#""a": 1, "A""#, #""b": 1, "a""#, #""a": 1, "a""#, #""z": 1, "y""#]
            #expect(outOfOrder.contains { text.contains($0) }, "\(text)")
        }
    }

    @Test("bytes that are not UTF-8 in a string, and nesting past the parser's limit, give nil as the parse refuses them")
    func refusedAsTheParseRefuses() {
        let invalid: [UInt8] = Array(#"{"a": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(JSONParser.compactCopy(invalid) == nil && Self.throughParse(invalid) == nil)
        let deep =
            Array(String(repeating: "[", count: JSONParser.maximumDepth + 1).utf8)
            + Array(String(repeating: "]", count: JSONParser.maximumDepth + 1).utf8)
        #expect(JSONParser.compactCopy(deep) == nil && Self.throughParse(deep) == nil)
        let deepest =
            Array(String(repeating: "[", count: JSONParser.maximumDepth).utf8)
            + Array(String(repeating: "]", count: JSONParser.maximumDepth).utf8)
        #expect(JSONParser.compactCopy(deepest) == Self.throughParse(deepest))
    }

    @Test("random mutations of a document: the copy agrees with the parse whenever it gives an answer")
    func mutationsAgree() throws {
        var generator = ArticleGenerator(seed: 4)
        var random = SplitMix64(state: 77)
        let alphabet = Array(#"{}[]":,\ "aé0-.eE\u"#.utf8) + [0x7F, 0x0A, 0xC3, 0x80]
        var compared = 0
        for document in generator.documents(40) {
            let original = JSONWriter.prettyBytes(document)
            for _ in 0..<50 {
                var bytes = original
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let at = Int(random.next() % UInt64(bytes.count))
                    switch random.next() % 3 {
                    case 0: bytes[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: at)
                    default: bytes.remove(at: at)
                    }
                }
                guard let copy = JSONParser.compactCopy(bytes) else { continue }
                #expect(copy == Self.throughParse(bytes), "\(String(decoding: bytes, as: UTF8.self))")
                compared += 1
            }
        }
        #expect(compared > 200, "mutations still valid JSON: \(compared) of 2,000")
    }
}
