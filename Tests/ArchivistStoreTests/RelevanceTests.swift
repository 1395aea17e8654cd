import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Ranked text search: one scoring function with the whole store's term statistics, so the order
/// does not depend on how the documents are split into segments.
@Suite("relevance across segments")
struct RelevanceTests {
    /// The same documents stored in `chunks` flushes (with a tail after the last), or in none.
    static func store(_ documents: [JSONValue], chunks: Int?, folder: TemporaryFolder) throws -> DocumentStore {
        let options: DocumentStore.Options =
            chunks == nil
            ? .init(lockTimeout: 5, flushThreshold: 0, usesSegments: false) : .init(lockTimeout: 5, flushThreshold: 0, mergeFactor: 1_000)
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        let size = max(1, documents.count / max(1, chunks ?? 1))
        for start in stride(from: 0, to: documents.count, by: size) {
            for result in try store.upsert(Array(documents[start..<min(documents.count, start + size)])) { _ = try result.outcome.get() }
            if let chunks, chunks > 1, start + size < documents.count - 40 { try store.merge() }
        }
        return store
    }

    @Test("the ranked order of text searches is the same from the log alone, one segment, and seven segments with a tail")
    func rankingDoesNotDependOnSegments() throws {
        var generator = ArticleGenerator(seed: 41)
        let documents = generator.documents(900)
        let searches = ["election", "budget storm", "museum festival", "strike", "court water", "brooklyn market"]
        var rankings: [[String]] = []
        for chunks in [nil, 1, 7] as [Int?] {
            let folder = try TemporaryFolder()
            let store = try Self.store(documents, chunks: chunks, folder: folder)
            if chunks == 7 { #expect(try store.statistics().segments?.count ?? 0 >= 6) }
            var ranking: [String] = []
            for search in searches {
                ranking += try store.find(Query(filter: .text(search), limit: 25)).ids
                ranking.append("|")
            }
            rankings.append(ranking)
        }
        #expect(rankings[0] == rankings[1], "one segment ranks otherwise than the log")
        #expect(rankings[0] == rankings[2], "seven segments and a tail rank otherwise than the log")
        #expect(rankings[0].filter { $0 != "|" }.count > 20)
    }

    @Test("a word few documents hold counts for more than one most hold")
    func rareWordsWeighMore() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 5, flushThreshold: 0))
        // "common" is in every headline; "rare" in one document's; each of the two first
        // documents holds one of them twice, in its abstract.
        try store.put(try json(#"{"headline": {"main": "common rare"}, "abstract": "common common"}"#), id: "a-common-twice")
        try store.put(try json(#"{"headline": {"main": "common rare"}, "abstract": "rare rare"}"#), id: "b-rare-twice")
        for n in 0..<30 { try store.put(try json(#"{"headline": {"main": "common \#(n)"}}"#), id: "filler-\(n)") }
        try store.merge()
        #expect(try store.find(Query(filter: .text("common rare"), limit: 2)).ids == ["b-rare-twice", "a-common-twice"])
        let statistics = Relevance.Statistics(documents: 32, frequencies: ["common": 32, "rare": 2])
        #expect(statistics.inverseFrequency(of: "rare") > statistics.inverseFrequency(of: "common"))
        #expect(statistics.inverseFrequency(of: "common") > 0)
    }
}
