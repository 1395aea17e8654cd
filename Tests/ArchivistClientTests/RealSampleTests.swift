import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

/// Real NYT API responses (`NYTSamples`, with their provenance in its `SOURCES.md`).
@Suite struct RealSampleTests {
    static let folder = NYTSamples.folder

    static var sampleFiles: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test func everySampleListedInSourcesIsHere() throws {
        let sources = try String(contentsOfFile: Self.folder + "/SOURCES.md", encoding: .utf8)
        #expect(Self.sampleFiles.count >= 14)
        for file in Self.sampleFiles { #expect(sources.contains("| " + file + " |"), "\(file) has no provenance row") }
    }

    @Test(arguments: sampleFiles)
    func everyRealResponseDecodesOrFailsAsItShould(file: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: RealSampleTests.folder + "/" + file)))
        let root = try JSONParser.parse(bytes)
        if case .array(let docs) = root {
            // Only the docs of a response, cut out of their envelope: not a response, but every
            // document is one the model reads.
            #expect(throws: ClientError.self) { try SearchResponse(body: bytes, source: file) }
            for (index, document) in docs.enumerated() {
                try expectArticle(try Article(document: document, path: "[\(index)]"), reads: document, at: "\(file) [\(index)]")
            }
            return
        }
        if let problem = try expectedProblem(root, bytes: bytes, file: file) {
            Issue.record("\(file): \(problem)")
            return
        }
        if root["fault"] != nil || root["message"] != nil { return }
        guard case .array(let docs)? = root["response"]?["docs"] else {
            Issue.record("\(file): neither a fault nor a search response")
            return
        }
        // A page whose documents lack `_id` (a request with `fl=` that left it out) cannot be stored.
        if let missing = docs.firstIndex(where: { $0["_id"]?.stringValue == nil }) {
            #expect(throws: ClientError.missingID(path: "response.docs[\(missing)]")) {
                try SearchResponse(body: bytes, source: file)
            }
            return
        }
        let response = try SearchResponse(body: bytes, source: file)
        #expect(response.documents == docs)
        #expect(response.articles.map(\.id) == docs.map { $0["_id"]?.stringValue })
        if case .number(let hits)? = (root["response"]?["meta"] ?? root["response"]?["metadata"])?["hits"] {
            #expect(String(response.hits) == hits)
        }
        for (index, (article, document)) in zip(response.articles, docs).enumerated() {
            try expectArticle(article, reads: document, at: "\(file) docs[\(index)]")
        }
    }

    /// For a body that reports a failure (the gateway's fault, a server error's message), checks
    /// that decoding fails quoting it; returns what went wrong, or nil.
    private func expectedProblem(_ root: JSONValue, bytes: [UInt8], file: String) throws -> String? {
        let quotedText: String
        if let fault = root["fault"] {
            quotedText = fault["faultstring"]?.stringValue ?? ""
        } else if root["response"] == nil, let message = root["message"]?.stringValue {
            quotedText = message
        } else {
            return nil
        }
        let error = try #require(throws: ClientError.self) { try SearchResponse(body: bytes, source: file) }
        guard case .unexpectedShape(let path, let reason) = error else { return "\(error)" }
        #expect(path == (root["fault"] != nil ? "fault" : "message"))
        #expect(reason.contains("\"" + quotedText + "\""), "\(reason)")
        return nil
    }

    /// The typed model reads what the document holds, in every era's shape. A blank text (the
    /// 1963 archive's bylines are `""`) is no text.
    private func expectArticle(_ article: Article, reads document: JSONValue, at place: String) throws {
        if document["word_count"] != nil { #expect(article.wordCount != nil, "\(place)") }
        if document["pub_date"] != nil { #expect(article.pubDate != nil, "\(place)") }
        if case .string? = document["headline"]?["main"] { #expect(article.headline != nil, "\(place)") }
        if document["subsectoinName"] != nil { #expect(article.subsectionName != nil, "\(place)") }
        if case .array(let keywords)? = document["keywords"] { #expect(article.keywords.count == keywords.count, "\(place)") }
        if case .array(let images)? = document["multimedia"] { #expect(article.multimedia.count == images.count, "\(place)") }
        if case .string(let original)? = document["byline"]?["original"] {
            let blank = original.allSatisfy(\.isWhitespace)
            #expect(article.byline == (blank ? nil : original), "\(place)")
        }
    }
}
