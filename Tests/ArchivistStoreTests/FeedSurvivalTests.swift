import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The changes feed survives every rewrite of the log but an explicit purge: for a follower at any
/// number the folder gave out, the changes after it are, before and after `compact`, `repair`
/// (documents edited, added and deleted by hand in between), `index add` and `index drop`, the
/// latest change of each ID changed after it, removals included (as CouchDB's `_changes` after its
/// compaction).
@Suite("Feed survival")
struct FeedSurvivalTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// The stores the tests run in: with segments (a small flush threshold, so that several
    /// segments, merges and tombstones are involved) and with the log alone.
    static let modes = ["segments", "log only"]

    static func options(_ mode: String) -> DocumentStore.Options {
        mode == "segments" ? .init(flushThreshold: 3, mergeFactor: 2) : .init(flushThreshold: 0, usesSegments: false)
    }

    func store(_ mode: String) throws -> DocumentStore {
        try DocumentStore(folder: folder.data, schema: .testArticles, options: Self.options(mode))
    }

    /// What a follower learns of one change.
    struct Seen: Hashable, CustomStringConvertible {
        var sequence: Int
        var id: String
        var kind: Change.Kind
        var description: String { "\(sequence) \(id) \(kind.rawValue)" }
    }

    /// Every change the folder gave out, as a follower from 0 saw them, in order.
    struct History {
        var changes: [Seen] = []
        var last: Int { changes.last?.sequence ?? 0 }

        /// Takes in the changes the store numbered after the last one known.
        mutating func catchUp(_ store: DocumentStore) throws {
            changes += try store.changes(since: last).map { Seen(sequence: $0.sequence, id: $0.id, kind: $0.kind) }
        }

        /// The latest change of each ID changed after `since`, in number order.
        func latest(after since: Int) -> [Seen] {
            var byID: [String: Seen] = [:]
            for change in changes where change.sequence > since { byID[change.id] = change }
            return byID.values.sorted { $0.sequence < $1.sequence }
        }
    }

    /// The latest change of each ID in `changes`, in number order.
    static func latest(_ changes: [Change]) -> [Seen] {
        var byID: [String: Seen] = [:]
        for change in changes { byID[change.id] = Seen(sequence: change.sequence, id: change.id, kind: change.kind) }
        return byID.values.sorted { $0.sequence < $1.sequence }
    }

    /// Requires, for every number from 0 to the last one given out, that the feed after it holds
    /// the latest change of each ID changed after it; with `exactly`, nothing else (each ID once).
    static func expectFollowers(
        _ store: DocumentStore, _ history: History, exactly: Bool, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let last = try store.lastSequence
        #expect(last == history.last, "\(context): last sequence", sourceLocation: sourceLocation)
        for since in 0...last {
            let changes = try store.changes(since: since)
            let expected = history.latest(after: since)
            #expect(Self.latest(changes) == expected, "\(context): since \(since)", sourceLocation: sourceLocation)
            if exactly {
                #expect(
                    changes.count == expected.count, "\(context): since \(since), \(changes.count) changes", sourceLocation: sourceLocation)
            }
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, sourceLocation: sourceLocation)
        }
    }

    static func article(_ id: String, headline: String = "Knicks Win", section: String = "Sports") -> JSONValue {
        ChangesTests.article(id, section: section, headline: headline)
    }

    /// Writes a document file behind the store's back, as a person editing `docs/` would.
    func writeByHand(_ document: JSONValue, id: String) throws {
        let path = folder.data + "/" + FileNames.documentPath(for: id, in: .nyt)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(JSONWriter.prettyBytes(document)).write(to: URL(fileURLWithPath: path))
    }

    func removeByHand(_ id: String) throws {
        try FileManager.default.removeItem(atPath: folder.data + "/" + FileNames.documentPath(for: id, in: .nyt))
    }

    /// A store with adds, updates, removals, a re-add after a removal and a second removal.
    func populated(_ mode: String) throws -> (DocumentStore, History) {
        let store = try store(mode)
        _ = try store.upsert((0..<12).map { Self.article("a\($0)") })
        try store.put(Self.article("a1", headline: "Second"), id: "a1")
        try store.remove(["a2", "a3"])
        try store.put(Self.article("a2", headline: "Back"), id: "a2")
        try store.put(Self.article("a4", headline: "Second"), id: "a4")
        try store.remove(["a4"])
        try store.put(Self.article("a5", headline: "Second"), id: "a5")
        try store.put(Self.article("a5", headline: "Third"), id: "a5")
        try store.remove(["a6"])
        try store.put(Self.article("a6", headline: "Back"), id: "a6")
        try store.remove(["a6"])
        var history = History()
        try history.catchUp(store)
        return (store, history)
    }

    @Test("compact keeps every follower's view: the latest change of each ID after any number, tombstones included", arguments: modes)
    func compactKeepsEveryFollowersView(_ mode: String) throws {
        let (store, history) = try populated(mode)
        try Self.expectFollowers(store, history, exactly: false, "before compact")
        let start = try store.feedStart
        let dropped = try store.compact()
        #expect(dropped > 0)
        #expect(try store.feedStart == start)
        try Self.expectFollowers(store, history, exactly: true, "after compact")
        try Self.expectFollowers(try self.store(mode), history, exactly: true, "after compact, another process")
        // The tombstones survive: in the log and (with segments) in the segments.
        let removed = Set(history.latest(after: 0).filter { $0.kind == .removed }.map(\.id))
        #expect(removed == ["a3", "a4", "a6"])
        #expect(try store.statistics().tombstones == removed.count)
        if mode == "segments" {
            let segments = try #require(try store.statistics().segments)
            #expect(segments.reduce(0) { $0 + $1.tombstones - $1.deletedTombstones } == removed.count)
        }
        // A second compact changes nothing.
        let bytes = FileManager.default.contents(atPath: folder.data + "/" + FileNames.index)
        #expect(try store.compact() == 0)
        #expect(FileManager.default.contents(atPath: folder.data + "/" + FileNames.index) == bytes)
        try expectConsistent(store)
    }

    @Test("compact of a log whose lines predate sequence numbers keeps the numbers of their places", arguments: modes)
    func compactOfUnnumberedLinesKeepsTheirNumbers(_ mode: String) throws {
        try FileManager.default.copyItem(atPath: fixture("format-2"), toPath: folder.data)
        let store = try store(mode)
        var history = History()
        try history.catchUp(store)
        try store.put(Self.article("after"), id: "after")
        try history.catchUp(store)
        try store.compact()
        try Self.expectFollowers(store, history, exactly: true, "after compact")
        try expectConsistent(store)
    }

    @Test("compact --purge-removals drops the tombstones and moves the feed's start to the highest of them", arguments: modes)
    func purgeMovesTheFeedStart(_ mode: String) throws {
        let (store, history) = try populated(mode)
        try store.compact()
        let lastRemoval = try #require(history.latest(after: 0).last { $0.kind == .removed })
        try store.compact(purgeRemovals: true)
        #expect(try store.feedStart == lastRemoval.sequence)
        #expect(try store.statistics().tombstones == 0)
        #expect(throws: StoreError.feedCompacted(path: folder.data + "/index.jsonl", since: 1, start: lastRemoval.sequence)) {
            try store.changes(since: 1)
        }
        // From the start on, the live documents' latest changes; from 0, every live document.
        let live = history.latest(after: 0).filter { $0.kind != .removed }
        #expect(Self.latest(try store.changes()) == live)
        for since in lastRemoval.sequence...history.last {
            #expect(Self.latest(try store.changes(since: since)) == history.latest(after: since), "since \(since)")
        }
        try expectConsistent(store)
    }

    @Test(
        "repair after documents were edited, added and deleted by hand keeps every number; the changes get new ones above them",
        arguments: modes)
    func repairKeepsNumbers(_ mode: String) throws {
        let (store, initial) = try populated(mode)
        var history = initial
        if mode == "segments" { try store.compact() }
        let before = try store.lastSequence
        let unchanged = try #require(try store.entry(forID: "a7"))
        usleep(5_000)
        try writeByHand(Self.article("a8", headline: "Edited by hand"), id: "a8")
        try writeByHand(Self.article("new1", headline: "Added by hand"), id: "new1")
        try writeByHand(Self.article("a3", headline: "Back by hand"), id: "a3")  // a tombstone's ID
        try removeByHand("a9")
        #expect(try !store.check().isEmpty)
        let report = try store.repair()
        #expect(report.rebuiltIndex && !report.renumbered && report.feedStart == 0)
        #expect(try store.feedStart == 0)
        try history.catchUp(store)
        let fresh = history.changes.filter { $0.sequence > before }
        #expect(Set(fresh.map(\.id)) == ["a8", "new1", "a3", "a9"])
        #expect(fresh.first { $0.id == "a8" }?.kind == .updated)
        #expect(fresh.first { $0.id == "new1" }?.kind == .added)
        #expect(fresh.first { $0.id == "a3" }?.kind == .added)
        #expect(fresh.first { $0.id == "a9" }?.kind == .removed)
        // An unchanged document keeps its number and times.
        let kept = try #require(try store.entry(forID: "a7"))
        #expect(kept.sequence == unchanged.sequence && kept.storedAt == unchanged.storedAt && kept.updatedAt == unchanged.updatedAt)
        try Self.expectFollowers(store, history, exactly: true, "after repair")
        try Self.expectFollowers(try self.store(mode), history, exactly: true, "after repair, another process")
        #expect(try store.document(withID: "a8")?["headline"]?["main"] == .string("Edited by hand"))
        try expectConsistent(store)
        // Nothing to repair: nothing renumbered.
        #expect(try store.repair().rebuiltIndex == false)
        #expect(try store.lastSequence == history.last)
    }

    @Test("repair of a store whose projected fields are stale keeps the numbers and fixes the fields", arguments: modes)
    func repairOfStaleFieldsKeepsNumbers(_ mode: String) throws {
        let (_, history) = try populated(mode)
        // A line's fields edited by hand (the document unchanged): check reports it as stale.
        let path = folder.data + "/" + FileNames.index
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let edited = text.replacingOccurrences(of: #""headline.main":"Knicks Win"}"#, with: #""headline.main":"Stale"}"#)
        #expect(edited != text)
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
        let reopened = try self.store(mode)
        #expect(try !reopened.check().isEmpty)
        let report = try reopened.repair()
        #expect(report.rebuiltIndex && !report.renumbered)
        try Self.expectFollowers(reopened, history, exactly: true, "after repair")
        // The live lines' fields are derived again; a tombstone keeps its line as it was.
        #expect(try reopened.changes().filter { $0.kind != .removed }.allSatisfy { $0.fields["headline.main"] != .string("Stale") })
        try expectConsistent(reopened)
    }

    @Test("repair of an unreadable index numbers every document again, moves the feed's start and says so")
    func repairOfAnUnreadableIndexRenumbers() throws {
        let last: Int
        do {
            let (store, history) = try populated("segments")
            last = history.last
            #expect(try store.lastSequence == last)
        }
        let path = folder.data + "/" + FileNames.index
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes.append(contentsOf: Array("not json\n".utf8))
        try bytes.write(to: URL(fileURLWithPath: path))
        // The process that opens it rebuilds it, and says so once.
        let store = try store("segments")
        #expect(store.renumberedFeedStart == last)
        #expect(try store.feedStart == last)
        let report = try store.repair()
        #expect(report.rebuiltIndex && report.renumbered && report.feedStart == last)
        #expect(try store.repair().renumbered == false)
        #expect(try store.changes().allSatisfy { $0.sequence > last })
        #expect(throws: StoreError.feedCompacted(path: path, since: 1, start: last)) { try store.changes(since: 1) }
        try expectConsistent(store)
    }

    @Test("index add and index drop keep every number: each line written again with the new fields, removals kept", arguments: modes)
    func projectionChangesKeepNumbers(_ mode: String) throws {
        let (store, history) = try populated(mode)
        let before = try store.entries()
        try store.changeProjection(to: Projection(paths: store.projection.paths + ["byline.original"]))
        #expect(store.projection.paths.contains("byline.original"))
        try Self.expectFollowers(store, history, exactly: true, "after index add")
        #expect(try store.entries().map(\.sequence) == before.map(\.sequence))
        #expect(try store.feedStart == 0)
        try expectConsistent(store)
        try store.changeProjection(to: Projection(paths: store.projection.paths.filter { $0 != "headline.main" }))
        try Self.expectFollowers(store, history, exactly: true, "after index drop")
        try Self.expectFollowers(try self.store(mode), history, exactly: true, "after index drop, another process")
        #expect(try store.entries().map(\.sequence) == before.map(\.sequence))
        // The live lines hold the new projection's fields.
        #expect(try store.changes().filter { $0.kind != .removed }.allSatisfy { $0.fields["headline.main"] == nil })
        #expect(try store.feedStart == 0)
        try expectConsistent(store)
    }

    @Test("compact, repair and index add in turn, with writes and hand edits between: every follower's view holds", arguments: modes)
    func everythingInTurn(_ mode: String) throws {
        let (store, initial) = try populated(mode)
        var history = initial
        for round in 0..<3 {
            try store.compact()
            try Self.expectFollowers(store, history, exactly: true, "round \(round), compact")
            _ = try store.upsert((0..<4).map { Self.article("r\(round)-\($0)") } + [Self.article("a0", headline: "Round \(round)")])
            try store.remove(["r\(round)-1", "a1"])
            try history.catchUp(store)
            usleep(5_000)
            try writeByHand(Self.article("r\(round)-2", headline: "By hand"), id: "r\(round)-2")
            try removeByHand("r\(round)-3")
            _ = try store.repair()
            try history.catchUp(store)
            try Self.expectFollowers(store, history, exactly: true, "round \(round), repair")
            let paths = store.projection.paths
            try store.changeProjection(
                to: Projection(paths: round % 2 == 0 ? paths + ["byline.original"] : paths.filter { $0 != "byline.original" }))
            try Self.expectFollowers(store, history, exactly: true, "round \(round), index add/drop")
            try store.put(Self.article("a1", headline: "Round \(round)"), id: "a1")
            try history.catchUp(store)
        }
        #expect(try store.feedStart == 0)
        try expectConsistent(store)
    }
}
