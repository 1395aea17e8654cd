import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

/// The bytes of a fixture file in `Fixtures/`.
func fixtureBytes(_ name: String) throws -> [UInt8] {
    let url = try #require(
        Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"),
        "fixture \(name).json is missing")
    return [UInt8](try Data(contentsOf: url))
}

/// A fixture file read as a response.
func fixtureResponse(_ name: String) throws -> SearchResponse {
    try SearchResponse(body: fixtureBytes(name), source: name)
}

/// The error `body` fails with, or nil when it decodes.
func decodingError(_ body: String, source: String = "test") -> ClientError? {
    do {
        _ = try SearchResponse(body: Array(body.utf8), source: source)
        return nil
    } catch {
        return error
    }
}

@Suite struct SearchResponseTests {
    @Test(arguments: [
        ("2016-compact", 27, 10 as Int?, ["583032447c459f6a5fcceedd", "57a0cb0e38f0d8762aab67f1", "4fd2ba9c8eb7c8105d8b0cc7"]),
        ("2018-transition", 20382, 0, ["5bd34aba068401528a2e252a"]),
        ("2019-era", 1276, 0, ["5479dae338f0d86bf592fedf", "545db51738f0d877bc740c84", "5c50b4d800a1bc2872e9f6ad"]),
        (
            "2025-metadata", 2, 0,
            ["nyt://article/9c3f6e2a-1b4d-5e8f-a7c6-2d1e0f9b8a7c", "nyt://article/1d2e3f4a-5b6c-5d7e-8f9a-0b1c2d3e4f5a"]
        ),
        ("docs-null", 0, 0, []),
        ("empty-page", 12, 20, []),
    ])
    func eachSchemaEraDecodesWithItsHitsOffsetAndIDs(name: String, hits: Int, offset: Int?, ids: [String]) throws {
        let response = try fixtureResponse(name)
        #expect(response.hits == hits)
        #expect(response.offset == offset)
        #expect(response.articles.map(\.id) == ids)
        #expect(response.documents.count == ids.count)
        #expect(response.articles.allSatisfy { $0.pubDate != nil && $0.wordCount != nil })
    }

