import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The segments of a folder as writers leave them: the tail flushed at its threshold, `check`
/// reading every block and comparing the segments with the whole log, `repair` building them again.
@Suite("segments in a folder")
struct SegmentFolderTests {
    static func store(_ folder: TemporaryFolder, flushThreshold: Int = 1, mergeFactor: Int = 8) throws -> DocumentStore {
        try DocumentStore(
            folder: folder.data, schema: .testArticles, options: .init(flushThreshold: flushThreshold, mergeFactor: mergeFactor))
    }

    /// The live documents the segments hold (nil: the store read the whole log).
    static func segmentDocuments(_ store: DocumentStore) throws -> Int? {
        try store.statistics().segments.map { $0.reduce(0) { $0 + $1.documents - $1.deletedDocuments } }
    }

    /// A segment file of the folder (the newest when there are several).
    static func segmentFile(_ folder: TemporaryFolder) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.segments)
        let name = try #require(names.filter { $0.hasSuffix(".seg") }.sorted().last)
        return folder.data + "/" + FileNames.segments + "/" + name
    }

    @Test("the tail is written into a segment when it reaches the threshold, and the log after it is read at open")
    func flushAtTheThreshold() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 4)
        for n in 0..<3 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        #expect(try Self.segmentDocuments(store) == nil)
        try store.put(try json(#"{"section_name": "S3"}"#), id: "d3")
        #expect(try Self.segmentDocuments(store) == 4)
        #expect(try store.statistics().changesAfterSegments == 0)
        try store.put(try json(#"{"section_name": "late"}"#), id: "d0")
        let reopened = try Self.store(folder, flushThreshold: 4)
        #expect(try reopened.statistics().changesAfterSegments == 1)
        #expect(try reopened.document(withID: "d0")?["section_name"] == .string("late"))
        #expect(try reopened.count(matching: ["section_name": "S0"]).count == 0)
        #expect(try reopened.count == 4)
        try expectConsistent(reopened)
    }

    @Test("a clean folder passes check; a flipped byte in a segment is a damaged-segments problem, and repair builds them again")
    func damagedSegmentIsReportedAndRepaired() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<5 { try store.put(try json(#"{"section_name": "S\#(n)", "headline": {"main": "H \#(n)"}}"#), id: "d\(n)") }
        #expect(try Self.segmentDocuments(store) == 5)
        try expectConsistent(store)
        let path = try Self.segmentFile(folder)
        var bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        bytes[100] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let problems = try Self.store(folder).check()
        #expect(problems.map(\.kind) == [.damagedSnapshot], "\(problems)")
        // The damaged segment is not trusted: the answers come from the log.
        let reopened = try Self.store(folder)
        #expect(try reopened.count(matching: ["section_name": "S3"]).count == 1)
        #expect(try reopened.document(withID: "d4")?["headline"]?["main"] == .string("H 4"))
        let report = try reopened.repair()
        #expect(report.rebuiltIndex)
        try expectConsistent(try Self.store(folder))
        #expect(try Self.segmentDocuments(try Self.store(folder)) == 5)
    }

    @Test("a log line changed by hand near the end of the part the segments cover is found by check")
    func logChangedUnderTheSegmentsIsFound() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<5 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        let indexPath = folder.data + "/" + FileNames.index
        var text = try String(contentsOfFile: indexPath, encoding: .utf8)
        // Same length, another section: the bytes near the end of the covered part are unchanged.
        text = text.replacingOccurrences(of: #""section_name":"S0""#, with: #""section_name":"X0""#)
        try text.write(toFile: indexPath, atomically: false, encoding: .utf8)
        // The log's last bytes changed: the segments are stale, not used, and rebuilt by the next
        // writer; the document no longer agrees with its line.
        let problems = try Self.store(folder).check()
        #expect(problems.map(\.file) == [FileNames.documentPath(for: "d0", in: .testArticles)], "\(problems)")
    }

    @Test("an entry of the log changed by hand, far enough from the end for the segments to stay current, is found by check")
    func entryChangedUnderTheSegmentsIsFound() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 0)
        for n in 0..<60 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        try store.merge()
        #expect(try Self.store(folder, flushThreshold: 0).check().isEmpty)
        let indexPath = folder.data + "/" + FileNames.index
        var lines = try String(contentsOfFile: indexPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains(#""id":"d0""#) })
        let hash = try #require(lines[line].range(of: #""hash":""#))
        var changed = String(lines[line])
        let digit = changed.index(changed.startIndex, offsetBy: changed.distance(from: lines[line].startIndex, to: hash.upperBound))
        changed.replaceSubrange(digit...digit, with: changed[digit] == "0" ? "1" : "0")
        lines[line] = Substring(changed)
        try lines.joined(separator: "\n").write(toFile: indexPath, atomically: false, encoding: .utf8)
        let problems = try Self.store(folder, flushThreshold: 0).check()
        #expect(problems.contains { $0.kind == .damagedSnapshot && $0.detail.contains("differs from the log") }, "\(problems)")
    }

    @Test("repair builds the segments again when they were deleted by hand, and answers stay the same")
    func repairRebuildsDeletedSegments() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<6 { try store.put(try json(#"{"section_name": "S\#(n % 2)"}"#), id: "d\(n)") }
        #expect(try Self.segmentDocuments(store) == 6)
        try FileManager.default.removeItem(atPath: folder.data + "/" + FileNames.segments)
        let reopened = try Self.store(folder)
        #expect(try Self.segmentDocuments(reopened) == nil)
        #expect(try reopened.count(matching: ["section_name": "S1"]).count == 3)
        let report = try reopened.repair()
        #expect(report.problems.isEmpty && !report.rebuiltIndex)
        let repaired = try Self.store(folder)
        #expect(try Self.segmentDocuments(repaired) == 6)
        #expect(try repaired.statistics().changesAfterSegments == 0)
        #expect(try repaired.count(matching: ["section_name": "S1"]).count == 3)
        try expectConsistent(repaired)
    }

    @Test("repair of a folder whose segments are sound leaves them sound")
    func repairWithSoundSegments() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<5 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        let report = try store.repair()
        #expect(report.problems.isEmpty && !report.rebuiltIndex)
        try expectConsistent(store)
        #expect(try Self.segmentDocuments(store) == 5)
    }

    @Test("check reports its progress through every document folder")
    func checkReportsProgress() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles)
        let documents = try (0..<40).map { try json(#"{"_id": "d\#($0)", "section_name": "S\#($0 % 3)"}"#) }
        for result in try store.upsert(documents) { _ = try result.outcome.get() }
        var reports: [(Int, Int)] = []
        #expect(try store.check { reports.append(($0, $1)) }.isEmpty)
        let buckets = try FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.documents).count
        #expect(reports.count == buckets && reports.last.map { $0 == (buckets, buckets) } == true)
        #expect(reports.map(\.0) == Array(1...buckets))
    }

    @Test("one ID changed in many segments is live once, as its last change; its older copies are deleted")
    func updatesAcrossSegments() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 0, mergeFactor: 1_000)
        for round in 0..<6 {
            try store.put(try json(#"{"section_name": "Round \#(round)", "word_count": \#(round)}"#), id: "same")
            try store.put(try json(#"{"section_name": "Other"}"#), id: "other\(round)")
            if round == 3 { try store.remove(["same"]) }
            try store.merge()
        }
        let reopened = try Self.store(folder, flushThreshold: 0, mergeFactor: 1_000)
        let stats = try reopened.statistics()
        #expect(stats.segments?.count == 6)
        #expect(stats.documents == 7)
        #expect(try reopened.document(withID: "same")?["section_name"] == .string("Round 5"))
        #expect(try reopened.count(matching: try FilterParser.parseAny("section_name = 'Round 2'")).count == 0)
        #expect(try reopened.find(Query(filter: .all)).ids.filter { $0 == "same" }.count == 1)
        try expectConsistent(reopened)
    }

    @Test("a listing a page at a time, and the IDs of a prefix, walk the segments and the tail as one list in ID order")
    func pagesAndPrefixes() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 0, mergeFactor: 1_000)
        var all: [String] = []
        for round in 0..<5 {
            for n in 0..<40 {
                let id = "p\(n % 7)-\(round)-\(n)"
                try store.put(try json(#"{"n": \#(n)}"#), id: id)
                all.append(id)
            }
            let removed = all[round * 13]
            try store.remove([removed])
            all.removeAll { $0 == removed }
            if round < 4 { try store.merge() }
        }
        let expected = all.sorted { UTF8Bytes.precedes($0, $1) }
        #expect(try store.entries().map(\.id) == expected)
        for size in [1, 7, 64, 500] {
            var paged: [String] = []
            var last: String?
            while true {
                let page = try store.entries(after: last, limit: size).map(\.id)
                paged += page
                guard page.count == size, let end = page.last else { break }
                last = end
            }
            #expect(paged == expected, "pages of \(size)")
        }
        for prefix in ["p3", "p3-2", "p", "q", "", "p6-4-4"] {
            #expect(try store.ids(startingWith: prefix, limit: 1_000) == expected.filter { $0.hasPrefix(prefix) }, "\(prefix)")
        }
        #expect(try store.ids(startingWith: "p", limit: 5) == Array(expected.prefix(5)))
    }

    @Test("flushes and merges keep the segments few: under the merge factor per size class")
    func mergesKeepSegmentsFew() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 8, mergeFactor: 3)
        var generator = ArticleGenerator(seed: 9)
        for document in generator.documents(300) { _ = try store.add(document) }
        let stats = try store.statistics()
        let segments = try #require(stats.segments)
        let policy = MergePolicy(factor: 3, base: 8)
        let classes = Dictionary(grouping: segments, by: { policy.sizeClass($0.documents - $0.deletedDocuments) })
        #expect(classes.values.allSatisfy { $0.count < 3 }, "\(segments.map(\.documents))")
        #expect(stats.documents == 300)
        #expect(try store.count(matching: .all).count == 300)
        try expectConsistent(store)
    }

    @Test("merges write no segment over the cap, leave full segments alone, and keep every document")
    func mergesStayUnderTheCap() throws {
        let folder = try TemporaryFolder()
        var options = DocumentStore.Options(flushThreshold: 8, mergeFactor: 3)
        options.maxSegmentDocuments = 40
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        for n in 0..<300 { try store.put(try json(#"{"section_name": "S\#(n % 7)"}"#), id: "d\(n)") }
        // Updates and removals spread over the segments, so that merges also carry deletions.
        for n in stride(from: 0, to: 300, by: 5) { try store.put(try json(#"{"section_name": "new"}"#), id: "d\(n)") }
        try store.remove(stride(from: 1, to: 300, by: 10).map { "d\($0)" })
        let segments = try #require(try store.statistics().segments)
        #expect(segments.allSatisfy { $0.documents + $0.tombstones <= 40 }, "\(segments.map(\.documents))")
        #expect(segments.count(where: { $0.documents >= 20 }) >= 5, "\(segments.map(\.documents))")
        let policy = MergePolicy(factor: 3, base: 8, maxDocuments: 40)
        let open = segments.filter { !policy.isFull($0.documents - $0.deletedDocuments + $0.tombstones - $0.deletedTombstones) }
        let classes = Dictionary(grouping: open, by: { policy.sizeClass($0.documents - $0.deletedDocuments) })
        #expect(classes.values.allSatisfy { $0.count < 3 }, "\(segments.map(\.documents))")
        #expect(try store.count(matching: .all).count == 270)
        #expect(try store.count(matching: ["section_name": "new"]).count == 60)
        try expectConsistent(store)
    }

    @Test(
        "a tail that updates and removes documents of several segments gives the same get, count, stats and sorted find whichever is asked first",
        arguments: [false, true])
    func tailResolvedOnlyWhenAsked(countFirst: Bool) throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder, flushThreshold: 10, mergeFactor: 100)
        for n in 0..<40 { try writer.put(try json(#"{"section_name": "S\#(n % 4)", "pub_date": "2000-01-\#(10 + n % 20)"}"#), id: "d\(n)") }
        #expect(try writer.statistics().segments?.count == 4)
        // The tail: two updates and two removals spread over the four segments, one document new.
        try writer.put(try json(#"{"section_name": "late", "pub_date": "2001-01-01"}"#), id: "d3")
        try writer.put(try json(#"{"section_name": "late", "pub_date": "2001-01-02"}"#), id: "d25")
        _ = try writer.remove(["d12", "d38"])
        try writer.put(try json(#"{"section_name": "late", "pub_date": "2001-01-03"}"#), id: "new")
        let reader = try Self.store(folder, flushThreshold: 10, mergeFactor: 100)
        #expect(try reader.statistics().changesAfterSegments == 5)
        if countFirst { #expect(try reader.count == 39) }
        #expect(try reader.document(withID: "d25")?["pub_date"] == .string("2001-01-02"))
        #expect(try reader.document(withID: "d12") == nil)
        #expect(try reader.document(withID: "d13")?["section_name"] == .string("S1"))
        #expect(try reader.count == 39)
        #expect(try reader.statistics().documents == 39)
        #expect(try reader.count(matching: ["section_name": "late"]).count == 3)
        #expect(try reader.count(matching: ["section_name": "S0"]).count == 9)  // d12 removed
        let newest = try reader.find(Query(filter: .all, sort: [SortKey("pub_date", descending: true)], limit: 4))
        #expect(newest.ids == ["new", "d25", "d3", "d19"])
        #expect(newest.total == 39)
        try expectConsistent(reader)
    }
    @Test("a tail of thousands of changes over several segments (look-ups in batches, the pages let go) masks each superseded copy once")
    func largeTailOverSegments() throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder, flushThreshold: 1_000, mergeFactor: 100)
        var generator = ArticleGenerator(seed: 26)
        let documents = generator.documents(3_100)
        for start in stride(from: 0, to: 3_000, by: 1_000) { _ = try writer.upsert(Array(documents[start..<(start + 1_000)])) }
        #expect(try writer.statistics().segments?.map(\.documents) == [1_000, 1_000, 1_000])
        // A tail past `EntryTable.lookupsBetweenDrops` twice: 2,400 updates and 200 removals
        // spread over the three segments, and 100 new documents.
        let reader = try Self.store(folder, flushThreshold: 10_000, mergeFactor: 100)
        var updates: [JSONValue] = []
        var removed: [String] = []
        for (n, document) in documents.prefix(3_000).enumerated() {
            guard case .string(let id) = document["_id"] else { continue }
            if n % 15 == 0 {
                removed.append(id)
            } else if n % 5 != 0 {
                updates.append(document.setting("section_name", to: .string("late")))
            }
        }
        _ = try reader.upsert(updates + Array(documents.suffix(100)))
        _ = try reader.remove(removed)
        #expect(updates.count == 2_400 && removed.count == 200)
        #expect(try reader.count == 2_900)
        #expect(try reader.count(matching: ["section_name": "late"]).count == 2_400)
        // A fresh handle answers the same before its tail is flushed, then after.
        let other = try Self.store(folder, flushThreshold: 10_000, mergeFactor: 100)
        #expect(try other.statistics().documents == 2_900)
        try other.merge()
        let stats = try other.statistics()
        let segments = try #require(stats.segments)
        #expect(segments.reduce(0) { $0 + $1.documents - $1.deletedDocuments } == 2_900)
        // What is left of the three first segments is the 400 documents the tail did not touch.
        #expect(segments.filter { $0.lastSequence <= 3_000 }.reduce(0) { $0 + $1.documents - $1.deletedDocuments } == 400)
        #expect(try other.count(matching: ["section_name": "late"]).count == 2_400)
        #expect(try other.document(withID: removed[7]) == nil)
        try expectConsistent(other)
    }
}
