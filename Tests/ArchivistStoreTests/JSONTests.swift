import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

@Suite struct JSONParserTests {
    @Test(arguments: [
        ("{}", "{}"),
        ("[]", "[]"),
        (#"{"b":1,"a":2}"#, #"{"a":2,"b":1}"#),
        (#"{"n":879,"f":0.0,"e":1E+5,"neg":-0}"#, #"{"e":1E+5,"f":0.0,"n":879,"neg":-0}"#),
        (#"{"k":null,"t":true,"f":false}"#, #"{"f":false,"k":null,"t":true}"#),
        (#"{"url":"http:\/\/www.nytimes.com\/2016"}"#, #"{"url":"http://www.nytimes.com/2016"}"#),
        (#"{"q":"\"quoted\" \\ tab\t"}"#, #"{"q":"\"quoted\" \\ tab\t"}"#),
        (#"{"u":"caf\u00e9 \ud83d\ude00"}"#, #"{"u":"café 😀"}"#),
        (#"{"a":1,"a":2}"#, #"{"a":2}"#),
        ("  [1, [2, [3]], {\"x\": []}]  ", #"[1,[2,[3]],{"x":[]}]"#),
        (#"{"ctl":"\u0001"}"#, #"{"ctl":"\u0001"}"#),
    ])
    func parsesAndWritesCompactCanonicalForm(input: String, expected: String) throws {
        let value = try JSONParser.parse(input)
        #expect(JSONWriter.compactString(value) == expected)
    }

    @Test(arguments: [
        ("", 0, "empty input"),
        ("{", 1, "unexpected end of input"),
        (#"{"a" 1}"#, 5, "expected ':'"),
        (#"{"a":1,}"#, 7, "expected a string key"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("01", 1, "unexpected data after the value"),
        ("nul", 0, "unexpected end of input"),
        (#"{"a":"\x"}"#, 6, "invalid escape '\\x'"),
        // An escaped byte that is not printable is named by its value (the message stays one line).
        ("{\"a\":\"\\\n\"}", 6, "invalid escape '\\' before byte 0x0A"),
        ("[\"\\\u{1B}[31m\"]", 2, "invalid escape '\\' before byte 0x1B"),
        (#""\ud800""#, 1, "unpaired surrogate in string"),
        ("[1.]", 3, "expected a digit after '.'"),
        ("{\"a\":\"line\nbreak\"}", 10, "control character in string"),
        (#"{"a":1} {"b":2}"#, 8, "unexpected data after the value"),
    ])
    func reportsTheByteAndTheReasonOfASyntaxError(input: String, offset: Int, reason: String) {
        #expect(throws: JSONSyntaxError(offset: offset, reason: reason)) {
            try JSONParser.parse(input)
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: JSONParser.maximumDepth + 1) + String(repeating: "]", count: JSONParser.maximumDepth + 1)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSONParser.parse(fine)) != nil)
    }

    @Test func refusesInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(bytes) }
    }

    @Test func prettyFormIsIndentedSortedAndEndsInANewline() throws {
        let value = try JSONParser.parse(#"{"b":[1,{"d":null,"c":"x/y"}],"a":{},"e":[]}"#)
        let pretty = String(decoding: JSONWriter.prettyBytes(value), as: UTF8.self)
        #expect(
            pretty == """
                {
                  "a": {},
                  "b": [
                    1,
                    {
                      "c": "x/y",
                      "d": null
                    }
                  ],
                  "e": []
                }

                """)
        #expect(try JSONParser.parse(pretty) == value)
    }

    @Test func keysSortByBytesNotByUnicodeEquivalence() throws {
        // A precomposed and a decomposed "é" are different keys and both survive.
        let value = try JSONParser.parse("{\"\\u00e9\":1,\"e\\u0301\":2,\"Z\":3,\"a\":4}")
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members.map { Array($0.key.utf8) } == [[0x5A], [0x61], [0x65, 0xCC, 0x81], [0xC3, 0xA9]])
    }

    @Test func pathValuesCrossArraysAsMongoDoes() throws {
        let doc = try JSONParser.parse(#"{"keywords":[{"value":"A"},{"value":"B"},{"name":"x"}],"headline":{"main":"H"}}"#)
        #expect(doc.values(atPath: ["keywords", "value"]) == [.string("A"), .string("B")])
        #expect(doc.values(atPath: ["headline", "main"]) == [.string("H")])
        #expect(doc.values(atPath: ["missing", "x"]).isEmpty)
        let projection = Projection(paths: ["keywords.value", "headline.main", "byline.original"])
        #expect(projection.values(of: doc) == [nil, .string("H"), .array([.string("A"), .string("B")])])
    }

    @Test(arguments: [
        ("2026-11-29T19:25:56.123Z", Int64(1_795_980_356_123)),
        ("1970-01-01T00:00:00.000Z", Int64(0)),
        ("2016-02-29T23:59:59.999Z", Int64(1_456_790_399_999)),
        ("1969-12-31T23:59:59.000Z", Int64(-1000)),
    ])
    func timestampsRoundTrip(text: String, milliseconds: Int64) {
        #expect(Timestamp(parsing: text)?.milliseconds == milliseconds)
        #expect(Timestamp(milliseconds: milliseconds).description == text)
    }

    /// The first case is the time the index-line fuzz target found (`scripts/fuzz index-line`):
    /// 123 fraction digits overflowed the parser, which trapped.
    @Test(arguments: [
        ("2026-12-02T14:09:13." + String(repeating: "0", count: 120) + "442Z", Int64?(1_796_220_553_000)),
        ("2026-12-02T14:09:13.5Z", Int64?(1_796_220_553_500)), ("2026-12-02T14:09:13.12Z", Int64?(1_796_220_553_120)),
        ("2026-12-02T14:09:13.1239999Z", Int64?(1_796_220_553_123)), ("2026-12-02T14:09:13Z", Int64?(1_796_220_553_000)),
        ("2026-12-02T14:09:13.12a4Z", nil), ("2026-12-02T14:09:13.Z", nil),
    ])
    func timestampFractions(text: String, milliseconds: Int64?) {
        #expect(Timestamp(parsing: text)?.milliseconds == milliseconds)
    }
}

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

/// Skipping a value refuses what parsing it refuses. The first case is the input the JSON fuzz
/// target found (`scripts/fuzz json`): a byte 0xDC alone inside a string, which the skipper let
/// through while the parser refused it.
@Suite("skipping agrees with parsing")
struct SkipAgreesWithParseTests {
    @Test(
        "parse and skip accept and refuse the same strings",
        arguments: [
            [UInt8](#"{"a":[1,2.5e3,-0,true,false,null,"\u00e9"#.utf8) + [0xDC] + Array(#"ud83d\ude00"],"b":{}}"#.utf8),
            Array(#""\ud800""#.utf8), Array(#""\udc00""#.utf8), Array(#""\ud800\u0041""#.utf8), Array(#""\ud83d\ude00""#.utf8),
            [0x22, 0xC3, 0xA9, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            Array(#""plain ascii longer than twenty-four bytes, to take the long path""#.utf8),
            Array(#""long path with a bad byte after twenty-four bytes "#.utf8) + [0xFF, 0x22],
        ])
    func agree(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser.Reader(buffer)
            var skipper = JSONParser.Reader(buffer)
            let parsed = (try? parser.parseValue()) != nil
            let skipped = (try? skipper.skipValue()) != nil
            #expect(parsed == skipped, "parse \(parsed), skip \(skipped)")
            if parsed { #expect(parser.index == skipper.index) }
        }
    }
}
