import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

@Suite("timelines")
struct TimelineTests {
    static func instant(_ text: String) -> Int64 { ISODate.instant(of: text)! }

    @Test(arguments: [
        (TimeBucket.year, "2019-07-04T12:00:00Z", "2019", "2020-01-01"),
        (.month, "2019-07-04T12:00:00Z", "2019-07", "2019-08-01"),
        (.month, "2019-12-31T23:59:59Z", "2019-12", "2020-01-01"),
        (.week, "2019-07-04T12:00:00Z", "2019-07-01", "2019-07-08"),  // a Thursday: its Monday
        (.week, "2019-07-07T23:00:00Z", "2019-07-01", "2019-07-08"),  // a Sunday
        (.week, "2019-07-08T00:00:00Z", "2019-07-08", "2019-07-15"),  // a Monday
        (.week, "1970-01-01T00:00:00Z", "1969-12-29", "1970-01-05"),
        (.day, "2020-02-29T10:00:00-05:00", "2020-02-29", "2020-03-01"),
        (.day, "2019-01-05T22:00:00-05:00", "2019-01-06", "2019-01-07"),  // UTC
        (.year, "1851-09-18T05:00:00+0000", "1851", "1852-01-01"),
        (.month, "1900-02-10", "1900-02", "1900-03-01"),  // not a leap year
    ])
    func aBucketStartsAtItsFirstInstantAndEndsWhereTheNextStarts(bucket: TimeBucket, date: String, label: String, next: String) {
        let start = bucket.start(of: Self.instant(date))
        #expect(bucket.label(start) == label)
        #expect(start <= Self.instant(date))
        #expect(bucket.next(after: start) == Self.instant(next))
        #expect(bucket.start(of: bucket.next(after: start) - 1) == start)
    }

    /// Counts per bucket worked out from the documents themselves.
    static func bruteForce(_ documents: [JSONValue], _ bucket: TimeBucket, _ filter: Filter) -> [(String, Int)] {
        var counts: [Int64: Int] = [:]
        for document in documents where filter.matches(document, textSearch: StoreSchema.testArticles.textSearch) {
            guard case .string(let text)? = document["pub_date"], let instant = ISODate.instant(of: text) else { continue }
            counts[bucket.start(of: instant), default: 0] += 1
        }
        guard let first = counts.keys.min(), let last = counts.keys.max() else { return [] }
        var result: [(String, Int)] = []
        var start = first
        while start <= last {
            result.append((bucket.label(start), counts[start] ?? 0))
            start = bucket.next(after: start)
        }
        return result
    }

    @Test func aTimelineFromTheSegmentsAndTheirTailEqualsOneWorkedOutFromTheDocuments() throws {
        let folder = try TemporaryFolder()
        var documents = ArticleGenerator.corpus(count: 1_500, seed: 61, from: "2015-01-01", to: "2019-12-31")
        // Some documents with no date or a date that is not one.
        documents[3] = documents[3].setting("pub_date", to: .null)
        documents[4] = documents[4].setting("pub_date", to: .string("someday"))
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(flushThreshold: 1_000))
        _ = try store.upsert(Array(documents[..<1_200]))  // flushed into a segment
        _ = try store.upsert(Array(documents[1_200...]))  // the tail after it
        let logOnly = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(usesSegments: false))
        let filters: [Filter] = [
            .all, try FilterParser.parse("section_name = Sports"), try FilterParser.parse("water supply"),
            try FilterParser.parse("pub_date >= 2017-03-01 and pub_date < 2017-05-01"),
        ]
        for bucket in TimeBucket.allCases {
            for filter in filters {
                let expected = Self.bruteForce(documents, bucket, filter)
                for source in [store, logOnly] {
                    let (buckets, scanned) = try source.timeline("pub_date", by: bucket, matching: filter)
                    #expect(scanned.isEmpty)
                    let got = buckets.map { (bucket.label($0.start), $0.count) }
                    #expect(got.map(\.0) == expected.map(\.0), "\(bucket) \(filter)")
                    #expect(got.map(\.1) == expected.map(\.1), "\(bucket) \(filter)")
                }
            }
        }
        #expect(try store.timeline("pub_date", by: .year, matching: try FilterParser.parse("section_name = Nothing")).buckets.isEmpty)
        try expectConsistent(store)
    }

    @Test func severalTimelinesAtOnceShareTheirSpansAndEachEqualsOneWorkedOutFromTheDocuments() throws {
        let folder = try TemporaryFolder()
        var documents = ArticleGenerator.corpus(count: 1_200, seed: 62, from: "2012-01-01", to: "2019-12-31")
        documents[5] = documents[5].setting("pub_date", to: .null)
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(flushThreshold: 500))
        _ = try store.upsert(Array(documents[..<1_000]))  // two segments
        _ = try store.upsert(Array(documents[1_000...]))  // and a tail
        let logOnly = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(usesSegments: false))
        let filters: [Filter] = [
            .all, try FilterParser.parse("section_name = Sports"), try FilterParser.parse("water"),
            // Only in 2015 and 2016: the others' spans around it, with zeros.
            try FilterParser.parse("pub_date >= 2015-01-01 and pub_date < 2017-01-01 and section_name = World"),
            try FilterParser.parse("section_name = Nothing"),
        ]
        for bucket in [TimeBucket.year, .month] {
            // Each segment's dates walked whole, and in stretches of 1 and 7 rows that cut
            // buckets in two (the segments' pages let go after each).
            let walks = [(store, DocumentStore.timelineRowsPerStretch), (store, 1), (store, 7), (logOnly, 7)]
            for (source, rows) in walks {
                let (starts, counts, scanned) = try source.timelines("pub_date", by: bucket, matching: filters, rowsPerStretch: rows)
                #expect(scanned.isEmpty)
                #expect(counts.count == filters.count)
                let all = Self.bruteForce(documents, bucket, .all)
                #expect(starts.map(bucket.label) == all.map(\.0), "\(bucket)")
                for (filter, got) in zip(filters, counts) {
                    var expected = Dictionary(uniqueKeysWithValues: Self.bruteForce(documents, bucket, filter))
                    for (label, _) in all where expected[label] == nil { expected[label] = 0 }
                    #expect(got == all.map { expected[$0.0]! }, "\(bucket) \(filter)")
                }
            }
        }
        #expect(try store.timelines("pub_date", by: .year, matching: []).starts.isEmpty)
        let none = try store.timelines("pub_date", by: .year, matching: [try FilterParser.parse("section_name = Nothing")])
        #expect(none.starts.isEmpty && none.counts == [[]])
    }
}
