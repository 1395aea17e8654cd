import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// A bulk import's flushes built beside its batches (`Options.flushesInBackground`): the tail as
/// of one commit written into a segment on another thread, installed at a later commit.
@Suite("flushes in the background")
struct BackgroundFlushTests {
    /// A store of `folder`: a segment every 16 changes (64 in a bulk import), merges of 4;
    /// with `background`, a bulk import's flushes are built beside its batches.
    static func store(_ folder: TemporaryFolder, background: Bool, waits: Bool = false) throws -> DocumentStore {
        var options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 16, bulkFlushThreshold: 64, mergeFactor: 4)
        options.flushesInBackground = background
        options.waitsForBackgroundFlushes = waits
        return try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
    }

    /// A bulk import under way in a new folder (its flushes built in the background and waited for
    /// by the next commit): 20 documents in a first segment, flushed under the lock (a folder
    /// without a manifest flushes that way), then the import's defers set.
    static func bulkImport(seed: UInt64) throws -> (TemporaryFolder, DocumentStore, ArticleGenerator) {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder, background: true, waits: true)
        var generator = ArticleGenerator(seed: seed)
        try Self.upsert(store, generator.documents(20))
        store.defersMerges = true
        return (folder, store, generator)
    }

    /// A store of `folder` that reads the whole log and no segment.
    static func logOnly(_ folder: TemporaryFolder) throws -> DocumentStore {
        try DocumentStore(
            folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 5, flushThreshold: 0, usesSegments: false))
    }

    static func upsert(_ store: DocumentStore, _ documents: [JSONValue]) throws {
        for result in try store.upsert(documents) { _ = try result.outcome.get() }
    }

    /// Each live entry's ID and document hash, sorted.
    static func hashes(_ store: DocumentStore) throws -> [String] {
        try store.entries().map { "\($0.id) \($0.hash)" }.sorted()
    }

    static func flushing(_ folder: TemporaryFolder) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.flushing)) ?? []).sorted()
    }

    /// Whether the store has a flush being built or waiting to be installed.
    static func hasPendingFlush(_ store: DocumentStore) -> Bool {
        store.state.withLock { $0.pendingFlush != nil }
    }

    static let filters = [
        "section_name = Sports", "pub_date >= 2015-01-01 and pub_date < 2016-01-01", "word_count > 500", #""election""#,
        "section_name = Moved", "not section_name = Sports",
    ]

    /// Every filter's count and its first documents by date, newest first, and by relevance.
    static func answers(_ store: DocumentStore) throws -> [String] {
        var answers: [String] = []
        for text in filters {
            let filter = try FilterParser.parse(text)
            let byDate = try store.find(Query(filter: filter, sort: [SortKey("pub_date", descending: true), SortKey("_id")], limit: 15))
            answers.append("\(text): \(try store.count(matching: filter).count), \(byDate.ids)")
        }
        let ranked = try store.find(Query(filter: try FilterParser.parse(#""election" or "knicks""#), limit: 10))
        answers.append("ranked: \(ranked.ids)")
        return answers
    }

    /// The same bulk import, with updates and removals among its batches, into two folders.
    static func importBoth(into stores: [DocumentStore]) throws -> [String] {
        var generator = ArticleGenerator(seed: 83)
        let documents = generator.documents(600)
        let ids = documents.compactMap { $0["_id"]?.stringValue }
        var removed: [String] = []
        for store in stores { store.defersMerges = true }
        for batch in 0..<15 {
            let added = Array(documents[batch * 40..<batch * 40 + 40])
            for store in stores { try upsert(store, added) }
            if batch % 3 == 2 {
                // Updates and removals of documents that earlier flushes hold, or the one being built.
                let moved = (0..<10).map {
                    documents[(batch * 37 + $0 * 7) % (batch * 40 + 40)].setting("section_name", to: .string("Moved"))
                }
                let gone = (0..<5).map { ids[(batch * 53 + $0 * 11) % (batch * 40 + 40)] }
                removed += gone
                for store in stores {
                    try upsert(store, moved)
                    _ = try store.remove(gone)
                }
            }
        }
        for store in stores {
            store.defersMerges = false
            try store.finishBackgroundFlush()
            try store.merge(ifDue: true)
        }
        return removed
    }

    @Test("a bulk import's flushes built beside its batches leave the documents and answers that flushes under the lock leave")
    func backgroundFlushesAgreeWithFlushesUnderTheLock() throws {
        let (background, inline) = (try TemporaryFolder(), try TemporaryFolder())
        let store = try Self.store(background, background: true)
        let reference = try Self.store(inline, background: false)
        // A flush is planned at some commit and installed at a later one (a commit waits for it
        // only once the tail has grown by a second threshold).
        var generator = ArticleGenerator(seed: 5)
        let first = generator.documents(20)
        try Self.upsert(store, first)
        try Self.upsert(reference, first)
        store.defersMerges = true
        var planned = 0
        for _ in 0..<6 {
            let batch = generator.documents(30)
            try Self.upsert(store, batch)
            try Self.upsert(reference, batch)
            if Self.hasPendingFlush(store) { planned += 1 }
        }
        #expect(planned > 0, "no flush was built in the background")
        store.defersMerges = false
        try store.finishBackgroundFlush()
        #expect(!Self.hasPendingFlush(store))

        _ = try Self.importBoth(into: [store, reference])
        let segments = try #require(try store.statistics().segments)
        #expect(segments.count >= 2, "\(segments.count) segments")
        #expect(try Self.hashes(store) == Self.hashes(reference))
        #expect(try Self.answers(store) == Self.answers(reference))
        #expect(try Self.answers(store) == Self.answers(Self.logOnly(background)))
        // A new process starts from the segments and the log after them.
        let reopened = try Self.store(background, background: true)
        #expect(try Self.answers(reopened) == Self.answers(Self.logOnly(background)))
        #expect(Self.flushing(background).isEmpty, "left in segments/flushing: \(Self.flushing(background))")
        try expectConsistent(store)
        try expectConsistent(reference)
    }

    @Test("a flush built in the background is dropped when another writer flushed first; its tail stays in the log, nothing is lost")
    func aFlushOvertakenByAnotherIsDropped() throws {
        var (folder, store, generator) = try Self.bulkImport(seed: 12)
        try Self.upsert(store, generator.documents(35))
        try Self.upsert(store, generator.documents(35))
        #expect(Self.hasPendingFlush(store), "the tail of 70 was handed to a build")
        // Another process flushes the whole tail under the lock meanwhile.
        let other = try Self.store(folder, background: false)
        try other.merge()
        let segmentsBefore = try #require(try other.statistics().segments).map(\.file)
        // The next commit finds the manifest's coverage changed: the built segment is not installed.
        try Self.upsert(store, generator.documents(10))
        #expect(!Self.hasPendingFlush(store))
        #expect(Self.flushing(folder).isEmpty, "left in segments/flushing: \(Self.flushing(folder))")
        let segmentsAfter = try #require(try store.statistics().segments).map(\.file)
        #expect(Set(segmentsBefore).isSubset(of: Set(segmentsAfter)), "\(segmentsBefore) then \(segmentsAfter)")
        let (count, logged) = (try store.count, try Self.logOnly(folder).count)
        #expect(count == 100 && logged == 100, "\(count) documents, \(logged) in the log")
        #expect(try Self.hashes(store) == Self.hashes(Self.logOnly(folder)))
        #expect(try Self.answers(store) == Self.answers(Self.logOnly(folder)))
        store.defersMerges = false
        try store.finishBackgroundFlush()
        try expectConsistent(store)
    }

    @Test("the next flush removes what builds of processes that have ended left in segments/flushing, and keeps a live one's")
    func abandonedBuildsAreRemoved() throws {
        var (folder, store, generator) = try Self.bulkImport(seed: 3)
        try FileManager.default.createDirectory(atPath: folder.data + "/" + FileNames.flushing, withIntermediateDirectories: true)
        // No process has the largest pid; process 1 (init) outlives any test.
        let abandoned = "\(Int32.max - 1)-000097.seg"
        let live = "1-000098.seg.new"
        for name in [abandoned, live, "stray.seg"] {
            try Data("not a segment".utf8).write(to: URL(fileURLWithPath: folder.data + "/" + FileNames.flushing + "/" + name))
        }
        try Self.upsert(store, generator.documents(70))
        #expect(Self.hasPendingFlush(store))
        store.defersMerges = false
        try store.finishBackgroundFlush()
        #expect(Self.flushing(folder) == [live], "\(Self.flushing(folder))")
        #expect(try store.count == 90)
        try expectConsistent(store)
    }
}
