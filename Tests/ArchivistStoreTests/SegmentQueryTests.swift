import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Queries answered from the segments' structures and the log after them (not by the fallback):
/// the same answers as a store that reads the whole log.
@Suite("segment queries")
struct SegmentQueryTests {
    static let filters: [String] = [
        "section_name = Sports", "section_name in (Sports, World) and pub_date >= 2015-01-01",
        "pub_date >= 2015-01-01 and pub_date < 2016-01-01", "pub_date = 2015-07-01", "word_count > 500",
        "not section_name = Sports", "section_name = Sports or news_desk = Foreign", "keywords.value = 'Politics and Government'",
        "keywords.value != 'Politics and Government'", "headline.main ~ knicks", "section_name exists", "byline.original missing",
        #""election""#, #""election" and section_name = U.S."#, "section_name > M",
        "pub_date >= 2015-01-01", "pub_date < 2001-06-01", "pub_date > 2090-01-01", "word_count >= 800",
        "word_count >= 300 and word_count < 900",
    ]

    /// The modes whose stores answer from segments (a log-only store has none to compare).
    static let segmentedModes = StorageMode.allCases.filter { $0 != .logOnly }

    @Test("filters, orders, windows and facets come from the segments and agree with the log", arguments: segmentedModes)
    func segmentsAgreeWithTheLog(_ mode: StorageMode) throws {
        let fixture = try QueryFixture(seed: 77, count: 600, mode: mode)
        let logOnly = try DocumentStore(folder: fixture.folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
        let store = fixture.store
        // The queries and facets answered from the segments and compared: none would be a pass
        // that checked nothing.
        var compared = (queries: 0, facets: 0)
        for text in Self.filters {
            let filter = try FilterParser.parse(text)
            let needed = QueryIndex.neededPaths(filter: filter, sort: [], textSearch: store.schema.textSearch)
            let segments = try #require(try store.segments(loading: needed.union(["pub_date", "word_count"])))
            // A field with arrays inside its values (a keyword whose value is a list) is answered the slow way.
            let nested = try filter.paths.contains { path in
                try segments.searchers.contains { try $0.snapshot.field(path)?.hasNestedArrays == true }
            }
            for query in [
                Query(filter: filter), Query(filter: filter, skip: 3, limit: 7),
                Query(filter: filter, sort: [SortKey("pub_date", descending: true)], limit: 10),
                Query(filter: filter, sort: [SortKey("pub_date")], skip: 5, limit: 5),
                Query(filter: filter, sort: [SortKey("word_count", descending: true)], limit: 12),
                Query(filter: filter, sort: [SortKey("word_count")], skip: 2, limit: 0),
            ] {
                if nested {
                    #expect(try store.segmentedFind(query, segments) == nil, "\(text)")
                    continue
                }
                let answered = try #require(try store.segmentedFind(query, segments), "\(text) was not answered from the segments")
                let expected = try logOnly.find(query)
                #expect(answered.ids == expected.ids, "\(text) \(query.sort) \(query.skip) \(String(describing: query.limit))")
                #expect(answered.total == expected.total, "\(text)")
                compared.queries += 1
            }
            #expect(try store.count(matching: filter).count == logOnly.count(matching: filter).count, "\(text)")
            // What stats reports of the documents does not depend on where the store starts from.
            let (fromSnapshot, fromLog) = (try store.statistics(), try logOnly.statistics())
            #expect(fromSnapshot.documents == fromLog.documents && fromSnapshot.documentBytes == fromLog.documentBytes)
            #expect(fromSnapshot.indexLines == fromLog.indexLines && fromSnapshot.deadEntries == fromLog.deadEntries)
            #expect(fromSnapshot.segments != nil && fromLog.segments == nil)
            for path in ["section_name", "keywords.value", "word_count"] {
                let facetSegments = try #require(try store.segments(loading: needed.union([path])))
                // A field with arrays inside its values (a keyword whose value is a list) is counted the slow way.
                if try nested || facetSegments.searchers.contains(where: { try #require(try $0.snapshot.field(path)).hasNestedArrays }) {
                    continue
                }
                let answered = try #require(try store.segmentedFacet(path, matching: filter, facetSegments), "facet \(path) \(text)")
                let expected = try logOnly.facet(path, matching: filter).values
                #expect(
                    answered.map { JSONWriter.compactString($0.value) } == expected.map { JSONWriter.compactString($0.value) },
                    "\(path) \(text)")
                #expect(answered.map(\.count) == expected.map(\.count), "\(path) \(text)")
                compared.facets += 1
            }
        }
        #expect(compared.queries > 0 && compared.facets > 0, "\(mode): answered from the segments and compared: \(compared)")
    }
}

extension SegmentQueryTests {
    @Test(
        "a range on the field a query sorts by is answered by walking each segment's dictionary, with documents changed and removed in later segments and the tail",
        arguments: [
            ("pub_date >= 2015-01-01", "pub_date", true), ("pub_date < 2003-01-01", "pub_date", false),
            ("pub_date = 2015-07-01", "pub_date", true), ("word_count > 700", "word_count", true),
            ("word_count >= 200 and word_count <= 400", "word_count", false), ("pub_date > 2090-01-01", "pub_date", true),
            ("section_name = Sports and pub_date >= 2010-01-01", "pub_date", true),
            ("word_count > 300 and section_name in (World, Sports) and word_count < 2000", "word_count", false),
            (#""election" and pub_date < 2020-01-01"#, "pub_date", true),
        ])
    func rangesOnTheSortFieldWalkTheDictionary(text: String, path: String, descending: Bool) throws {
        let fixture = try QueryFixture(seed: 78, count: 400, mode: .manySegments)
        let logOnly = try DocumentStore(folder: fixture.folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
        let store = fixture.store
        let filter = try FilterParser.parse(text)
        let key = SortKey(path, descending: descending)
        let segments = try #require(
            try store.segments(loading: QueryIndex.neededPaths(filter: filter, sort: [key], textSearch: store.schema.textSearch)))
        for (skip, limit) in [(0, 10), (7, 3), (0, 1), (0, 100_000)] {
            let query = Query(filter: filter, sort: [key], skip: skip, limit: limit)
            for searcher in segments.searchers {
                let walked = try #require(try searcher.sortedRange(filter, by: key, needed: skip + limit), "\(text)")
                #expect(walked.found.count <= skip + limit)
            }
            let answered = try #require(try store.segmentedFind(query, segments))
            let expected = try logOnly.find(query)
            #expect(answered.ids == expected.ids, "\(text) skip \(skip) limit \(limit)")
            #expect(answered.total == expected.total, "\(text)")
        }
        try expectConsistent(store)
    }

    @Test(
        "a count of ranges on one field of one value per document is the postings' span, as the log counts it",
        arguments: [
            ("pub_date >= 2015-01-01 and pub_date < 2016-01-01", true), ("word_count > 500", true), ("pub_date = 2015-07-01", true),
            ("word_count >= 900 and word_count < 100", true), ("section_name = Sports", false),
            ("keywords.value = 'Politics and Government'", false), ("pub_date >= 2015-01-01 and section_name = Sports", false),
        ])
    func countsOfRangesAreSpans(text: String, answered: Bool) throws {
        // Generated documents only: each holds one value of each field counted here.
        let folder = try TemporaryFolder()
        let writer = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
        var generator = ArticleGenerator(seed: 80)
        let documents = generator.documents(300)
        for result in try writer.upsert(documents) { _ = try result.outcome.get() }
        try writer.merge()
        let filter = try FilterParser.parse(text)
        for changed in [false, true] {
            if changed {
                // A document removed after the segment would make the span one too many: not answered so.
                try writer.remove([try #require(documents[0]["_id"]?.stringValue)])
            }
            let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
            let logOnly = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
            let segments = try #require(try store.segments(loading: filter.paths))
            let span = try segments.searchers[0].countOfRange(filter)
            #expect((span != nil) == (answered && !changed), "\(text) changed: \(changed)")
            if let span { #expect(span == (try logOnly.count(matching: filter).count), "\(text)") }
            #expect(try store.count(matching: filter).count == logOnly.count(matching: filter).count, "\(text) changed: \(changed)")
            try expectConsistent(store)
        }
    }

    @Test(
        "a filter the dictionary walk cannot answer exactly is left to the other ways",
        arguments: [
            "section_name = Sports", "pub_date >= 2015-01-01 or pub_date < 2001-01-01", "keywords.value = 'Politics and Government'",
            "pub_date != 2015-07-01", "pub_date exists",
        ])
    func otherFiltersAreNotWalked(text: String) throws {
        let fixture = try QueryFixture(seed: 79, count: 120, mode: .oneSegment)
        let filter = try FilterParser.parse(text)
        let segments = try #require(try fixture.store.segments(loading: ["pub_date", "keywords.value"]))
        for path in ["pub_date", "keywords.value"] {
            #expect(try segments.searchers[0].sortedRange(filter, by: SortKey(path), needed: 10) == nil, "\(text) by \(path)")
        }
    }
}
