import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct ValueTransformerTests {
    @Test(arguments: [
        (JSONValue.number("879"), 879 as Int?),
        (.string("879"), 879),
        (.string(" 879 "), 879),
        (.number("0"), 0),
        (.number("-3"), -3),
        (.number("879.0"), 879),
        (.number("1E+3"), 1000),
        (.number("879.5"), nil),
        (.string("n/a"), nil),
        (.string(""), nil),
        (.string("12abc"), nil),
        (.string("nan"), nil),
        (.string("inf"), nil),
        (.number("1e300"), nil),
        (.bool(true), nil),
        (.null, nil),
        (.array([.number("1")]), nil),
        (.object([]), nil),
    ])
    func integerReadsNumbersAndStringsOfDigitsOnly(value: JSONValue, expected: Int?) {
        #expect(JSONTransformer<Int>.integer(value) == expected)
    }

    @Test(arguments: [
        (JSONValue.string("Y"), true as Bool?),
        (.string("N"), false),
        (.string("y"), true),
        (.string("n"), false),
        (.string("yes"), true),
        (.string("false"), false),
        (.bool(true), true),
        (.bool(false), false),
        (.string(""), nil),
        (.string("maybe"), nil),
        (.null, nil),
        (.number("1"), nil),
    ])
    func flagReadsYesAndNoLetters(value: JSONValue, expected: Bool?) {
        #expect(JSONTransformer<Bool>.flag(value) == expected)
    }

    @Test(arguments: [
        (JSONValue.string("Op-Docs"), "Op-Docs" as String?),
        (.string("Using Restraint\nWith Bailouts"), "Using Restraint\nWith Bailouts"),
        (.string(" padded "), " padded "),
        (.string(""), nil),
        (.string(" \t\n"), nil),
        (.number("42"), nil),
        (.bool(false), nil),
        (.null, nil),
        (.array([]), nil),
        (.object([]), nil),
    ])
    func textIsANonBlankStringAndNothingElse(value: JSONValue, expected: String?) {
        #expect(JSONTransformer<String>.text(value) == expected)
    }

    @Test(arguments: [
        (JSONValue.string(""), "" as String?),
        (.string("x"), "x"),
        (.number("1"), nil),
        (.null, nil),
    ])
    func stringKeepsEmptyStringsButRefusesOtherTypes(value: JSONValue, expected: String?) {
        #expect(JSONTransformer<String>.string(value) == expected)
    }

    @Test(arguments: [
        ("2016-11-19T11:06:34Z", utc(2016, 11, 19, 11, 6, 34) as Date?),
        ("2018-10-26T17:11:14+0000", utc(2018, 10, 26, 17, 11, 14)),
        ("2025-04-11T14:30:00+00:00", utc(2025, 4, 11, 14, 30)),
        ("2018-10-26T12:11:14-0500", utc(2018, 10, 26, 17, 11, 14)),
        ("2018-10-27T02:41:14+09:30", utc(2018, 10, 26, 17, 11, 14)),
        ("2018-10-26T17:11:14.500Z", utc(2018, 10, 26, 17, 11, 14).addingTimeInterval(0.5)),
        ("2018-10-26T17:11:14", utc(2018, 10, 26, 17, 11, 14)),
        ("2008-09-18", utc(2008, 9, 18)),
        ("2016-02-29T00:00:00Z", utc(2016, 2, 29)),
        ("xyz", nil),
        ("", nil),
        ("2018-10-26junk", nil),
        ("2018-10-26T17:11:14Zjunk", nil),
        ("2018-10-26T17:11:14+0000 ", nil),
        (" 2018-10-26T17:11:14Z", nil),
        ("2018-10-26T25:11:14Z", nil),
        ("2018-13-01T00:00:00Z", nil),
        ("2018-02-30T00:00:00Z", nil),
        ("2015-02-29T00:00:00Z", nil),
        ("2018-10-26T17:11:14+000", nil),
        ("20181026", nil),
        ("2018-10-26T17:11:14.Z", nil),
        // Spellings the store's queries read as dates are dates here too.
        ("2018-10-26T17:11Z", utc(2018, 10, 26, 17, 11)),
        ("2018-10-26 17:11:14Z", utc(2018, 10, 26, 17, 11, 14)),
        ("2018-10-26T17:11:14.250", utc(2018, 10, 26, 17, 11, 14).addingTimeInterval(0.25)),
    ])
    func dateAcceptsEachOffsetFormAndRefusesAnythingMalformed(text: String, expected: Date?) {
        let date = JSONTransformer<Date>.date(.string(text))
        if let expected, let date {
            #expect(abs(date.timeIntervalSince(expected)) < 0.001, "\(text)")
        } else {
            #expect(date == expected, "\(text)")
        }
        // One reading of dates in the project: the article's date is the instant a query compares.
        #expect(date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == ISODate.instant(of: text), "\(text)")
    }

    @Test func dateRefusesValuesThatAreNotStrings() {
        #expect(JSONTransformer<Date>.date(.number("1479553594")) == nil)
        #expect(JSONTransformer<Date>.date(.null) == nil)
    }

    @Test(arguments: [
        (#"{"headline":{"main":"M"}}"#, "headline.main", #""M""# as String?),
        (#"{"headline":{"main":null}}"#, "headline.main", "null"),
        (#"{"headline":null}"#, "headline.main", nil),
        (#"{"byline":[]}"#, "byline.original", nil),
        (#"{"byline":[{"original":"x"}]}"#, "byline.original", nil),
        (#"{"byline":"By X"}"#, "byline.original", nil),
        (#"{}"#, "byline.original", nil),
        (#"{"a":{"b":{"c":[1]}}}"#, "a.b.c", "[1]"),
        (#"{"word_count":"879"}"#, "word_count", #""879""#),
    ])
    func keyPathFollowsObjectsOnly(document: String, path: String, expected: String?) throws {
        let found = JSONKeyPath(path).value(in: try json(document))
        #expect(found.map(JSONWriter.compactString) == expected)
    }

    @Test func listDropsTheElementsItsTransformerRefuses() {
        let transformer = JSONTransformer<[Int]>.list(of: .integer)
        #expect(transformer(.array([.number("1"), .string("2"), .null, .string("x"), .number("3")])) == [1, 2, 3])
        #expect(transformer(.array([])) == [])
        #expect(transformer(.null) == nil)
        #expect(transformer(.object([])) == nil)
    }

    @Test func mappingTriesEachKeyPathUntilOneIsAccepted() throws {
        struct Model: JSONMappable {
            var name: String?
            static var fieldMappings: [JSONFieldMapping<Model>] { [.map(\.name, from: "first", "second.inner", using: .text)] }
        }
        var model = Model()
        model.applyFieldMappings(from: try json(#"{"first":null,"second":{"inner":"B"}}"#))
        #expect(model.name == "B")
        model = Model()
        model.applyFieldMappings(from: try json(#"{"first":"A","second":{"inner":"B"}}"#))
        #expect(model.name == "A")
        model = Model(name: "kept")
        model.applyFieldMappings(from: try json(#"{"first":7}"#))
        #expect(model.name == "kept")
    }
}
