import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Ctrl-C (SIGINT) during a long `import`: the command stops between batches, keeps every batch
/// it committed, and exits 130.
@Suite("Ctrl-C during long commands")
struct InterruptTests {
    @Test func ctrlCStopsImportBetweenBatchesKeepingCommittedOnes() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let lines = ArticleGenerator.jsonLines(count: 3_500, seed: 31)
        let cuts = lines.indices.filter { lines[$0] == 0x0A }
        let firstPart = Array(lines[...cuts[2_499]])  // 2,500 lines: one batch of 2,000 commits, 500 wait
        let rest = Array(lines[(cuts[2_499] + 1)...])

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try CLI.binary())
        process.arguments = ["--data", sandbox.data, "--format", "jsonl", "import", "-"]
        let input = Pipe()
        process.standardInput = input
        let stdoutPath = sandbox.io + "/interrupt-stdout"
        let stderrPath = sandbox.io + "/interrupt-stderr"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        input.fileHandleForWriting.write(Data(firstPart))

        // Wait for the first batch to be committed.
        var committed = 0
        let deadline = Date().addingTimeInterval(60)
        while committed < 2_000 && Date() < deadline {
            usleep(20_000)
            committed = (try? DocumentStore(folder: sandbox.data, schema: .nyt).count) ?? 0
        }
        #expect(committed == 2_000)
        kill(process.processIdentifier, SIGINT)
        usleep(100_000)
        input.fileHandleForWriting.write(Data(rest))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()

        let stdout = String(decoding: FileManager.default.contents(atPath: stdoutPath) ?? Data(), as: UTF8.self)
        let stderr = String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(stdout)\(stderr)")
        #expect(stdout == #"{"added":2000,"updated":0,"unchanged":0,"failed":0}"# + "\n")
        #expect(stderr == "error: import: stdin: interrupted; the 2000 documents of the batches before are stored\n")
        let store = try DocumentStore(folder: sandbox.data, schema: .nyt)
        #expect(try store.count == 2_000)
        #expect(try store.check().isEmpty)
    }

    @Test func ctrlCStopsALongFindListing() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let file = sandbox.io + "/articles.jsonl"
        try sandbox.write(ArticleGenerator.jsonLines(count: 3_000, seed: 32), to: file)
        #expect(try sandbox.run(["import", file]).status == 0)

        // A reader that does not read yet: the listing blocks on a full pipe.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try CLI.binary())
        process.arguments = ["--data", sandbox.data, "--format", "jsonl", "find"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Output has begun, so the command runs with Ctrl-C caught (however slowly a busy machine
        // started it); the rest of the listing waits on the full pipe.
        let begun = output.fileHandleForReading.availableData
        #expect(!begun.isEmpty)
        kill(process.processIdentifier, SIGINT)
        usleep(100_000)
        let printed = begun + output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = printed.split(separator: 0x0A)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
        #expect(lines.count < 3_000, "stopped early")
        #expect(String(decoding: message, as: UTF8.self).hasPrefix("error: interrupted after "))
        // Everything printed is whole documents.
        for line in lines { #expect((try? JSONParser.parse(Array(line))) != nil) }
    }
}
