import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Merges built without the writers' lock (`runDueMerges`), while another store of the same
/// folder (another process, as far as the locks and the files are concerned) goes on writing.
@Suite("merges in the background")
struct BackgroundMergeTests {
    /// A store whose writes leave merges to `runDueMerges`: a segment every 50 changes, merges of 2.
    static func store(_ folder: TemporaryFolder, background: Bool = true) throws -> DocumentStore {
        var options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 50, mergeFactor: 2)
        options.mergesInBackground = background
        return try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
    }

    /// Each live entry's ID and document hash, sorted.
    static func hashes(_ store: DocumentStore) throws -> [String] {
        try store.entries().map { "\($0.id) \($0.hash)" }.sorted()
    }

    static func upsert(_ store: DocumentStore, _ documents: [JSONValue]) throws {
        for result in try store.upsert(documents) { _ = try result.outcome.get() }
    }

    @Test("writes that leave merges to the background flush but do not merge, until a merger runs the due ones")
    func writesLeaveMergesDue() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder)
        var generator = ArticleGenerator(seed: 41)
        for _ in 0..<6 { try Self.upsert(store, generator.documents(50)) }
        #expect(try store.statistics().segments?.count == 6)
        #expect(store.isMergeDue)
        let merges = try store.runDueMerges()
        #expect(merges >= 3, "\(merges) merges")
        #expect(!store.isMergeDue)
        let segments = try #require(try store.statistics().segments)
        #expect(segments.count < 6)
        #expect(segments.reduce(0) { $0 + $1.documents - $1.deletedDocuments } == 300)
        #expect(try store.count == 300)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.merging).isEmpty,
            "the merger leaves nothing in segments/merging")
        try expectConsistent(store)
    }

    @Test(
        "documents and tombstones deleted in a merge's inputs while it was built are deleted in the merged segment, and every answer stays the same"
    )
    func deletesMadeDuringTheMergeAreCarried() throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder)
        var generator = ArticleGenerator(seed: 7)
        let documents = generator.documents(130)
        let ids = documents.compactMap { $0["_id"]?.stringValue }
        // Segment 1: documents 0-49. Segment 2: 0-19 removed (tombstones), 50-79 added.
        // Segment 3: 80-129.
        try Self.upsert(writer, Array(documents[0..<50]))
        _ = try writer.remove(Array(ids[0..<20]))
        try Self.upsert(writer, documents[50..<80].map { $0.setting("section_name", to: .string("Second")) })
        try Self.upsert(writer, Array(documents[80..<130]))
        #expect(try writer.statistics().segments?.count == 3)

        // The merger (another store of the folder) plans and builds the merge of the first two.
        let merger = try Self.store(folder)
        let pending = try #require(try merger.planMerge())
        #expect(pending.inputs.map(\.segment.record.number) == [1, 2])
        let built = try merger.buildMerge(pending)
        let record = try #require(built)
        #expect(record.documents == 60 && record.tombstones == 20, "\(record)")

        // Meanwhile, in one flush: 20-39 updated, 50-59 removed (documents of the merge), and
        // 0-19 added again (the merge's tombstones deleted).
        try Self.upsert(writer, documents[20..<40].map { $0.setting("section_name", to: .string("Updated While Merging")) })
        _ = try writer.remove(Array(ids[50..<60]))
        try Self.upsert(writer, Array(documents[0..<20]))
        #expect(try writer.statistics().segments?.count == 4, "the writes flushed")

        #expect(try merger.installMerge(pending, built))
        let stats = try merger.statistics()
        let merged = try #require(stats.segments?.first { $0.number == record.number })
        #expect(merged.deletedDocuments == 30, "\(merged)")
        #expect(merged.deletedTombstones == 20, "\(merged)")
        #expect(stats.segments?.count == 3)

        let expected = try Self.hashes(writer)
        #expect(try Self.hashes(merger) == expected)
        #expect(expected.count == 120)
        for store in [writer, merger, try Self.store(folder)] {
            #expect(try store.count(matching: ["section_name": "Updated While Merging"]).count == 20)
            #expect(try store.count(matching: ["section_name": "Second"]).count == 20)
            #expect(try store.count == 120)
            #expect(try store.document(withID: ids[55]) == nil)
            #expect(try store.document(withID: ids[5]) != nil)
        }
        #expect(!(try Self.store(folder).state.withLock { $0.builtSegmentsAtOpen }), "the installed manifest opens as it is")
        try expectConsistent(merger)
        try expectConsistent(writer)
    }

    @Test("a merge whose inputs another writer merged meanwhile is dropped, and the folder stays as that writer left it")
    func mergeOfReplacedInputsIsDropped() throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder, background: false)
        var generator = ArticleGenerator(seed: 11)
        let documents = generator.documents(100)
        let background = try Self.store(folder)
        try Self.upsert(background, Array(documents[0..<50]))
        try Self.upsert(background, Array(documents[50..<100]))
        let pending = try #require(try background.planMerge())
        let built = try background.buildMerge(pending)
        try writer.mergeSegments()
        let manifest = try #require(FileManager.default.contents(atPath: folder.data + "/" + FileNames.manifest))
        #expect(try background.installMerge(pending, built) == false)
        #expect(FileManager.default.contents(atPath: folder.data + "/" + FileNames.manifest) == manifest)
        #expect(try background.runDueMerges() == 0)
        #expect(try background.count == 100)
        try expectConsistent(background)
    }

    @Test("a writer opened before a merge in the background flushes onto the merged segments, not the ones it first saw")
    func staleWriterFollowsTheMergedManifest() throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder)
        var generator = ArticleGenerator(seed: 23)
        for _ in 0..<4 { try Self.upsert(writer, generator.documents(50)) }
        let merger = try Self.store(folder)
        #expect(try merger.runDueMerges() > 0)
        let merged = try #require(try merger.statistics().segments).map(\.number)
        try Self.upsert(writer, generator.documents(50))
        let after = try #require(try Self.store(folder).statistics().segments).map(\.number)
        #expect(Array(after.prefix(merged.count)) == merged, "merged \(merged), after the writer's flush \(after)")
        #expect(after.count == merged.count + 1)
        let reopened = try Self.store(folder)
        #expect(!reopened.state.withLock { $0.builtSegmentsAtOpen })
        #expect(try reopened.count == 250)
        try expectConsistent(reopened)
    }

    @Test(
        "a store that refreshes after another process flushed and merged starts from the new manifest and reads only the lines after it, not every line written since it last looked"
    )
    func refreshStartsFromANewerManifest() throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder, background: false)
        var generator = ArticleGenerator(seed: 57)
        try Self.upsert(writer, generator.documents(50))
        let reader = try Self.store(folder)
        #expect(try reader.count == 50)
        let before = reader.state.withLock { $0.linesFollowed }
        // Eight flushes (and the merges they call for) while the reader looks away, then a tail
        // of ten lines after the last flush.
        for _ in 0..<8 { try Self.upsert(writer, generator.documents(50)) }
        try Self.upsert(writer, generator.documents(10))
        #expect(try reader.count == 460)
        let read = reader.state.withLock { $0.linesFollowed } - before
        #expect(read == 10, "the reader followed \(read) lines of the log; the manifest covers all but 10")
        #expect(try Self.hashes(reader) == Self.hashes(writer))
        try expectConsistent(reader)
    }

    @Test(
        "a merger that reads no tail merges without reading a line after the segments, while the tail updates and removes documents of its inputs"
    )
    func mergerReadsNoTail() throws {
        let folder = try TemporaryFolder()
        let writer = try Self.store(folder)
        var generator = ArticleGenerator(seed: 61)
        let documents = generator.documents(200)
        let ids = documents.compactMap { $0["_id"]?.stringValue }
        for start in stride(from: 0, to: 200, by: 50) { try Self.upsert(writer, Array(documents[start..<(start + 50)])) }
        // A tail of 30 changes: 10 updates of the first segment's documents, 5 removals from the
        // second's, 15 new documents.
        try Self.upsert(writer, documents[0..<10].map { $0.setting("section_name", to: .string("Changed In The Tail")) })
        _ = try writer.remove(Array(ids[50..<55]))
        try Self.upsert(writer, generator.documents(15))
        #expect(try writer.statistics().segments?.count == 4)
        #expect(writer.state.withLock { $0.entries.tailCount } == 30)

        var options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 50, mergeFactor: 2)
        options.readsTail = false
        let merger = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        #expect(merger.state.withLock { $0.linesFollowed } == 0)
        #expect(try merger.runDueMerges() >= 2)
        #expect(merger.state.withLock { $0.linesFollowed } == 0, "the merger read the tail")
        #expect(merger.state.withLock { $0.entries.tailCount } == 0)
        #expect(try merger.statistics().segments?.count == 1)

        // Every other store sees the merged segments and the tail on them.
        for store in [writer, try Self.store(folder)] {
            #expect(try store.count == 210)
            #expect(try store.count(matching: ["section_name": "Changed In The Tail"]).count == 10)
            #expect(try store.document(withID: ids[52]) == nil)
            try expectConsistent(store)
        }
        // The writer's next flush deletes what the tail superseded in the merged segment.
        try Self.upsert(writer, generator.documents(40))
        let fresh = try Self.store(folder)
        #expect(try fresh.count == 250)
        #expect(try fresh.count(matching: ["section_name": "Changed In The Tail"]).count == 10)
        #expect(try Self.hashes(fresh) == Self.hashes(writer))
        try expectConsistent(fresh)
    }

    @Test("a merger waits for another one holding the merge lock, or returns at once without merging")
    func oneMergerAtATime() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(folder)
        var generator = ArticleGenerator(seed: 5)
        for _ in 0..<4 { try Self.upsert(store, generator.documents(50)) }
        let held = try POSIXFileSystem().lockExclusively(folder.data + "/" + FileNames.mergeLock, timeout: 0)
        #expect(try store.runDueMerges(waiting: 0) == 0)
        #expect(store.isMergeDue)
        held.release()
        #expect(try store.runDueMerges(waiting: 1) > 0)
        try expectConsistent(store)
    }
}
