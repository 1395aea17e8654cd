import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// `compact` and a `repair` that keeps the numbers tell each log line's fate from the segments'
/// numbers read in order (`LastChangeWalk`), not by a look-up per line: the verdicts must be the
/// look-ups', whatever the window, with changes spread across segments and the tail.
@Suite("last change walk")
struct LastChangeWalkTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// A store of several segments (no merges) whose IDs were updated and removed in later
    /// segments, removed and added again, and changed again in the tail.
    func spreadStore() throws -> DocumentStore {
        let store = try DocumentStore(
            folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 5, flushThreshold: 4, mergeFactor: 1_000))
        for n in 0..<24 { try store.put(ChangesTests.article("a\(n)"), id: "a\(n)") }
        for n in stride(from: 0, to: 24, by: 3) {
            try store.put(ChangesTests.article("a\(n)", headline: "Updated \(n)"), id: "a\(n)")
        }
        _ = try store.remove((0..<24).filter { $0 % 5 == 1 }.map { "a\($0)" })
        try store.put(ChangesTests.article("a1", headline: "Back"), id: "a1")
        // The tail (below the threshold): an update, a removal, a new ID, a removed one back.
        try store.put(ChangesTests.article("a2", headline: "Tail"), id: "a2")
        _ = try store.remove(["a4"])
        try store.put(ChangesTests.article("t1"), id: "t1")
        try store.put(ChangesTests.article("a6", headline: "Again"), id: "a6")
        return store
    }

    @Test("each line's verdict is the look-up's, with windows of any size", arguments: [1, 2, 5, 16, LastChangeWalk.defaultWindow])
    func verdictsMatchLookUps(window: Int) throws {
        let store = try spreadStore()
        #expect(try store.statistics().segments?.count ?? 0 >= 4)
        try store.state.withLock { state in
            #expect(state.entries.tailCount > 0)
            var walk = LastChangeWalk(state.entries, window: window)
            var verdicts: [LastChangeWalk.Verdict] = []
            var failure: Error?
            _ = try store.changeLog.forEachLine(end: state.index.consumed) { line, _, sequence, _ in
                do {
                    let key = DocumentID(line.id)
                    let verdict = try walk.verdict(key, at: sequence)
                    var expected = LastChangeWalk.Verdict.superseded
                    if let change = try state.entries.lastChange(key), change.sequence == sequence {
                        expected = change.isRemoval ? .tombstone : .liveEntry
                    }
                    #expect(verdict == expected, "line \(sequence) of \(line.id)")
                    verdicts.append(verdict)
                } catch {
                    failure = error
                    return false
                }
                return true
            }
            if let failure { throw failure }
            #expect(verdicts.filter { $0 == .liveEntry }.count == (try state.entries.count))
            #expect(verdicts.contains(.tombstone) && verdicts.contains(.superseded))
        }
        try expectConsistent(store)
    }

    @Test("compact of a store split into segments and a tail keeps what compact of the log alone keeps")
    func compactMatchesLogOnly() throws {
        let segmented = try spreadStore()
        let logOnlyFolder = try TemporaryFolder()
        if FileManager.default.fileExists(atPath: logOnlyFolder.data) { try FileManager.default.removeItem(atPath: logOnlyFolder.data) }
        try FileManager.default.copyItem(atPath: folder.data, toPath: logOnlyFolder.data)
        try FileManager.default.removeItem(atPath: logOnlyFolder.data + "/" + FileNames.segments)
        let logOnly = try DocumentStore(
            folder: logOnlyFolder.data, schema: .testArticles, options: .init(lockTimeout: 5, flushThreshold: 0, usesSegments: false))
        let dropped = try segmented.compact()
        #expect(dropped > 0)
        #expect(try logOnly.compact() == dropped)
        #expect(ChangesTests.triples(try segmented.changes()) == ChangesTests.triples(try logOnly.changes()))
        #expect(try segmented.compact(purgeRemovals: true) == (try logOnly.compact(purgeRemovals: true)))
        #expect(ChangesTests.triples(try segmented.changes()) == ChangesTests.triples(try logOnly.changes()))
        try expectConsistent(segmented)
        try expectConsistent(logOnly)
    }
}
