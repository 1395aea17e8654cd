import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Flushes and merges of segments killed with SIGKILL at any moment: a script of small imports
/// into a folder whose segments are small (`ARCHIVIST_FLUSH_THRESHOLD`), so that it flushes and
/// merges after almost every one.
@Suite("archivist killed while it flushes or merges segments", .serialized)
struct SegmentCrashTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// Small segments: a flush after every import of 10 (5 changes outside an import, 40 in
    /// one), merges of two.
    static let environment = ["ARCHIVIST_FLUSH_THRESHOLD": "5", "ARCHIVIST_MERGE_FACTOR": "2"]

    @Test("a script of imports killed during its flushes and merges leaves a folder that passes check; run again, nothing is lost")
    func killedDuringMergesLosesNothing() throws {
        let lines = CLIResult.lines(String(decoding: ArticleGenerator.jsonLines(count: 600, seed: 0xF1A5), as: UTF8.self))
        var script = ""
        for (part, start) in stride(from: 0, to: lines.count, by: 10).enumerated() {
            let path = sandbox.root + "/part-\(part).jsonl"
            try sandbox.write(lines[start..<min(lines.count, start + 10)].joined(separator: "\n") + "\n", to: path)
            script += "import \(path)\n"
        }
        let reference = sandbox.root + "/reference"
        let whole = try sandbox.run(["--data", reference], dataOption: false, stdin: Array(script.utf8), environment: Self.environment)
        try #require(whole.status == 0, "\(whole)")
        let expected = try sandbox.run(["--data", reference, "export"], dataOption: false).stdoutText
        let stats = try sandbox.run(["--data", reference, "--format", "json", "stats"], dataOption: false).json()
        guard case .array(let list)? = stats["segments"] else {
            Issue.record("no segments: \(stats)")
            return
        }
        #expect(list.count >= 2, "the reference left \(list.count) segments")
        var killedWhileWriting = 0
        for run in 0..<6 {
            let folder = sandbox.root + "/run-\(run)"
            let child = try sandbox.start(["--data", folder], dataOption: false, stdin: Array(script.utf8), environment: Self.environment)
            // The moment a segment is being written (a flush or a merge) once a few are there.
            let started = Date()
            while child.process.isRunning, Date().timeIntervalSince(started) < 60 {
                let written =
                    (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + FileNames.segments))?
                    .filter { $0.hasSuffix(".seg") }.count ?? 0
                let writing =
                    (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + FileNames.temporary))?
                    .contains { $0.hasSuffix(".seg.new") } ?? false
                if written >= run / 2 + 1 && writing { break }
                usleep(100)
            }
            usleep(useconds_t(run * 300))
            child.signal(SIGKILL)
            let ended = try child.wait()
            if ended.wasSignaled && ended.status == SIGKILL { killedWhileWriting += 1 }
            let check = try sandbox.run(["--data", folder, "check"], dataOption: false, environment: Self.environment)
            #expect(check.status == 0, "run \(run): check failed after the kill: \(check)")
            let again = try sandbox.run(["--data", folder], dataOption: false, stdin: Array(script.utf8), environment: Self.environment)
            #expect(again.status == 0, "run \(run): \(again)")
            #expect(try sandbox.run(["--data", folder, "export"], dataOption: false).stdoutText == expected, "run \(run): documents lost")
            for query in [["count", "section_name = Sports"], ["find", "\"election\"", "--limit", "5", "--fields", "_id"]] {
                let ours = try sandbox.run(["--data", folder] + query, dataOption: false)
                let theirs = try sandbox.run(["--data", reference] + query, dataOption: false)
                #expect(ours.stdoutText == theirs.stdoutText, "run \(run): \(query) answers otherwise")
            }
            #expect(try sandbox.run(["--data", folder, "check"], dataOption: false).status == 0)
            try? FileManager.default.removeItem(atPath: folder)
        }
        #expect(killedWhileWriting >= 3, "only \(killedWhileWriting) of the 6 runs were still running when killed")
    }
}
