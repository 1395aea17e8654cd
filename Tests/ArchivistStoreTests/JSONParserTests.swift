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
