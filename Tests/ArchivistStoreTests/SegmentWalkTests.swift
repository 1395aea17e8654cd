import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The first matches in one key's order without a total (the shell's `find ... --sort --limit`):
/// each segment's dictionary walked from the end the sort starts at, a window of rows at a time,
/// and the segments' walks merged lazily, passing over what the tail changed.
@Suite("segment walks")
struct SegmentWalkTests {
    static let filters = [
        "pub_date >= 2015-01-01", "pub_date < 2003-01-01", "pub_date = 2015-07-01", "pub_date >= 2001-01-01 and pub_date < 2019-06-01",
        "pub_date > 2090-01-01", "word_count > 700", "word_count >= 200 and word_count <= 400",
        "section_name = Sports and pub_date >= 2010-01-01", "word_count > 300 and section_name in (World, Sports) and word_count < 2000",
    ]

    @Test(
        "the first matches by one key without a total agree with the log, whatever the window, and with what the tail changed",
        arguments: [StorageMode.oneSegment, .manySegments, .mergedSegments])
    func windowedWalksAgreeWithTheLog(_ mode: StorageMode) throws {
        let fixture = try QueryFixture(seed: 81, count: 600, mode: mode)
        let logOnly = try DocumentStore(folder: fixture.folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
        var compared = 0
        for text in Self.filters {
            let filter = try FilterParser.parse(text)
            let path = text.hasPrefix("word_count") ? "word_count" : "pub_date"
            for descending in [true, false] {
                for (skip, limit) in [(0, 1), (0, 2), (1, 1), (0, 10), (3, 7), (0, 150), (10, 400), (0, 5_000)] {
                    let key = SortKey(path, descending: descending)
                    // A fresh store each time: its segments come without the tail's masks looked up.
                    let store = try DocumentStore(folder: fixture.folder.data, schema: .testArticles, options: mode.options)
                    let answered = try store.find(Query(filter: filter, sort: [key], skip: skip, limit: limit, countsTotal: false))
                    let expected = try logOnly.find(Query(filter: filter, sort: [key], skip: skip, limit: limit))
                    #expect(answered.ids == expected.ids, "\(mode) \(text) by \(key) skip \(skip) limit \(limit)")
                    #expect(answered.scannedPaths.isEmpty)
                    // Without a count, the total is at least the window's end (all the matches
                    // when there are fewer), and never more than the matches.
                    #expect(answered.total <= expected.total && answered.total >= min(expected.total, skip + answered.ids.count))
                    compared += 1
                }
            }
        }
        #expect(compared == Self.filters.count * 2 * 8)
        try expectConsistent(fixture.store)
    }

    @Test("a window never splits values that sort equal: a number written three ways keeps its documents in ID order")
    func windowsKeepTiesTogether() throws {
        let folder = try TemporaryFolder()
        let writer = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
        var generator = ArticleGenerator(seed: 82)
        // 130 word counts, each written as 123, 123.0 and 1.23e2 (three dictionary rows that sort
        // equal), and one lower: the first window's edge, 128 rows from the top, falls inside a
        // group of three.
        var documents: [JSONValue] = []
        for (index, document) in generator.documents(391).enumerated() {
            let value = 100 + index / 3
            let text = index == 390 ? "7" : ["\(value)", "\(value).0", "\(Double(value) / 100)e2"][index % 3]
            documents.append(document.setting("word_count", to: .number(text)))
        }
        for result in try writer.upsert(documents) { _ = try result.outcome.get() }
        try writer.merge()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
        let logOnly = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
        let segments = try #require(try store.segments(loading: ["word_count"], resolvingMasks: false))
        let field = try #require(try segments.searchers[0].snapshot.field("word_count"))
        #expect(field.rowCount == 391)
        let edge = field.rowCount - SegmentSearcher.firstWindowRows
        #expect(try field.row(edge).tiesWithPrevious, "the test's first window edge is inside a group of equal rows")
        let filter = try FilterParser.parse("word_count >= 50")
        for descending in [true, false] {
            for limit in [1, 42, 43, 44, 128, 129, 200, 390, 391] {
                let key = SortKey("word_count", descending: descending)
                let answered = try store.find(Query(filter: filter, sort: [key], limit: limit, countsTotal: false))
                let expected = try logOnly.find(Query(filter: filter, sort: [key], limit: limit))
                #expect(answered.ids == expected.ids, "by \(key) limit \(limit)")
            }
        }
        try expectConsistent(store)
    }

    @Test("the newest ten of a range read the blocks at the dictionary's end, not a binary search's")
    func newestTenReadFewBlocks() throws {
        // Each document its own minute: a dictionary of 3,000 rows (94 KiB, 24 blocks).
        let (folder, _, _) = try oneSegmentOfMinutes(seed: 83, count: 3_000, month: "2010-01")
        let filter = try FilterParser.parse("pub_date >= 2000-01-01")
        let key = SortKey("pub_date", descending: true)
        var checked: [Bool: Int] = [:]
        for counting in [false, true] {
            let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
            let segments = try #require(try store.segments(loading: ["pub_date"]))
            let searcher = segments.searchers[0]
            let before = searcher.snapshot.reader.checkedBlocks
            let walked = try #require(try searcher.sortedRange(filter, by: key, needed: 10, counting: counting))
            #expect(walked.found.count == 10)
            checked[counting] = searcher.snapshot.reader.checkedBlocks - before
        }
        // The window's dictionary rows and their postings (a block or two each), against the
        // searches for both ends of the range and the span of its postings.
        #expect(try #require(checked[false]) <= 4, "blocks checked: \(checked)")
        #expect(try #require(checked[true]) > (try #require(checked[false])) * 2, "blocks checked: \(checked)")
        // Past the doubling windows (128 + 256 + 512 + 1,024 rows), the rest walked as one range.
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
        let logOnly = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
        for descending in [true, false] {
            let query = Query(filter: filter, sort: [SortKey("pub_date", descending: descending)], limit: 3_000)
            let answered = try store.find(Query(filter: filter, sort: query.sort, limit: 3_000, countsTotal: false))
            #expect(answered.ids == (try logOnly.find(query)).ids)
            #expect(answered.ids.count == 3_000)
        }
    }

    @Test("a segment's walk that met only documents the tail removed is walked again, telling them apart", arguments: [1, 2, 3, 4])
    func walksOfRemovedDocumentsAreRedone(limit: Int) throws {
        let (folder, writer, documents) = try oneSegmentOfMinutes(seed: 84, count: 200, month: "2012-03")
        // The three newest removed after the segment: the tail holds their removals.
        try writer.remove(documents.suffix(3).map { try #require($0["_id"]?.stringValue) })
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
        let logOnly = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.logOnly.options)
        let filter = try FilterParser.parse("pub_date >= 2000-01-01")
        let key = SortKey("pub_date", descending: true)
        let answered = try store.find(Query(filter: filter, sort: [key], limit: limit, countsTotal: false))
        let expected = try logOnly.find(Query(filter: filter, sort: [key], limit: limit))
        #expect(answered.ids.count == limit)
        #expect(answered.ids == expected.ids)
        #expect(answered.ids.first == documents[196]["_id"]?.stringValue)
        try expectConsistent(store)
    }
}

/// A folder of one segment holding `count` generated documents, the `index`th published at
/// minute `index` of `month`; with its writer and the documents.
private func oneSegmentOfMinutes(seed: UInt64, count: Int, month: String) throws -> (TemporaryFolder, DocumentStore, [JSONValue]) {
    let folder = try TemporaryFolder()
    let writer = try DocumentStore(folder: folder.data, schema: .testArticles, options: StorageMode.oneSegment.options)
    var generator = ArticleGenerator(seed: seed)
    let documents = generator.documents(count).enumerated().map { index, document in
        document.setting("pub_date", to: .string(minuteStamp(month, index)))
    }
    for result in try writer.upsert(documents) { _ = try result.outcome.get() }
    try writer.merge()
    return (folder, writer, documents)
}

/// Minute `index` after the start of a month (`2012-03`), as a UTC timestamp.
private func minuteStamp(_ month: String, _ index: Int) -> String {
    String(format: "%@-%02dT%02d:%02d:00Z", month, 1 + index / 1440, (index / 60) % 24, index % 60)
}
