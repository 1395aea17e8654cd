import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

/// A bad `ARCHIVIST_*` variable is a usage error naming it (exit 64, one line), read where it is
/// used and before anything is written; none is silently ignored.
@Suite("bad ARCHIVIST_* variables")
struct EnvironmentVariableTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// Values that are not a number of seconds.
    static let notSeconds = ["soon", "-1", "inf", "nan", "", "10s"]

    @Test(
        "a bad ARCHIVIST_LOCK_TIMEOUT is a usage error naming it, and the data folder is not touched",
        arguments: EnvironmentVariableTests.notSeconds)
    func badLockTimeout(_ value: String) throws {
        let result = try sandbox.run(["put", "doc", "{}"], environment: ["ARCHIVIST_LOCK_TIMEOUT": value])
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["error: ARCHIVIST_LOCK_TIMEOUT takes a number of seconds, not '\(value)'"])
        #expect(!sandbox.exists(sandbox.data))
    }

    @Test(
        "a bad ARCHIVIST_FLUSH_THRESHOLD or ARCHIVIST_MERGE_FACTOR is a usage error naming it, and the data folder is not touched",
        arguments: [
            ("ARCHIVIST_FLUSH_THRESHOLD", "0", 1), ("ARCHIVIST_FLUSH_THRESHOLD", "many", 1), ("ARCHIVIST_FLUSH_THRESHOLD", "1.5", 1),
            ("ARCHIVIST_MERGE_FACTOR", "1", 2), ("ARCHIVIST_MERGE_FACTOR", "-3", 2), ("ARCHIVIST_MERGE_FACTOR", "", 2),
        ])
    func badSegmentKnob(_ name: String, _ value: String, _ minimum: Int) throws {
        let result = try sandbox.run(["put", "doc", "{}"], environment: [name: value])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines == ["error: \(name) takes a whole number of at least \(minimum), not '\(value)'"])
        #expect(!sandbox.exists(sandbox.data))
    }

    @Test("an ARCHIVIST_MERGES other than background or inline is a usage error naming it", arguments: ["", "later", "Inline"])
    func badMergesChoice(_ value: String) throws {
        let result = try sandbox.run(["put", "doc", "{}"], environment: ["ARCHIVIST_MERGES": value])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines == ["error: ARCHIVIST_MERGES takes background or inline, not '\(value)'"])
        #expect(!sandbox.exists(sandbox.data))
    }

    @Test("a number of seconds is a good ARCHIVIST_LOCK_TIMEOUT", arguments: ["0", "0.5", "2e1", "10"])
    func goodLockTimeout(_ value: String) throws {
        let result = try sandbox.run(["put", "doc", "{}"], environment: ["ARCHIVIST_LOCK_TIMEOUT": value])
        #expect(result.status == 0, "\(result)")
    }

    @Test(
        "a bad ARCHIVIST_PACE, ARCHIVIST_BACKOFF or ARCHIVIST_TIMEOUT stops search and refresh with a usage error naming it",
        arguments: ["ARCHIVIST_PACE", "ARCHIVIST_BACKOFF", "ARCHIVIST_TIMEOUT"], ["search", "refresh"])
    func badClientVariable(_ name: String, _ command: String) throws {
        // No server listens there: the variable is refused before any request is made.
        let environment = [
            "NYT_API_KEY": "test-key", "NYT_API_BASE": "http://127.0.0.1:9",
            "ARCHIVIST_PACE": "0", "ARCHIVIST_BACKOFF": "0", "ARCHIVIST_TIMEOUT": "1",
        ]
        .merging([name: "fast"]) { $1 }
        let result = try sandbox.run([command] + (command == "search" ? ["climate"] : []), environment: environment)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["error: \(name) takes a number of seconds, not 'fast'"])
        #expect(!sandbox.exists(sandbox.data))
    }

    @Test("an empty ARCHIVIST_DATA is a usage error naming it (not ./data); with --data it is not read")
    func emptyDataFolder() throws {
        let result = try sandbox.run(
            ["put", "doc", "{}"], dataOption: false, environment: ["ARCHIVIST_DATA": ""],
            currentDirectory: sandbox.root)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines == ["error: ARCHIVIST_DATA is empty; give a folder or unset it"])
        #expect(!sandbox.exists(sandbox.data), "./data was used")

        let given = try sandbox.run(
            ["--data", sandbox.data, "put", "doc", "{}"], dataOption: false,
            environment: ["ARCHIVIST_DATA": ""])
        #expect(given.status == 0, "\(given)")
    }

    @Test("an empty ARCHIVIST_HISTORY is a usage error naming it when the interactive shell starts")
    func emptyHistoryPath() throws {
        let result = try sandbox.run(["--interactive"], stdin: Array("count\n".utf8), environment: ["ARCHIVIST_HISTORY": ""])
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty, "the shell started: \(result)")
        #expect(result.stderrLines == ["error: ARCHIVIST_HISTORY is empty; give a file or unset it"])

        // A script keeps no history, so it does not read the variable.
        let script = try sandbox.run(["--batch"], stdin: Array("count\n".utf8), environment: ["ARCHIVIST_HISTORY": ""])
        #expect(script.status == 0, "\(script)")
        #expect(script.stdoutText == "0\n")
    }
}
