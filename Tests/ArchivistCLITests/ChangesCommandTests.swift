import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `changes`, `changes --follow` and `watch` with the real binary: numbered changes in order,
/// followers that see every change of several writer processes exactly once, and a follower
/// restarted with `--since` that resumes without loss or duplicates.
@Suite("archivist changes")
struct ChangesCommandTests {
    static func article(_ id: String, section: String = "Sports", headline: String = "Knicks Win") -> String {
        #"{"_id":"\#(id)","section_name":"\#(section)","headline":{"main":"\#(headline)"},"pub_date":"2019-01-02T00:00:00Z"}"#
    }

    /// The sequence numbers of `changes` JSON lines.
    static func numbers(_ lines: [String]) -> [Int] {
        lines.compactMap { line in
            guard case .number(let text)? = try? JSONParser.parse(line)["seq"] else { return nil }
            return Int(text)
        }
    }

    /// Waits until a growing output file holds at least `count` lines (or 30 s pass).
    static func waitForLines(_ path: String, count: Int) -> [String] {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let text = (FileManager.default.contents(atPath: path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let lines = CLIResult.lines(text)
            if lines.count >= count || Date() > deadline { return lines }
            usleep(10_000)
        }
    }

    @Test("changes prints numbered changes in order, from --since, with --fields; stats says the last number")
    func listsChanges() throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "a", Self.article("a")])
        try sandbox.run(["put", "b", Self.article("b", section: "World", headline: "Vote Count")])
        try sandbox.run(["put", "a", Self.article("a", headline: "Knicks Lose")])
        try sandbox.run(["remove", "b"])
        let all = try sandbox.run(["changes"])
        #expect(all.status == 0, "\(all)")
        let records = try all.jsonLines()
        #expect(records.map { $0["change"]?.stringValue } == ["added", "added", "updated", "removed"])
        #expect(records.map { $0["id"]?.stringValue } == ["a", "b", "a", "b"])
        #expect(records.allSatisfy { $0["updated_at"]?.stringValue?.count == 24 })
        let since = try sandbox.run(["changes", "--since", "2", "--fields", "headline.main"])
        #expect(since.stdoutLines.count == 2)
        #expect(try since.jsonLines().map { $0["headline.main"]?.stringValue } == ["Knicks Lose", "Vote Count"])
        let filtered = try sandbox.run(["changes", "section_name", "=", "World"])
        #expect(Self.numbers(filtered.stdoutLines) == [2, 4])
        let stats = try sandbox.run(["--format", "jsonl", "stats"])
        #expect(try stats.json()["last_seq"] == .number("4"))
        let table = try sandbox.run(["--format", "table", "changes", "--since", "3"])
        #expect(table.stdoutLines.count == 2 && table.stdoutLines[1].contains("removed"))
    }

    @Test(
        "compact keeps removals for followers; after --purge-removals a --since below the feed's start fails with one line saying where it starts"
    )
    func compactedSinceFails() throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "a", Self.article("a")])
        try sandbox.run(["put", "b", Self.article("b")])
        try sandbox.run(["remove", "a"])
        let compacted = try sandbox.run(["--format", "jsonl", "compact"])
        #expect(compacted.status == 0 && compacted.stderr.isEmpty, "\(compacted)")
        #expect(try compacted.json()["feed_start"] == .number("0"))
        let kept = try sandbox.run(["changes", "--since", "1"])
        #expect(kept.status == 0 && Self.numbers(kept.stdoutLines) == [2, 3], "\(kept)")
        #expect(try kept.jsonLines().last?["change"] == .string("removed"))
        let purged = try sandbox.run(["--format", "jsonl", "compact", "--purge-removals"])
        #expect(purged.status == 0, "\(purged)")
        #expect(try purged.json()["feed_start"] == .number("3"))
        #expect(
            purged.stderrText.contains("feed_start moved to 3") && purged.stderrText.contains("must read every document again"), "\(purged)"
        )
        let failed = try sandbox.run(["changes", "--since", "1"])
        #expect(failed.status == 1 && failed.stdout.isEmpty)
        #expect(failed.stderrLines.count == 1 && failed.stderrText.contains("starts after seq 3"), "\(failed)")
        let fromStart = try sandbox.run(["changes", "--since", "3"])
        #expect(fromStart.status == 0 && fromStart.stdout.isEmpty)
        let unknown = try sandbox.run(["changes", "--fields", "multimedia"])
        #expect(unknown.status == 64 && unknown.stderrText.contains("multimedia"))
    }

    @Test("repair after hand edits keeps every number; an unreadable index is numbered anew, and the open and repair say so")
    func repairKeepsOrRenumbers() throws {
        let sandbox = try TemporaryFolder()
        for id in ["a", "b", "c"] { try sandbox.run(["put", id, Self.article(id)]) }
        try sandbox.run(["remove", "c"])
        usleep(5_000)
        // Edited and deleted by hand: repair gives the edit and the deletion new numbers, a keeps 1.
        try sandbox.write(Array(#"{"_id": "b", "headline": {"main": "By hand"}}"#.utf8), to: sandbox.documentFile("b"))
        try FileManager.default.removeItem(atPath: sandbox.documentFile("a"))
        let repair = try sandbox.run(["repair"])
        #expect(repair.status == 0 && !repair.stderrText.contains("renumbered"), "\(repair)")
        #expect(try repair.jsonLines().map { $0["action"]?.stringValue } == ["rebuilt"])
        let changes = try sandbox.run(["changes", "--since", "1"])
        #expect(Self.numbers(changes.stdoutLines) == [4, 5, 6])
        #expect(
            try changes.jsonLines().map { "\($0["id"]?.stringValue ?? "") \($0["change"]?.stringValue ?? "")" } == [
                "c removed", "b updated", "a removed",
            ])
        // An unreadable index: the process that opens it rebuilds it with new numbers and says so.
        try sandbox.write(Array("garbage\n".utf8), to: sandbox.path(FileNames.index))
        let renumbered = try sandbox.run(["--format", "jsonl", "repair"])
        #expect(renumbered.status == 0, "\(renumbered)")
        #expect(renumbered.stderrText.contains("feed_start moved to 6"), "\(renumbered)")
        #expect(try renumbered.jsonLines().contains { $0["action"] == .string("renumbered") && $0["to"] == .string("feed_start 6") })
        let since = try sandbox.run(["changes", "--since", "1"])
        #expect(since.status == 1 && since.stderrText.contains("starts after seq 6"), "\(since)")
        #expect(Self.numbers(try sandbox.run(["changes"]).stdoutLines) == [7])
    }

    @Test("three writer processes and two followers: each follower sees every change once, in order, without gaps; a restarted one resumes")
    func followersSeeEveryChange() throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "seed", Self.article("seed")])
        let first = try sandbox.start(["changes", "--follow", "--format", "jsonl"])
        let second = try sandbox.start(["changes", "--follow", "--format", "jsonl"])
        var followers = [first, second]
        // However the test ends, no follower outlives it.
        defer { for follower in followers where follower.process.isRunning { follower.signal(SIGKILL) } }
        // Writers: each a script of puts, updates and removals, one commit a line.
        let perWriter = 40
        var writers: [RunningCLI] = []
        for writer in 0..<3 {
            var script = ""
            for n in 0..<perWriter {
                switch n % 4 {
                case 3: script += "remove w\(writer)-\((n - 1) % 5)\n"
                default: script += "put w\(writer)-\(n % 5) '\(Self.article("w\(writer)-\(n % 5)", headline: "Take \(n)"))'\n"
                }
            }
            writers.append(try sandbox.start([], stdin: Array(script.utf8)))
        }
        // Halfway, the second follower stops; it is started again from the last number it printed.
        _ = Self.waitForLines(second.stdoutPath, count: 30)
        second.signal(SIGINT)
        let stopped = try second.wait(timeout: 30)
        #expect(stopped.status == 130, "\(stopped)")
        let printedBefore = Self.numbers(stopped.stdoutLines)
        let resumed = try sandbox.start(["changes", "--follow", "--format", "jsonl", "--since", String(printedBefore.last ?? 0)])
        followers.append(resumed)
        for writer in writers {
            let result = try writer.wait(timeout: 120)
            #expect(result.status == 0, "\(result)")
        }
        let stats = try sandbox.run(["--format", "jsonl", "stats"]).json()
        guard case .number(let lastText)? = stats["last_seq"], let last = Int(lastText) else {
            Issue.record("no last_seq in \(stats)")
            return
        }
        let expected = Array(1...last)
        #expect(last > 1 + 3 * perWriter / 2, "too few changes: \(stats)")
        _ = Self.waitForLines(first.stdoutPath, count: last)
        _ = Self.waitForLines(resumed.stdoutPath, count: last - (printedBefore.last ?? 0))
        first.signal(SIGINT)
        resumed.signal(SIGINT)
        let firstResult = try first.wait(timeout: 30)
        let resumedResult = try resumed.wait(timeout: 30)
        #expect(Self.numbers(firstResult.stdoutLines) == expected)
        #expect(printedBefore + Self.numbers(resumedResult.stdoutLines) == expected)
        // The followers' view agrees with the log read afterwards.
        let afterwards = try sandbox.run(["changes"])
        #expect(afterwards.stdoutLines.count <= last)
        #expect(firstResult.stdoutLines.suffix(afterwards.stdoutLines.count).count == afterwards.stdoutLines.count)
    }

    @Test("a follower ends when the reader of its output goes away, while it waits for changes")
    func followerEndsWithItsReader() throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "a", Self.article("a")])
        // `head` reads one line and exits; the pipe is the shell's, so no other process (this
        // test's parallel children included) holds its reading end.
        let binary = try CLI.binary()
        let result = try sandbox.run(
            ["-c", "'\(binary)' --data '\(sandbox.data)' changes --follow --format jsonl | head -n 1"], dataOption: false,
            binary: "/bin/sh", timeout: 20)
        #expect(result.status == 0 && !result.wasSignaled, "\(result)")
        #expect(result.stdoutLines.count == 1 && result.stdoutText.contains(#""id":"a""#), "\(result)")
        #expect(result.seconds < 10, "the follower kept running \(result.seconds) s after its reader went away")
    }

    @Test("watch shows a line per change with its time, kind, number, ID and headline")
    func watchLines() throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "a", Self.article("a")])
        let watcher = try sandbox.start(["watch", "--since", "0"])
        defer { if watcher.process.isRunning { watcher.signal(SIGKILL) } }
        try sandbox.run(["put", "b", Self.article("b", headline: "Late Goal")])
        let lines = Self.waitForLines(watcher.stdoutPath, count: 2)
        watcher.signal(SIGINT)
        let result = try watcher.wait(timeout: 30)
        #expect(result.status == 130)
        #expect(lines.count == 2)
        #expect(lines.last?.contains("added") == true && lines.last?.contains("#2  b  Late Goal") == true, "\(lines)")
        #expect(
            lines.first?.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  added    #1  a  Knicks Win$"#, options: .regularExpression) != nil,
            "\(lines)")
    }
}
