import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// `JSONParser.parse(_:deferringArrayAt:)`: the whole text checked, the envelope built, the
/// deferred array's elements located and parsed later, each exactly as a parse of the whole gives.
@Suite struct DeferredJSONTests {
    static let path = ["response", "docs"]

    /// The deferred parse of `text`, its root and elements written compactly.
    static func deferred(_ text: String) throws -> (root: String, elements: [String]?) {
        let bytes = Array(text.utf8)
        let parsed = try JSONParser.parse(bytes, deferringArrayAt: path)
        let elements = try parsed.elements?.map { range in
            String(decoding: JSONWriter.compactBytes(try JSONParser.parse(bytes[range])), as: UTF8.self)
        }
        return (String(decoding: JSONWriter.compactBytes(parsed.root), as: UTF8.self), elements)
    }

    @Test(arguments: [
        (
            #"{"response":{"docs":[{"_id":"a"},{"_id":"b","x":[1,2]}],"meta":{"hits":2}}}"#,
            #"{"response":{"docs":[],"meta":{"hits":2}}}"#, [#"{"_id":"a"}"#, #"{"_id":"b","x":[1,2]}"#] as [String]?
        ),
        (#"{"response":{"meta":{"hits":0},"docs":[]}}"#, #"{"response":{"docs":[],"meta":{"hits":0}}}"#, []),
        (
            " \n{ \"response\" : { \"docs\" : [ 1 , \"two\" , null , [ ] ] } } \n",
            #"{"response":{"docs":[]}}"#, ["1", #""two""#, "null", "[]"]
        ),
        (#"{"response":{"docs":null}}"#, #"{"response":{"docs":null}}"#, nil),
        (#"{"response":{"docs":{"a":1}}}"#, #"{"response":{"docs":{"a":1}}}"#, nil),
        (#"{"response":[1,2]}"#, #"{"response":[1,2]}"#, nil),
        (#"{"copyright":"c"}"#, #"{"copyright":"c"}"#, nil),
        (#"[{"response":{"docs":[1]}}]"#, #"[{"response":{"docs":[1]}}]"#, nil),
        (#"{"docs":[1],"response":{"other":[2]}}"#, #"{"docs":[1],"response":{"other":[2]}}"#, nil),
        (#"{"response":{"docs":[1]},"response":{"docs":[2,3]}}"#, #"{"response":{"docs":[]}}"#, ["2", "3"]),
        ("\u{FEFF}{\"response\":{\"docs\":[\"\\u00e9\"]}}", #"{"response":{"docs":[]}}"#, [#""é""#]),
    ])
    func theEnvelopeIsBuiltAndTheArraysElementsLocated(text: String, root: String, elements: [String]?) throws {
        let result = try Self.deferred(text)
        #expect(result.root == root)
        #expect(result.elements == elements)
    }

    @Test func everyElementIsWhatAParseOfTheWholeGives() throws {
        var generator = ArticleGenerator(seed: 41)
        let docs = generator.documents(40)
        let body = JSONWriter.prettyBytes(
            .object(sorting: [
                JSONMember(key: "copyright", value: .string("c")),
                JSONMember(key: "response", value: .object(sorting: [JSONMember(key: "docs", value: .array(docs))])),
            ]))
        let parsed = try JSONParser.parse(body, deferringArrayAt: Self.path)
        let ranges = try #require(parsed.elements)
        #expect(ranges.count == 40)
        for (range, document) in zip(ranges, docs) {
            #expect(try JSONParser.parse(body[range]) == document)
        }
        #expect(parsed.root["copyright"] == .string("c"))
    }

    @Test func aBodyCutOffAnywhereFailsAsAParseFails() throws {
        let text = #"{"copyright":"c","response":{"docs":[{"_id":"a","n":[1,{"b":"x\"y"}]},{"_id":"b"}],"meta":{"hits":2}}}"#
        let bytes = Array(text.utf8)
        for length in 0..<bytes.count {
            let cut = Array(bytes[..<length])
            #expect(throws: JSONSyntaxError.self, "cut at \(length)") { try JSONParser.parse(cut, deferringArrayAt: Self.path) }
            #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(cut) }
        }
        #expect(try JSONParser.parse(bytes, deferringArrayAt: Self.path).elements?.count == 2)
    }

    @Test(arguments: [
        #"{"response":{"docs":[1,]}}"#, #"{"response":{"docs":[1 2]}}"#, #"{"response":{"docs":[01]}}"#,
        #"{"response":{"docs":["a\x"]}}"#, #"{"response":{"docs":[]}} x"#, #"{"response":{"docs":[}]}}"#,
        #"{"response" {"docs":[]}}"#, "",
    ])
    func invalidJSONInsideOrOutsideTheArrayIsRefused(text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(text.utf8), deferringArrayAt: Self.path) }
    }

    @Test func nestingInsideTheArrayKeepsTheDepthLimit() throws {
        let deep = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        let text = #"{"response":{"docs":["# + deep + "]}}"
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(text.utf8), deferringArrayAt: Self.path) }
        let shallow = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let fine = #"{"response":{"docs":["# + shallow + "]}}"
        #expect(try JSONParser.parse(Array(fine.utf8), deferringArrayAt: Self.path).elements?.count == 1)
    }
}
