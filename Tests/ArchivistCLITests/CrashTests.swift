import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Kills `archivist import` with SIGKILL at many moments and checks that the folder it leaves is
/// consistent: `check` passes and every stored document is a complete version of a source document.
@Suite("archivist import killed at any moment", .serialized)
struct CrashTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    static let total = 2200
    static let prepopulated = 800
    /// How many documents `import` commits per durable batch.
    static let importBatch = Command.importBatchSize

    @Test("an import killed with SIGKILL leaves a folder that passes check and holds only complete documents")
    func importKilledAtAnyMomentLeavesAConsistentFolder() throws {
        let clock = Date()
        // The source: 2200 generated documents, which import commits in two durable batches (2000
        // and 200). The first 800 also exist in an older version (print_page changed), which the
        // pre-populated folders hold, so the import updates them as well as adding.
        let lines = ArticleGenerator.jsonLines(count: Self.total, seed: 0xC0FFEE)
        let sourceDocuments = try CLIResult.lines(String(decoding: lines, as: UTF8.self)).map { try JSONParser.parse($0) }
        try #require(sourceDocuments.count == Self.total)
        let newVersions = byID(sourceDocuments)
        try #require(newVersions.count == Self.total, "the generator repeated an _id")
        var oldVersions: [String: JSONValue] = [:]
        var oldLines: [UInt8] = []
        for (number, document) in sourceDocuments.prefix(Self.prepopulated).enumerated() {
            let old = document.setting("print_page", to: .string("old-\(number)"))
            oldVersions[document["_id"]!.stringValue!] = old
            oldLines += JSONWriter.compactBytes(old) + [0x0A]
        }
        let sourcePath = sandbox.root + "/all.jsonl"
        let oldPath = sandbox.root + "/old.jsonl"
        try sandbox.write(lines, to: sourcePath)
        try sandbox.write(oldLines, to: oldPath)

        // A pre-populated folder to copy for half of the runs.
        let template = sandbox.root + "/template"
        let seeded = try sandbox.run(["--data", template, "import", oldPath], dataOption: false)
        try #require(seeded.status == 0, "\(seeded)")
        #expect(seeded.stdoutText == #"{"added":800,"updated":0,"unchanged":0,"failed":0}"# + "\n")

        // How long one uninterrupted import takes (on a pre-populated folder: updates and adds).
        let measured = sandbox.root + "/measured"
        try FileManager.default.copyItem(atPath: template, toPath: measured)
        let full = try sandbox.run(["--data", measured, "import", sourcePath], dataOption: false)
        try #require(full.status == 0, "\(full)")
        #expect(full.stdoutText == #"{"added":1400,"updated":800,"unchanged":0,"failed":0}"# + "\n")
        let duration = full.seconds
        try FileManager.default.removeItem(atPath: measured)

        // Half the runs are killed after a fixed delay, from a few milliseconds (before or while
        // the input is read) to most of the import. The other half are killed the moment the test
        // sees a commit reach a given step, since renaming a batch into place takes only a sliver
        // of the run and fixed delays rarely land in it.
        let ids = sourceDocuments.map { $0["_id"]!.stringValue! }
        var moments: [Moment] = [.after(0.003), .after(0.02)]
        for step in 0..<4 { moments.append(.after(duration * (0.15 + 0.75 * Double(step) / 3))) }
        moments += [
            .journalAppears(time: 1),
            .documentWritten(ids[900]),  // first batch, partway through the renames
            .documentWritten(ids[1500]),  // first batch, further through the renames
            .documentWritten(ids[Self.importBatch - 1]),  // first batch renamed, index not yet durable
            .journalAppears(time: 2),  // first batch committed, second in flight
            .documentWritten(ids[Self.importBatch + 100]),  // second batch, in the renames
        ]
        let runs = moments.count
        var killed = 0
        var partial = 0
        var summary: [String] = []
        for (run, moment) in moments.enumerated() {
            let prepopulate = run % 2 == 1
            let folder = sandbox.root + "/run-\(run)"
            if prepopulate { try FileManager.default.copyItem(atPath: template, toPath: folder) }
            let floor = prepopulate ? Self.prepopulated : 0
            let context =
                "run \(run): kill \(moment) (a full import takes \(Int(duration * 1000)) ms), \(prepopulate ? "pre-populated" : "empty") folder"

            let child = try sandbox.start(["--data", folder, "import", sourcePath], dataOption: false)
            moment.wait(for: child, folder: folder)
            child.signal(SIGKILL)
            let interrupted = try child.wait()
            let wasKilled = interrupted.wasSignaled && interrupted.status == SIGKILL
            #expect(wasKilled || interrupted.status == 0, "\(context): \(interrupted)")
            if wasKilled { killed += 1 }

            let check = try sandbox.run(["--data", folder, "check"], dataOption: false)
            #expect(check.status == 0, "\(context): check failed: \(check)")
            #expect(!sandbox.exists(folder + "/" + FileNames.journal), "\(context): the journal is still there after check")
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + FileNames.temporary))?.isEmpty ?? true,
                "\(context): temporary files are left after check")

            let export = try sandbox.run(["--data", folder, "export"], dataOption: false)
            #expect(export.status == 0, "\(context): export failed: \(export)")
            let stored = try export.jsonLines()
            #expect(stored.count >= floor && stored.count <= Self.total, "\(context): \(stored.count) documents")
            if !wasKilled { #expect(stored.count == Self.total, "\(context): the import finished but documents are missing") }
            if stored.count > floor && stored.count < Self.total { partial += 1 }
            summary.append(
                "\(moment)\(prepopulate ? " (pre-populated)" : ""): \(wasKilled ? "killed" : "finished"), \(stored.count) stored")
            var storedIDs: Set<String> = []
            var mismatches: [String] = []
            for document in stored {
                guard let id = document["_id"]?.stringValue else {
                    mismatches.append("a document without _id")
                    continue
                }
                storedIDs.insert(id)
                if document == newVersions[id] { continue }
                if prepopulate, document == oldVersions[id] { continue }
                mismatches.append(id)
            }
            #expect(
                mismatches.isEmpty,
                "\(context): \(mismatches.count) stored documents match no version of their source, first: \(mismatches.prefix(3))")
            #expect(storedIDs.count == stored.count, "\(context): an ID was exported twice")
            if prepopulate {
                #expect(oldVersions.keys.allSatisfy { storedIDs.contains($0) }, "\(context): a pre-populated document was lost")
            }
            // Sequence numbers after the kill: every line of the log numbered 1, 2, 3, ... without a
            // gap, each stored document's last change among them, and the next commit numbered next.
            let changes = try sandbox.run(["--data", folder, "changes"], dataOption: false)
            let numbers = try changes.jsonLines().compactMap { line -> Int? in
                guard case .number(let text)? = line["seq"] else { return nil }
                return Int(text)
            }
            #expect(numbers == Array(1..<(numbers.count + 1)), "\(context): the feed after the kill is not 1...n")
            #expect(numbers.count >= stored.count, "\(context): fewer changes than documents")
            let next = try sandbox.run(["--data", folder, "put", "after-the-kill", "{}"], dataOption: false)
            #expect(next.status == 0, "\(context): \(next)")
            let after = try sandbox.run(["--data", folder, "changes", "--since", String(numbers.count)], dataOption: false)
            #expect(after.stdoutLines.count == 1 && after.stdoutText.contains(#""seq":\#(numbers.count + 1),"#), "\(context): \(after)")
            try? FileManager.default.removeItem(atPath: folder)
        }
        // At least some kills must land mid-import, or the test proved nothing.
        #expect(killed >= runs / 2, "only \(killed) of \(runs) imports were still running when killed")
        #expect(partial >= 2, "only \(partial) of \(runs) runs left a batch partly renamed or one batch of two committed")
        print(
            "CrashTests: \(runs) runs, \(killed) killed, \(partial) left a partial import; full import \(String(format: "%.2f", duration)) s; test took \(String(format: "%.1f", Date().timeIntervalSince(clock))) s\n  "
                + summary.joined(separator: "\n  "))
    }
}

