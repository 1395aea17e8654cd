import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// `check` compares the log with the segments by sorting the log's lines by ID (`SortedRuns`,
/// spilled to `tmp/` in runs and merged) and walking them beside the segments' live records in
/// ID order (`SegmentRecordWalk`): the order must be the same however many runs there are, and
/// the comparison must find what the look-ups found, runs or not.
@Suite("sorted runs and check's comparison of the log with the segments")
struct SortedRunsTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// Records in a scrambled order: IDs of different lengths sharing prefixes, several numbers
    /// per ID, equal (ID, number) pairs told apart by their digests.
    static func scrambled() -> [(id: String, number: Int, kind: UInt8, digest: UInt64)] {
        var records: [(id: String, number: Int, kind: UInt8, digest: UInt64)] = []
        var generator = SplitMix64(state: 7)
        for n in 0..<700 {
            let id = ["a", "ab", "b", "ba", "é", "z"][n % 6] + String(generator.next() % 97)
            records.append((id, Int(generator.next() % 50), UInt8(n % 3), UInt64(n)))
        }
        return records
    }

    @Test(
        "the records come back in ID then number order, equal ones as added, in memory or from runs, whatever a reader reads at a time",
        arguments: [(64, nil), (300, nil), (4_096, nil), (16 << 20, nil), (64, 5), (300, 1), (4_096, 33)] as [(Int, Int?)])
    func orderWhateverTheRuns(runBytes: Int, readChunk: Int?) throws {
        let records = Self.scrambled()
        let runs = SortedRuns(
            fileSystem: POSIXFileSystem(), folder: folder.data + "/tmp", prefix: "test", runBytes: runBytes, readChunk: readChunk)
        for record in records {
            var id = record.id
            try id.withUTF8 {
                try runs.append(id: UnsafeRawBufferPointer($0), number: record.number, kind: record.kind, digest: record.digest)
            }
        }
        if runBytes < 4_096 { #expect(runs.runCount > 2) }
        if runBytes == 16 << 20 { #expect(runs.runCount == 0) }
        var seen: [(id: String, number: Int, kind: UInt8, digest: UInt64)] = []
        try runs.forEach { record in
            seen.append((String(decoding: record.id, as: UTF8.self), record.number, record.kind, record.digest))
            return true
        }
        let expected = records.enumerated().sorted { a, b in
            if a.element.id != b.element.id { return Array(a.element.id.utf8).lexicographicallyPrecedes(Array(b.element.id.utf8)) }
            return a.element.number != b.element.number ? a.element.number < b.element.number : a.offset < b.offset
        }.map(\.element)
        #expect(seen.count == expected.count)
        #expect(seen.map(\.id) == expected.map(\.id))
        #expect(seen.map(\.number) == expected.map(\.number))
        #expect(seen.map(\.digest) == expected.map(\.digest))
        #expect(seen.map(\.kind) == expected.map(\.kind))
        // The run files are gone.
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.data + "/tmp")) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a run file cut short is an error naming it, not a shorter answer")
    func truncatedRunIsAnError() throws {
        let runs = SortedRuns(fileSystem: POSIXFileSystem(), folder: folder.data + "/tmp", prefix: "cut", runBytes: 64)
        for n in 0..<40 {
            var id = "id\(n)"
            try id.withUTF8 { try runs.append(id: UnsafeRawBufferPointer($0), number: n, kind: 1, digest: 0) }
        }
        let first = folder.data + "/tmp/cut-1.run"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: first))
        try bytes.prefix(bytes.count - 3).write(to: URL(fileURLWithPath: first))
        var count = 0
        #expect {
            try runs.forEach { _ in
                count += 1
                return true
            }
        } throws: { error in
            "\(error)".contains("cut-1.run") && "\(error)".contains("ends inside a record")
        }
    }

    // MARK: check

    /// A store of several segments whose IDs were updated and removed in later ones, with a tail,
    /// sorting the log in runs of `runBytes`.
    func spreadStore(runBytes: Int) throws -> DocumentStore {
        var options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 4, mergeFactor: 1_000)
        options.checkRunBytes = runBytes
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        for n in 0..<24 { try store.put(ChangesTests.article("a\(n)"), id: "a\(n)") }
        for n in stride(from: 0, to: 24, by: 3) {
            try store.put(ChangesTests.article("a\(n)", headline: "Updated \(n)"), id: "a\(n)")
        }
        _ = try store.remove((0..<24).filter { $0 % 5 == 1 }.map { "a\($0)" })
        try store.put(ChangesTests.article("a1", headline: "Back"), id: "a1")
        try store.put(ChangesTests.article("a2", headline: "Tail"), id: "a2")
        _ = try store.remove(["a4"])
        return store
    }

    @Test("check finds a sound folder sound, with the log sorted in memory or in many runs", arguments: [64, 512, 16 << 20])
    func soundFolderIsSound(runBytes: Int) throws {
        let store = try spreadStore(runBytes: runBytes)
        #expect(try store.statistics().segments?.count ?? 0 > 3)
        #expect(try store.check().isEmpty)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.temporary)) ?? []
        #expect(left.isEmpty, "\(left)")
        try expectConsistent(store)
    }

    /// Rewrites the log's first line of `id` with `change` applied to it (same length), far
    /// from the end so that the segments stay current.
    func changeLine(of id: String, _ change: (String) -> String) throws {
        let indexPath = folder.data + "/" + FileNames.index
        var lines = try String(contentsOfFile: indexPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains(#""id":"\#(id)""#) })
        let changed = change(String(lines[line]))
        #expect(changed.utf8.count == lines[line].utf8.count && changed != String(lines[line]))
        lines[line] = Substring(changed)
        try lines.joined(separator: "\n").write(toFile: indexPath, atomically: false, encoding: .utf8)
    }

    @Test("a log line whose ID was changed by hand is found: the segments' ID has no line", arguments: [64, 16 << 20])
    func changedIDIsFound(runBytes: Int) throws {
        let store = try spreadStore(runBytes: runBytes)
        for n in 0..<40 { try store.put(ChangesTests.article("late\(n)"), id: "late\(n)") }
        // a23 was put once: its only line renamed to an ID no segment holds.
        try changeLine(of: "a23") { $0.replacingOccurrences(of: #""id":"a23""#, with: #""id":"q23""#) }
        var options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 4, mergeFactor: 1_000)
        options.checkRunBytes = runBytes
        let problems = try DocumentStore(folder: folder.data, schema: .testArticles, options: options).check()
        #expect(
            problems.contains {
                $0.kind == .damagedSnapshot && $0.detail.contains("'a23' (seq 24)") && $0.detail.contains("not in the log")
            },
            "\(problems)")
    }

    @Test("a log line whose number was changed by hand is found", arguments: [64, 16 << 20])
    func changedNumberIsFound(runBytes: Int) throws {
        let store = try spreadStore(runBytes: runBytes)
        for n in 0..<40 { try store.put(ChangesTests.article("late\(n)"), id: "late\(n)") }
        // a22 was put once, as line 23: its number made 93 (a number no line has).
        try changeLine(of: "a22") { $0.replacingOccurrences(of: #""seq":23"#, with: #""seq":93"#) }
        var options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 4, mergeFactor: 1_000)
        options.checkRunBytes = runBytes
        let problems = try DocumentStore(folder: folder.data, schema: .testArticles, options: options).check()
        #expect(
            problems.contains { $0.kind == .damagedSnapshot && $0.detail.contains("the log has change 93, the segments 23") },
            "\(problems)")
    }

    @Test(
        "check finds each document problem over segments and a tail, with the documents sorted in memory or in many runs",
        arguments: [64, 16 << 20])
    func documentProblemsAreFound(runBytes: Int) throws {
        let store = try spreadStore(runBytes: runBytes)
        // a1, a2 and the removal of a4 are the tail's; a0 and a5 live in segments.
        #expect(try store.statistics().changesAfterSegments == 3)
        func file(_ id: String) -> String { folder.data + "/" + store.documentPath(for: id) }
        let other = Array(#"{"_id": "a0", "headline": "changed by hand"}"#.utf8) + [0x0A]
        try Data(other).write(to: URL(fileURLWithPath: file("a0")))
        try Data(Array(#"{"_id": "a2", "headline": "changed by hand too"}"#.utf8) + [0x0A]).write(to: URL(fileURLWithPath: file("a2")))
        try FileManager.default.removeItem(atPath: file("a5"))
        try FileManager.default.removeItem(atPath: file("a1"))
        for id in ["zz1", "a4"] {
            try FileManager.default.createDirectory(
                atPath: (file(id) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(Array(#"{"_id": "\#(id)", "headline": "never stored"}"#.utf8) + [0x0A]).write(to: URL(fileURLWithPath: file(id)))
        }
        let problems = try store.check()
        let found = Set(problems.map { "\($0.kind) \($0.id ?? "-")" })
        #expect(
            found == [
                "changedDocument a0", "changedDocument a2", "missingDocument a5", "missingDocument a1", "unindexedDocument zz1",
                "unindexedDocument a4",
            ], "\(problems.map(\.description))")
        #expect(problems.first { $0.id == "a0" }?.detail.contains("content differs from the index") == true)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.temporary)) ?? []
        #expect(left.isEmpty, "\(left)")
    }
}