    @Test func compact2016PageReadsStringCountsEscapedSlashesAndEmptyBylines() throws {
        let articles = try fixtureResponse("2016-compact").articles
        let wire = articles[0]
        #expect(wire.webURL == "http://www.nytimes.com/aponline/2016/11/19/world/africa/ap-af-nigeria-boko-haram-suicide-bomber.html")
        #expect(wire.wordCount == 133)
        #expect(wire.source == "AP")
        #expect(wire.newsDesk == nil)
        #expect(wire.abstract == nil)
        #expect(wire.keywords.isEmpty && wire.multimedia.isEmpty)
        #expect(wire.byline == "By THE ASSOCIATED PRESS")
        #expect(wire.pubDate == utc(2016, 11, 19, 11, 6, 34))

        let travel = articles[1]
        #expect(travel.byline == nil)  // "byline": []
        #expect(travel.wordCount == 2419)
        #expect(travel.kicker == "Op-Docs")
        #expect(travel.printHeadline == nil)
        #expect(
            travel.keywords == [
                Keyword(name: "glocations", value: "Odessa (Tex)", rank: 1, isMajor: true),
                Keyword(name: "subject", value: "Automobiles", rank: 2, isMajor: false),
            ])
        #expect(
            travel.multimedia.map(\.url) == [
                "images/2016/08/07/travel/07trains/07trains-thumbWide.jpg",
                "images/2016/08/07/travel/07trains/07trains-articleLarge.jpg",
            ])
        #expect(travel.multimedia.map(\.subtype) == ["wide", "xlarge"])

        let blogpost = articles[2]
        #expect(blogpost.documentType == "blogpost")
        #expect(blogpost.typeOfMaterial == "Blog")
        #expect(blogpost.leadParagraph == nil)
        #expect(blogpost.wordCount == 56)  // an int among strings
        #expect(blogpost.headline == "Krak&#243;w&#8217;s Quiet Square")  // entities are kept as received
        #expect(blogpost.snippet == "Kraków’s quiet square, revisited.")
        #expect(blogpost.keywords.allSatisfy { $0.rank == nil && $0.isMajor == nil })
        #expect(blogpost.byline == "By JANE E. BRODY")
    }

    @Test func transition2018PageReadsURIIntegerCountsAndCrops() throws {
        let article = try #require(try fixtureResponse("2018-transition").articles.first)
        #expect(article.uri == "nyt://article/7e5b1a0c-6a43-5a4b-8c1a-0d9e2b1c3f4a")
        #expect(article.wordCount == 1333)
        #expect(article.pubDate == utc(2018, 10, 26, 17, 11, 14))
        #expect(article.headline == "A Study Vanishes")
        #expect(article.kicker == nil)
        #expect(article.printHeadline == "Study on Private Equity Vanishes")
        #expect(article.sectionName == nil && article.leadParagraph == nil && article.abstract == nil)
        #expect(article.newsDesk == "Science")
        #expect(article.keywords.map(\.rank) == [1, 2, 3])
        #expect(article.keywords.allSatisfy { $0.isMajor == false })
        #expect(article.multimedia.count == 3)
        #expect(article.multimedia.map(\.cropName) == ["articleLarge", "thumbWide", "blog480"])
        #expect(
            article.leadImage
                == Media(
                    url: "images/2018/10/25/science/00DERMATOLOGY1/merlin_145846323_5ff919cd-articleLarge.jpg",
                    width: 600, height: 400, subtype: "xlarge", cropName: "articleLarge"))
    }

    @Test func era2019PageReadsTheMisspelledSubsectionNullMajorAndMissingByline() throws {
        let articles = try fixtureResponse("2019-era").articles
        #expect(articles.map(\.subsectionName) == ["Economy", nil, "Africa"])
        #expect(articles[0].keywords.allSatisfy { $0.isMajor == nil })
        #expect(articles[0].printHeadline == "Using Restraint\nWith Bailouts")
        #expect(articles[0].kicker == "Breakingviews.com")
        #expect(articles[0].uri == nil)
        let letter = articles[1]
        #expect(letter.typeOfMaterial == "Letter")
        #expect(letter.byline == nil)
        #expect(letter.newsDesk == nil)
        #expect(letter.uri == "nyt://article/0a2f5d4e-8c1b-5d3e-9f7a-6b4c2e1d0f9a")
        #expect(letter.pubDate == utc(2008, 11, 18, 18, 4, 48))
        #expect(letter.keywords == [Keyword(name: "subject", value: "Credit Crisis", rank: 1, isMajor: false)])
        #expect(articles[2].multimedia.map(\.cropName) == [nil])
        #expect(articles[2].multimedia.first?.width == 600)
    }

    @Test func metadata2025PageReadsTheImageObjectAndBlankStringsAsNil() throws {
        let response = try fixtureResponse("2025-metadata")
        let court = response.articles[0]
        #expect(court.headline == "Justices Weigh a Longer Season")
        #expect(court.kicker == "Sidebar")
        #expect(court.printHeadline == "Longer Season Under Review")
        #expect(court.byline == "By Adam Liptak")
        #expect(court.subsectionName == "Politics")
        #expect(court.wordCount == 1204)
        #expect(court.pubDate == utc(2025, 4, 10, 9, 3, 9))
        #expect(court.keywords.map(\.name) == ["Subject", "Person"])
        #expect(court.multimedia.map(\.subtype) == ["default", "thumbnail"])
        #expect(court.multimedia.allSatisfy { $0.credit == "Kenny Holston/The New York Times" })
        #expect(court.leadImage?.width == 600)

        let recipe = response.articles[1]
        #expect(recipe.kicker == nil && recipe.printHeadline == nil && recipe.byline == nil)
        #expect(recipe.subsectionName == nil && recipe.snippet == nil)
        #expect(recipe.multimedia.isEmpty)
        #expect(recipe.wordCount == 0)
        #expect(recipe.headline == "Crème Brûlée, Revisited")
        #expect(recipe.pubDate == utc(2025, 4, 11, 14, 30))
    }

    @Test(arguments: [
        #"{"response":{"meta":{"hits":3,"offset":0},"docs":[]}}"#,
        #"{"response":{"metadata":{"hits":3,"offset":0},"docs":[]}}"#,
        #"{"response":{"meta":null,"metadata":{"hits":3,"offset":0},"docs":[]}}"#,
        #"{"response":{"docs":[],"metadata":{"offset":0,"hits":3}}}"#,
    ])
    func hitsComeFromMetaOrMetadata(body: String) throws {
        let response = try SearchResponse(body: Array(body.utf8), source: "test")
        #expect(response.hits == 3 && response.offset == 0)
    }

    @Test func docsAbsentReadsAsAnEmptyPage() throws {
        let response = try SearchResponse(body: Array(#"{"response":{"metadata":{"hits":0}}}"#.utf8), source: "test")
        #expect(response.documents.isEmpty && response.articles.isEmpty)
        #expect(response.hits == 0)
        #expect(response.offset == nil)
    }

    @Test func brokenFixturesFailWithTheKeyPathThatIsWrong() throws {
        #expect(throws: ClientError.missingID(path: "response.docs[1]")) { try fixtureResponse("doc-without-id") }
        #expect(throws: ClientError.unexpectedShape(path: "response.docs", reason: "expected an array, found object")) {
            try fixtureResponse("docs-object")
        }
        let truncated = try fixtureBytes("truncated")
        let error = try #require(throws: ClientError.self) {
            try SearchResponse(body: truncated, source: "page 2 of \"bailout\"")
        }
        guard case .invalidJSON(let source, let syntax) = error else {
            Issue.record("expected invalidJSON, got \(error)")
            return
        }
        #expect(source == "page 2 of \"bailout\"")
        #expect(syntax.offset > 0 && syntax.offset <= truncated.count, "\(syntax)")
    }

    @Test func aFaultBodyQuotesTheFaultString() throws {
        let error = try #require(throws: ClientError.self) { try fixtureResponse("fault-429") }
        #expect(
            error
                == .unexpectedShape(
                    path: "fault",
                    reason: "the API answered with a fault instead of results: \"Rate limit quota violation. Quota limit  exceeded. "
                        + "Identifier : 5c99e130-2e7e-4264-813a-f994f100d1f2\" (policies.ratelimit.QuotaViolation)"))
        #expect(
            decodingError(#"{"fault":{"faultstring":"Invalid ApiKey"}}"#)
                == .unexpectedShape(path: "fault", reason: "the API answered with a fault instead of results: \"Invalid ApiKey\""))
    }

    @Test func anErrorStatusQuotesTheFirstError() throws {
        let error = try #require(throws: ClientError.self) { try fixtureResponse("status-error") }
        #expect(
            error
                == .unexpectedShape(
                    path: "errors",
                    reason:
                        "the API answered with status \"ERROR\" instead of results: \"Invalid value for field: begin_date\" (and 1 more)"))
        #expect(
            decodingError(#"{"status":"ERROR"}"#)
                == .unexpectedShape(path: "status", reason: "the API answered with status \"ERROR\" instead of results"))
        #expect(
            decodingError(#"{"message":"Too many requests"}"#)
                == .unexpectedShape(path: "message", reason: "the API answered with a message instead of results: \"Too many requests\""))
    }

    @Test(arguments: [
        ("[]", "(response body)"),
        (#""OK""#, "(response body)"),
        (#"{"status":"OK","copyright":"c"}"#, "response"),
        (#"{"response":null}"#, "response"),
        (#"{"response":[]}"#, "response"),
        (#"{"response":{"docs":[]}}"#, "response.meta"),
        (#"{"response":{"meta":[],"docs":[]}}"#, "response.meta"),
        (#"{"response":{"metadata":7,"docs":[]}}"#, "response.metadata"),
        (#"{"response":{"meta":{"offset":0},"docs":[]}}"#, "response.meta.hits"),
        (#"{"response":{"meta":{"hits":"27"},"docs":[]}}"#, "response.meta.hits"),
        (#"{"response":{"meta":{"hits":1.5},"docs":[]}}"#, "response.meta.hits"),
        (#"{"response":{"meta":{"hits":-1},"docs":[]}}"#, "response.meta.hits"),
        (#"{"response":{"metadata":{"hits":null},"docs":[]}}"#, "response.metadata.hits"),
        (#"{"response":{"meta":{"hits":5},"docs":"none"}}"#, "response.docs"),
        (#"{"response":{"meta":{"hits":5},"docs":[{"_id":"a"},{"_id":"b"},{"_id":"c"},{"_id":"d"},[]]}}"#, "response.docs[4]"),
        (#"{"response":{"meta":{"hits":5},"docs":[{"_id":"a"},{"_id":"b"},{"_id":"c"},{"_id":"d"},{"id":"e"}]}}"#, "response.docs[4]"),
    ])
    func aWrongShapeIsAnErrorNamingItsKeyPath(body: String, path: String) {
        switch decodingError(body) {
        case .unexpectedShape(let found, _)?, .missingID(let found)?:
            #expect(found == path)
        case let other:
            Issue.record("expected an error at \(path), got \(String(describing: other))")
        }
    }

    @Test func shapeErrorsSayWhatWasFound() {
        #expect(decodingError("[]") == .unexpectedShape(path: "(response body)", reason: "expected an object, found array"))
        #expect(
            decodingError(#"{"status":"OK","copyright":"c"}"#)
                == .unexpectedShape(path: "response", reason: "missing (the body has keys copyright, status)"))
        #expect(
            decodingError(#"{"response":{"meta":{"hits":"27"}}}"#)
                == .unexpectedShape(path: "response.meta.hits", reason: "expected a whole number of hits, found the string \"27\""))
        #expect(decodingError(#"{"response":{"meta":{}}}"#) == .unexpectedShape(path: "response.meta.hits", reason: "missing"))
        #expect(
            decodingError(#"{"response":{"meta":{"hits":1},"docs":[7]}}"#)
                == .unexpectedShape(path: "response.docs[0]", reason: "expected a document (object), found number"))
        #expect(
            decodingError("{\"response\":", source: "page 0 of \"jury\"")?.errorDescription
                == "page 0 of \"jury\": invalid JSON at byte 12: unexpected end of input")
    }

    @Test func documentsAreTheRawParsedDocumentsWithNothingDroppedOrRewritten() throws {
        let rawDocuments = [
            #"{"_id":"5479dae338f0d86bf592fedf","score":0.0,"word_count":"879","headline":{"main":"M","kicker":null,"sub":null},"blog":[],"slideshow_credits":null}"#,
            #"{"_id":"nyt://article/x","score":1E+5,"big":12345678901234567890,"neg":-0,"url":"http:\/\/www.nytimes.com\/a","unknown":{"deep":[1,{"x":[]}]}}"#,
            #"{"_id":"dup","a":1,"a":2,"z":"caf\u00e9 \ud83d\ude00"}"#,
        ]
        let body = #"{"response":{"meta":{"hits":3,"offset":0},"docs":["# + rawDocuments.joined(separator: ",") + "]}}"
        let response = try SearchResponse(body: Array(body.utf8), source: "test")
        #expect(response.documents == (try rawDocuments.map { try JSONParser.parse($0) }))
        #expect(JSONWriter.compactString(response.documents[0]).contains(#""score":0.0"#))
        #expect(JSONWriter.compactString(response.documents[0]).contains(#""kicker":null"#))
        #expect(response.documents[1]["score"] == .number("1E+5"))
        #expect(response.documents[1]["big"] == .number("12345678901234567890"))
        #expect(response.articles.map(\.id) == ["5479dae338f0d86bf592fedf", "nyt://article/x", "dup"])

        for name in ["2016-compact", "2018-transition", "2019-era", "2025-metadata"] {
            let bytes = try fixtureBytes(name)
            let parsed = try JSONParser.parse(bytes)
            guard case .array(let docs)? = parsed["response"]?["docs"] else {
                Issue.record("\(name): no docs")
                continue
            }
            #expect(try SearchResponse(body: bytes, source: name).documents == docs, "\(name)")
        }
    }
}