/// When a crash-test run kills the import.
enum Moment: CustomStringConvertible {
    /// After this many seconds.
    case after(Double)
    /// As soon as `journal.jsonl` appears for the `time`-th time (a batch starts to commit).
    case journalAppears(time: Int)
    /// As soon as the file of this document is created or replaced (renamed into place).
    case documentWritten(String)

    var description: String {
        switch self {
        case .after(let seconds): return "after \(Int(seconds * 1000)) ms"
        case .journalAppears(let time): return "when the journal appears (batch \(time))"
        case .documentWritten(let id): return "when \(id) is renamed into place"
        }
    }

    /// Returns at the moment (or when the process has ended, or after 60 s).
    func wait(for child: RunningCLI, folder: String) {
        switch self {
        case .after(let seconds):
            usleep(useconds_t(seconds * 1_000_000))
        case .journalAppears(let time):
            let journal = folder + "/" + FileNames.journal
            var seen = 0
            var present = false
            poll(child) {
                let now = fileFacts(journal) != nil
                if now && !present { seen += 1 }
                present = now
                return seen >= time
            }
        case .documentWritten(let id):
            let path = folder + "/" + FileNames.documentPath(for: id, in: .nyt)
            let original = fileFacts(path)?.inode
            poll(child) { fileFacts(path).map { $0.inode != original } ?? false }
        }
    }

    private func poll(_ child: RunningCLI, until condition: () -> Bool) {
        while child.process.isRunning, Date().timeIntervalSince(child.started) < 60 {
            if condition() { return }
            usleep(200)
        }
    }
}
