import ArchivistBase
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistStore

/// Sequence numbers and the changes feed: every committed change is numbered, strictly
/// increasing and never reused, across compaction, rebuilds, merges and the migration; the feed
/// reads from any number by a binary search of the log; observers hear what other stores commit.
@Suite("Changes")
struct ChangesTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// A small NYT-shaped article.
    static func article(_ id: String, section: String = "Sports", headline: String = "Knicks Win") -> JSONValue {
        .object(sorting: [
            JSONMember(key: "_id", value: .string(id)),
            JSONMember(key: "section_name", value: .string(section)),
            JSONMember(key: "headline", value: .object([JSONMember(key: "main", value: .string(headline))])),
            JSONMember(key: "pub_date", value: .string("2019-01-02T00:00:00+0000")),
        ])
    }

    func store(_ options: DocumentStore.Options = .init()) throws -> DocumentStore {
        try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
    }

    /// The (sequence, ID, kind) triples of changes.
    static func triples(_ changes: [Change]) -> [String] {
        changes.map { "\($0.sequence) \($0.id) \($0.kind.rawValue)" }
    }

    @Test("each committed change gets the next number: adds, updates and removals; a batch one per document; an unchanged put none")
    func numbersFollowCommits() throws {
        let store = try store()
        #expect(try store.lastSequence == 0)
        try store.put(Self.article("a"), id: "a")
        _ = try store.upsert([Self.article("b"), Self.article("c")])
        try store.put(Self.article("a"), id: "a")  // unchanged: nothing written
        try store.put(Self.article("a", headline: "Knicks Lose"), id: "a")
        try store.remove(["b", "nobody"])
        #expect(try store.lastSequence == 5)
        #expect(Self.triples(try store.changes()) == ["1 a added", "2 b added", "3 c added", "4 a updated", "5 b removed"])
        #expect(Self.triples(try store.changes(since: 3)) == ["4 a updated", "5 b removed"])
        #expect(Self.triples(try store.changes(since: 1, limit: 2)) == ["2 b added", "3 c added"])
        #expect(try store.changePage(since: 1, limit: 2).through == 3)
        #expect(try store.changePage(since: 5).through == 5 && store.changes(since: 5).isEmpty)
        #expect(try store.changes(since: 99).isEmpty)
        // An update within the same millisecond as the add is still told apart by its time.
        let times = try store.changes(since: 3, limit: 1)[0]
        #expect(times.kind == .updated)
        #expect(try store.statistics().lastSequence == 5)
        try expectConsistent(store)
    }

    @Test("a removal's line holds the fields the document had, so a filter matches the removal when it matched the document")
    func filtersMatchRemovals() throws {
        let store = try store()
        _ = try store.upsert([Self.article("s1"), Self.article("w1", section: "World", headline: "Election Day")])
        try store.remove(["s1", "w1"])
        let sports = try store.changes(filter: FilterParser.parseAny("section_name = Sports"))
        #expect(Self.triples(sports) == ["1 s1 added", "3 s1 removed"])
        let text = try store.changes(filter: FilterParser.parseAny("election"))
        #expect(Self.triples(text) == ["2 w1 added", "4 w1 removed"])
        let byID = try store.changes(filter: FilterParser.parseAny(#"_id = "w1""#))
        #expect(byID.count == 2)
        #expect(try store.changes(since: 3)[0].fields["headline.main"] == .string("Election Day"))
        // The page read through the whole log though only some changes matched.
        #expect(try store.changePage(since: 0, filter: FilterParser.parseAny("section_name = Nothing")).through == 4)
    }

    @Test("a filter on a path the projection lacks is refused with the path named")
    func unprojectedFilterRefused() throws {
        let store = try store()
        try store.put(Self.article("a"), id: "a")
        #expect {
            try store.changes(filter: FilterParser.parseAny("multimedia.url exists"))
        } throws: { error in
            (error as? StoreError)?.localizedDescription.contains("'multimedia.url' is not projected") == true
        }
    }

    @Test("compact keeps each ID's last change with its number, removals as tombstones, and the feed's start")
    func compactKeepsNumbersAndTombstones() throws {
        let store = try store()
        _ = try store.upsert((0..<5).map { Self.article("d\($0)") })
        try store.put(Self.article("d1", headline: "Changed"), id: "d1")  // 6
        try store.remove(["d3"])  // 7
        try store.remove(["d4"])  // 8: the last number is a removal
        try store.compact()
        #expect(try store.lastSequence == 8)
        #expect(try store.feedStart == 0)
        #expect(Self.triples(try store.changes()) == ["1 d0 added", "3 d2 added", "6 d1 updated", "7 d3 removed", "8 d4 removed"])
        #expect(Self.triples(try store.changes(since: 5)) == ["6 d1 updated", "7 d3 removed", "8 d4 removed"])
        // A tombstone keeps the fields of the document it removed, for filters.
        #expect(try store.changes(since: 6)[0].fields["headline.main"] == .string("Knicks Win"))
        try store.put(Self.article("d9"), id: "d9")
        #expect(try store.lastSequence == 9)
        // Another process sees the same numbers.
        let other = try self.store()
        #expect(Self.triples(try other.changes(since: 6)) == ["7 d3 removed", "8 d4 removed", "9 d9 added"])
        let lines = try String(contentsOfFile: folder.data + "/index.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.map { (try? JSONParser.parse(String($0)))?["seq"] } == [1, 3, 6, 7, 8, 9].map { .number(String($0)) })
        try expectConsistent(store)
    }

    @Test("compact --purge-removals drops the tombstones, moves the feed's start past them, and refuses a --since below it")
    func purgeRemovalsMovesTheFeedStart() throws {
        let store = try store()
        _ = try store.upsert((0..<5).map { Self.article("d\($0)") })
        try store.put(Self.article("d1", headline: "Changed"), id: "d1")  // 6
        try store.remove(["d3"])  // 7
        try store.remove(["d4"])  // 8: the last number is a removal
        try store.compact()
        try store.compact(purgeRemovals: true)
        #expect(try store.lastSequence == 8)
        #expect(try store.feedStart == 8)
        #expect(try store.statistics().tombstones == 0)
        #expect(Self.triples(try store.changes()) == ["1 d0 added", "3 d2 added", "6 d1 updated"])
        #expect(throws: StoreError.feedCompacted(path: folder.data + "/index.jsonl", since: 5, start: 8)) {
            try store.changes(since: 5)
        }
        // The numbers dropped with the removals are not given again.
        try store.put(Self.article("d9"), id: "d9")
        #expect(try store.lastSequence == 9)
        #expect(Self.triples(try store.changes(since: 8)) == ["9 d9 added"])
        // Another process sees the same numbers.
        let other = try self.store()
        #expect(Self.triples(try other.changes(since: 8)) == ["9 d9 added"])
        #expect(try other.lastSequence == 9)
        let lines = try String(contentsOfFile: folder.data + "/index.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.map { (try? JSONParser.parse(String($0)))?["seq"] } == [1, 3, 6, 9].map { .number(String($0)) })
        try expectConsistent(store)
    }

    @Test("compact without removals moves the feed's start nowhere")
    func compactWithoutRemovals() throws {
        let store = try store()
        try store.put(Self.article("a"), id: "a")
        try store.put(Self.article("a", headline: "Again"), id: "a")
        try store.compact()
        #expect(try store.feedStart == 0)
        #expect(Self.triples(try store.changes(since: 1)) == ["2 a updated"])
    }

    @Test("an unreadable index is rebuilt with numbers above every earlier one, and the feed starts after them")
    func rebuildNumbersAbove() throws {
        do {
            let store = try store()
            _ = try store.upsert((0..<4).map { Self.article("r\($0)") })
            try store.remove(["r0"])
        }
        // Garbage in the middle of the log: the rebuild must still not reuse 1 ... 5.
        var bytes = try #require(FileManager.default.contents(atPath: folder.data + "/index.jsonl"))
        bytes.insert(contentsOf: Array("not json\n".utf8), at: 0)
        try bytes.write(to: URL(fileURLWithPath: folder.data + "/index.jsonl"))
        let store = try store()
        #expect(try store.count == 3)
        #expect(try store.lastSequence == 8)
        #expect(try store.feedStart == 5)
        #expect(Self.triples(try store.changes()).map { $0.split(separator: " ")[0] } == ["6", "7", "8"])
        try expectConsistent(store)
    }

    @Test("flushes into segments keep the numbering: a store opened from the segments continues it")
    func mergesKeepNumbers() throws {
        let options = DocumentStore.Options(flushThreshold: 3)
        do {
            let store = try store(options)
            for n in 0..<10 { try store.put(Self.article("m\(n)"), id: "m\(n)") }
            #expect(try store.statistics().segments != nil)
        }
        let reopened = try store(options)
        #expect(try reopened.statistics().segments != nil)
        #expect(try reopened.lastSequence == 10)
        try reopened.put(Self.article("m10"), id: "m10")
        #expect(try reopened.lastSequence == 11)
        let logOnly = try store(.init(flushThreshold: 0, usesSegments: false))
        #expect(try logOnly.lastSequence == 11)
        #expect(try logOnly.changes().map(\.sequence) == Array(1...11))
    }

    @Test("the real format-2 folder is migrated to format 4: its lines are numbered by their place, and numbering goes on after them")
    func formatTwoMigrates() throws {
        try FileManager.default.copyItem(atPath: fixture("format-2"), toPath: folder.data)
        let before = try #require(FileManager.default.contents(atPath: folder.data + "/index.jsonl"))
        let store = try store()
        #expect(store.migration?.from == 2 && store.migration?.to == StoreMetadata.currentFormat)
        #expect(try MigrationTests.format(in: folder.data) == StoreMetadata.currentFormat)
        #expect(try FileManager.default.contents(atPath: folder.data + "/index.jsonl") == before)
        #expect(try store.count == 41)
        #expect(try store.lastSequence == 44)
        let changes = try store.changes()
        #expect(changes.map(\.sequence) == Array(1...44))
        #expect(
            Self.triples(Array(changes.suffix(4))) == [
                "41 nyt://article/fdb7fa12-14d3-50f5-822b-15ca15b1881f added", "42 fixture-note added", "43 fixture-note updated",
                "44 4fd392688eb7c8105d8c4c48 removed",
            ])
        #expect(Self.triples(try store.changes(since: 42)) == ["43 fixture-note updated", "44 4fd392688eb7c8105d8c4c48 removed"])
        try store.put(Self.article("after"), id: "after")
        #expect(Self.triples(try store.changes(since: 44)) == ["45 after added"])
        #expect(Self.triples(try store.changes(since: 43)).count == 2)
        try expectConsistent(store)
    }

    @Test("the binary search finds the first change after any number, in a log with unnumbered lines first")
    func binarySearchEveryNumber() throws {
        try FileManager.default.copyItem(atPath: fixture("format-2"), toPath: folder.data)
        let store = try store(.init(flushThreshold: 0))
        for n in 0..<60 { try store.put(Self.article("b\(n % 20)", headline: "Headline \(n)"), id: "b\(n % 20)") }
        let last = try store.lastSequence
        #expect(last == 104)
        for since in 0...last {
            let first = try store.changes(since: since, limit: 1).first?.sequence
            #expect(first == (since < last ? since + 1 : nil), "since \(since)")
        }
    }

    @Test("an observer hears the change sets another store commits, in order, and nothing after invalidate")
    func observerHearsOtherStores() throws {
        let store = try store()
        try store.put(Self.article("before"), id: "before")
        let heard = Mutex<[ChangeSet]>([])
        let observation = try store.observe(filter: FilterParser.parseAny("section_name = Sports")) { result in
            if case .success(let set) = result { heard.withLock { $0.append(set) } }
        }
        let writer = try self.store()
        try writer.put(Self.article("x1"), id: "x1")
        try writer.put(Self.article("w1", section: "World"), id: "w1")
        _ = try writer.upsert([Self.article("x2"), Self.article("x3")])
        try writer.remove(["x1"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, heard.withLock({ $0.flatMap(\.changes).count }) < 4 { usleep(5_000) }
        observation.invalidate()
        let sets = heard.withLock { $0 }
        #expect(Self.triples(sets.flatMap(\.changes)) == ["2 x1 added", "4 x2 added", "5 x3 added", "6 x1 removed"])
        // The ranges follow each other without overlapping (a read that matched nothing is not a set).
        for (previous, next) in zip(sets, sets.dropFirst()) { #expect(previous.sequences.upperBound < next.sequences.lowerBound) }
        #expect(sets.first?.sequences.lowerBound == 2)
        try writer.put(Self.article("late"), id: "late")
        usleep(100_000)
        #expect(heard.withLock { $0.count } == sets.count)
    }

    @Test("a line's number must be above the previous line's, and a number is a positive integer of at most 2^53")
    func lineNumbersChecked() throws {
        let stamp = "2026-12-02T00:00:00.000Z"
        func line(_ id: String, _ seq: String) -> String {
            #"{"id":"\#(id)","seq":\#(seq),"hash":"1","size":1,"stored_at":"\#(stamp)","updated_at":"\#(stamp)","fields":{}}"#
        }
        var numbers: [Int] = []
        let mixed = [#"{"id":"old","hash":"1","size":1,"stored_at":"\#(stamp)","updated_at":"\#(stamp)"}"#, line("a", "5"), line("b", "9")]
        let decoded = ChangeLog.decodeLines(
            Array((mixed.joined(separator: "\n") + "\n").utf8), baseOffset: 0, firstLine: 1, previousSequence: 0
        ) { _, number in numbers.append(number) }
        #expect(numbers == [1, 5, 9] && (try? decoded.get().sequence) == 9)
        for (bad, reason) in [
            ([line("a", "5"), line("b", "5")], "sequence number 5 is not above the previous line's 5"),
            ([line("a", "0")], "not an index entry"), ([line("a", "-3")], "not an index entry"),
            ([line("a", "1.5")], "not an index entry"), ([line("a", "9007199254740993")], "not an index entry"),
        ] {
            let result = ChangeLog.decodeLines(Array((bad.joined(separator: "\n") + "\n").utf8), baseOffset: 0, firstLine: 1)
            guard case .failure(.unreadable(_, let why)) = result else {
                Issue.record("\(bad) was read")
                continue
            }
            #expect(why == reason)
        }
    }

    @Test("a change set names the IDs inserted, modified and removed, each by its first and last change in the set")
    func changeSetKinds() {
        let time = Timestamp(milliseconds: 0)
        let set = ChangeSet(
            changes: [
                Change(sequence: 1, id: "a", kind: .added, time: time, fieldsJSON: []),
                Change(sequence: 2, id: "b", kind: .updated, time: time, fieldsJSON: []),
                Change(sequence: 3, id: "a", kind: .updated, time: time, fieldsJSON: []),
                Change(sequence: 4, id: "c", kind: .removed, time: time, fieldsJSON: []),
            ], sequences: 1...4)
        #expect(set.inserted == ["a"] && set.modified == ["b"] && set.removed == ["c"])
        // A document added and removed within one set is none of the three.
        let transient = ChangeSet(
            changes: [
                Change(sequence: 5, id: "t", kind: .added, time: time, fieldsJSON: []),
                Change(sequence: 6, id: "t", kind: .removed, time: time, fieldsJSON: []),
            ], sequences: 5...6)
        #expect(transient.inserted.isEmpty && transient.modified.isEmpty && transient.removed.isEmpty)
    }

    @Test("the async sequence of change sets ends its watching when the iteration ends")
    func asyncChangeSets() async throws {
        let store = try store()
        let stream = try store.changeSets()
        let writer = try self.store()
        try writer.put(Self.article("y1"), id: "y1")
        var received: [Change] = []
        for await set in stream {
            received += set.changes
            if received.count >= 1 { break }
        }
        #expect(Self.triples(received) == ["1 y1 added"])
    }
}
