import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A flush (the segment written by `compact`) killed with SIGKILL at any moment.
@Suite("archivist compact killed while it writes a segment", .serialized)
struct MergeCrashTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    @Test("a compact killed with SIGKILL, during its rewrite of the index or its segment, loses nothing")
    func compactKilledAtAnyMomentLosesNothing() throws {
        let lines = ArticleGenerator.jsonLines(count: 1500, seed: 0xBEEF)
        let sourcePath = sandbox.root + "/all.jsonl"
        try sandbox.write(lines, to: sourcePath)
        let template = sandbox.root + "/template"
        let seeded = try sandbox.run(["--data", template, "import", sourcePath], dataOption: false)
        try #require(seeded.status == 0, "\(seeded)")
        let expected = try sandbox.run(["--data", template, "export"], dataOption: false).stdoutText
        // How long an uninterrupted compact (the tail flushed into a segment, the index rewritten) takes.
        let measured = sandbox.root + "/measured"
        try FileManager.default.copyItem(atPath: template, toPath: measured)
        let full = try sandbox.run(["--data", measured, "compact"], dataOption: false)
        try #require(full.status == 0, "\(full)")
        #expect(sandbox.exists(measured + "/" + FileNames.segments + "/000001.seg"), "compact wrote no segment")
        let snapshotTemporary = FileNames.temporary + "/" + FileNames.segments + "_000001.seg.new"
        var killedWhileWriting = 0
        for run in 0..<6 {
            let folder = sandbox.root + "/run-\(run)"
            try FileManager.default.copyItem(atPath: template, toPath: folder)
            let child = try sandbox.start(["--data", folder, "compact"], dataOption: false)
            if run % 2 == 0 {
                // The moment the segment's temporary file appears, or a little after.
                let started = Date()
                while child.process.isRunning, !sandbox.exists(folder + "/" + snapshotTemporary), Date().timeIntervalSince(started) < 60 {
                    usleep(200)
                }
                usleep(useconds_t(run * 2000))
            } else {
                usleep(useconds_t(Double(run) / 6 * full.seconds * 1_000_000))
            }
            child.signal(SIGKILL)
            let ended = try child.wait()
            if ended.wasSignaled && ended.status == SIGKILL { killedWhileWriting += 1 }
            let check = try sandbox.run(["--data", folder, "check"], dataOption: false)
            #expect(check.status == 0, "run \(run): check failed: \(check)")
            let export = try sandbox.run(["--data", folder, "export"], dataOption: false)
            #expect(export.stdoutText == expected, "run \(run): the documents changed")
            let count = try sandbox.run(["--data", folder, "count", "section_name = Sports"], dataOption: false)
            let reference = try sandbox.run(["--data", template, "count", "section_name = Sports"], dataOption: false)
            #expect(count.stdoutText == reference.stdoutText, "run \(run): a query answers otherwise")
            try? FileManager.default.removeItem(atPath: folder)
        }
        #expect(killedWhileWriting >= 1, "none of the 6 compacts was still running when killed")
    }
}
