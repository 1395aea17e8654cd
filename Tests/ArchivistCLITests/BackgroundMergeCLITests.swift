import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The command line's merges in the background: writes start `archivist merge --background` and
/// return; `merge` waits for it; `ARCHIVIST_MERGES=inline` merges in the writer as before.
@Suite("archivist merges in the background")
struct BackgroundMergeCLITests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// Small segments (a flush after every import of 10) and merges of two.
    static let environment = ["ARCHIVIST_FLUSH_THRESHOLD": "5", "ARCHIVIST_MERGE_FACTOR": "2"]

    /// A script of `parts` imports of 10 generated articles each.
    func script(parts: Int) throws -> String {
        let lines = CLIResult.lines(String(decoding: ArticleGenerator.jsonLines(count: parts * 10, seed: 0xBA5E), as: UTF8.self))
        var script = ""
        for part in 0..<parts {
            let path = sandbox.root + "/part-\(part).jsonl"
            try sandbox.write(lines[(part * 10)..<((part + 1) * 10)].joined(separator: "\n") + "\n", to: path)
            script += "import \(path)\n"
        }
        return script
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// What a merger left in a folder's `segments/merging/` (nothing when it is not there).
    func leftovers(_ folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + FileNames.merging)) ?? []
    }

    @Test("a script of imports leaves its merges to a merger in the background; after 'merge' the folder answers as one merged inline")
    func backgroundMergesAnswerAsInline() throws {
        let script = try script(parts: 30)
        let background = sandbox.root + "/background"
        let inline = sandbox.root + "/inline"
        let first = try sandbox.run(["--data", background], dataOption: false, stdin: Array(script.utf8), environment: Self.environment)
        try #require(first.status == 0, "\(first)")
        // Only a merger creates the merge lock: the script started one.
        #expect(exists(background + "/" + FileNames.mergeLock), "no merger ran in the background")
        let second = try sandbox.run(
            ["--data", inline], dataOption: false, stdin: Array(script.utf8),
            environment: Self.environment.merging(["ARCHIVIST_MERGES": "inline"]) { $1 })
        try #require(second.status == 0, "\(second)")
        #expect(!exists(inline + "/" + FileNames.mergeLock), "ARCHIVIST_MERGES=inline started a merger")

        let settled = try sandbox.run(
            ["--data", background, "--format", "json", "merge"], dataOption: false, environment: Self.environment)
        #expect(settled.status == 0, "\(settled)")
        let again = try sandbox.run(["--data", background, "--format", "json", "merge"], dataOption: false, environment: Self.environment)
        #expect(try again.json()["merges"] == .number("0"), "\(again)")
        #expect(leftovers(background).isEmpty)

        let policy = MergePolicy(factor: 2, base: 5)
        for folder in [background, inline] {
            let stats = try sandbox.run(["--data", folder, "--format", "json", "stats"], dataOption: false).json()
            guard case .array(let list)? = stats["segments"] else {
                Issue.record("no segments in \(folder): \(stats)")
                continue
            }
            let sizes = list.compactMap { segment -> Int? in
                guard case .number(let documents)? = segment["documents"], case .number(let deleted)? = segment["deleted"],
                    case .number(let tombstones)? = segment["tombstones"], let a = Int(documents), let b = Int(deleted),
                    let c = Int(tombstones)
                else { return nil }
                return a - b + c
            }
            #expect(sizes.count == list.count && stats["documents"] == .number("300"), "\(folder): \(sizes)")
            let classes = Dictionary(grouping: sizes, by: { policy.sizeClass($0) })
            #expect(classes.values.allSatisfy { $0.count < 2 }, "\(folder): merges still due: \(sizes)")
            #expect(try sandbox.run(["--data", folder, "check"], dataOption: false).status == 0)
        }
        for query in [["export"], ["count", "section_name = Sports"], ["find", "\"election\"", "--limit", "5", "--fields", "_id"]] {
            let ours = try sandbox.run(["--data", background] + query, dataOption: false)
            let theirs = try sandbox.run(["--data", inline] + query, dataOption: false)
            #expect(ours.status == 0 && ours.stdoutText == theirs.stdoutText, "\(query) answers otherwise")
        }
    }

    @Test("a command that wrote nothing starts no merger, even when merges are due under its settings")
    func readsStartNoMerger() throws {
        let folder = sandbox.root + "/folder"
        // Four segments that merges of 1,000 leave alone and merges of 2 would join.
        let environment = Self.environment.merging(["ARCHIVIST_MERGES": "inline", "ARCHIVIST_MERGE_FACTOR": "1000"]) { $1 }
        let loaded = try sandbox.run(
            ["--data", folder], dataOption: false, stdin: Array(try script(parts: 4).utf8), environment: environment)
        try #require(loaded.status == 0, "\(loaded)")
        for command in [["stats"], ["count", "section_name = Sports"], ["export"]] {
            let read = try sandbox.run(["--data", folder] + command, dataOption: false, environment: Self.environment)
            #expect(read.status == 0, "\(read)")
        }
        #expect(!exists(folder + "/" + FileNames.mergeLock), "a read started a merger")
    }

    @Test("'merge' waits for a merger at work; 'merge --background' returns at once without merging")
    func mergeWaitsForTheMergerAtWork() throws {
        let folder = sandbox.root + "/folder"
        let script = try script(parts: 4)
        let environment = Self.environment.merging(["ARCHIVIST_MERGES": "inline", "ARCHIVIST_MERGE_FACTOR": "8"]) { $1 }
        let loaded = try sandbox.run(["--data", folder], dataOption: false, stdin: Array(script.utf8), environment: environment)
        try #require(loaded.status == 0, "\(loaded)")
        let held = try POSIXFileSystem().lockExclusively(folder + "/" + FileNames.mergeLock, timeout: 0)
        let quick = try sandbox.run(
            ["--data", folder, "--format", "json", "merge", "--background"], dataOption: false, environment: Self.environment)
        #expect(quick.status == 0, "\(quick)")
        #expect(try quick.json()["merges"] == .number("0"))
        let waiting = try sandbox.start(["--data", folder, "--format", "json", "merge"], dataOption: false, environment: Self.environment)
        usleep(600_000)
        #expect(waiting.process.isRunning, "merge did not wait for the merge lock")
        held.release()
        let done = try waiting.wait()
        #expect(done.status == 0, "\(done)")
        guard case .number(let text)? = try done.json()["merges"], let merges = Int(text) else {
            Issue.record("no merge count: \(done)")
            return
        }
        #expect(merges >= 1, "\(done)")
        #expect(try sandbox.run(["--data", folder, "check"], dataOption: false).status == 0)
    }

    @Test("a merger killed at any moment leaves a folder that passes check and answers the same; the next merger finishes the work")
    func killedMergerLosesNothing() throws {
        let script = try script(parts: 30)
        // Thirty segments and no merge yet (merges of 1,000). (Each run loads its own folder: a
        // copy is another index.jsonl, which the segments do not cover.)
        let unmerged = Self.environment.merging(["ARCHIVIST_MERGES": "inline", "ARCHIVIST_MERGE_FACTOR": "1000"]) { $1 }
        var expected: String?
        var killed = 0
        for run in 0..<6 {
            let folder = sandbox.root + "/run-\(run)"
            let loaded = try sandbox.run(["--data", folder], dataOption: false, stdin: Array(script.utf8), environment: unmerged)
            try #require(loaded.status == 0, "\(loaded)")
            if expected == nil { expected = try sandbox.run(["--data", folder, "export"], dataOption: false).stdoutText }
            let merger = try sandbox.start(["--data", folder, "merge"], dataOption: false, environment: Self.environment)
            usleep(useconds_t(10_000 + run * 30_000))
            merger.signal(SIGKILL)
            let ended = try merger.wait()
            if ended.wasSignaled { killed += 1 }
            #expect(try sandbox.run(["--data", folder, "check"], dataOption: false).status == 0, "run \(run): check after the kill")
            #expect(try sandbox.run(["--data", folder, "export"], dataOption: false).stdoutText == expected, "run \(run)")
            let finished = try sandbox.run(
                ["--data", folder, "--format", "json", "merge"], dataOption: false, environment: Self.environment)
            #expect(finished.status == 0, "run \(run): \(finished)")
            #expect(leftovers(folder).isEmpty, "run \(run)")
            #expect(try sandbox.run(["--data", folder, "check"], dataOption: false).status == 0, "run \(run): check after merging")
            #expect(try sandbox.run(["--data", folder, "export"], dataOption: false).stdoutText == expected, "run \(run)")
            try? FileManager.default.removeItem(atPath: folder)
        }
        #expect(killed >= 3, "only \(killed) of the 6 mergers were still running when killed")
    }
}
