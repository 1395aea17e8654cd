import ArchivistBase
import ArchivistClient
import ArchivistShell
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// End-to-end tests of `archive` and `archives`: the built binary against the fake NYT server's
/// Archive API over real HTTP on 127.0.0.1.
@Suite("archivist archive against the fake NYT server")
struct ArchiveCommandTests {
    static let key = "arch1ve-K3Y-c0ffee"
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    func environment(_ server: FakeNYTServer) -> [String: String] {
        CLI.fakeAPIEnvironment(key: Self.key, base: server.baseURL)
    }

    @discardableResult
    func archive(
        _ arguments: [String], server: FakeNYTServer, format: String = "jsonl", sourceLocation: SourceLocation = #_sourceLocation
    )
        throws -> CLIResult
    {
        try sandbox.run(["--format", format, "archive"] + arguments, environment: environment(server), sourceLocation: sourceLocation)
    }

    func store() throws -> DocumentStore { try DocumentStore(folder: sandbox.data, schema: .nyt) }

    func expectConsistentStore(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problems = try store().check()
        #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
    }

    /// The statuses `archives` lists, by month.
    func statuses() throws -> [String: String] {
        let result = try sandbox.run(["--format", "jsonl", "archives"])
        #expect(result.status == 0, "\(result)")
        var statuses: [String: String] = [:]
        for line in result.stdoutLines {
            if let month = try json(line)["month"]?.stringValue { statuses[month] = try json(line)["status"]?.stringValue }
        }
        return statuses
    }

    /// The IDs of `corpus` whose pub_date falls in one of `months` (`YYYY-MM`).
    static func ids(of corpus: [JSONValue], in months: Set<String>) -> Set<String> {
        Set(corpus.filter { months.contains(String(($0["pub_date"]?.stringValue ?? "").prefix(7))) }.compactMap { $0["_id"]?.stringValue })
    }

    /// Every file under `root`, with its bytes.
    static func everyFile(under root: String) -> [(String, [UInt8])] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var files: [(String, [UInt8])] = []
        while let relative = enumerator?.nextObject() as? String {
            let path = root + "/" + relative
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                let data = FileManager.default.contents(atPath: path)
            {
                files.append((path, [UInt8](data)))
            }
        }
        return files
    }

    @Test func aRangeWithTheStrikeMonthsAndFaultsStoresEveryDocumentOnce() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 360, seed: 61, from: "1978-07-01", to: "1978-12-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        server.enqueue([.serverError, .malformed, .rateLimited, .truncated])
        let result = try archive(["1978-07", "1978-12"], server: server)
        #expect(result.status == 0, "\(result)")
        let printed = try result.json()
        #expect(printed["months"] == .number("6"))
        #expect(printed["fetched"] == .number("6"))
        #expect(printed["failed"] == .array([]))
        // September and October 1978 had no paper: complete and empty, as the real API answers.
        let expected = Self.ids(of: corpus, in: ["1978-07", "1978-08", "1978-11", "1978-12"])
        #expect(printed["added"] == .number(String(expected.count)))
        // The changes the run committed, for `changes --since`.
        #expect(printed["first_seq"] == .number("1") && printed["last_seq"] == .number(String(expected.count)))
        let store = try store()
        #expect(try store.count == expected.count)
        #expect(Set(try store.find(Query()).ids) == expected)
        for document in corpus where expected.contains(document["_id"]?.stringValue ?? "") {
            #expect(try store.document(withID: document["_id"]!.stringValue!) == document)
        }
        #expect(
            try statuses() == [
                "1978-07": "complete", "1978-08": "complete", "1978-09": "complete", "1978-10": "complete", "1978-11": "complete",
                "1978-12": "complete",
            ])
        #expect(server.requests.count == 10, "six months and four retries")
        #expect(server.requests.allSatisfy { $0.path.hasPrefix("/svc/archive/v1/1978/") })
        try expectConsistentStore()

        // Again: every month is complete and old, so nothing is requested.
        let again = try archive(["1978-07", "1978-12"], server: server)
        #expect(again.status == 0, "\(again)")
        #expect(again.stderrText.contains("note: 6 months of 1978-07..1978-12 are complete already and skipped"), "\(again.stderrText)")
        #expect(server.requests.count == 10)
        #expect(try again.json()["skipped"] == .number("6"))
        #expect(try again.json()["first_seq"] == .null, "a run that stores nothing new commits no change")
    }

    @Test func aTableRunPrintsARowPerMonthAndArchivesDrawsTheCalendar() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 40, seed: 62, from: "1978-08-01", to: "1978-11-30")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        let result = try archive(["1978-08", "1978-11"], server: server, format: "table")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("month") == true, "\(result.stdoutText)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("1978-09") && $0.contains("complete") })
        #expect(result.stdoutLines.last?.hasPrefix("4 months: 4 fetched, 0 skipped, 0 failed;") == true, "\(result.stdoutText)")
        let calendar = try sandbox.run(["--format", "table", "archives"])
        #expect(calendar.status == 0, "\(calendar)")
        #expect(calendar.stdoutLines.first == "      J F M A M J J A S O N D   documents")
        #expect(
            calendar.stdoutLines.dropFirst().first?.hasPrefix("1978  " + String(repeating: "  ", count: 7) + "# 0 0 # ") == true,
            "\(calendar.stdoutText)")
        #expect(calendar.stdoutLines.last?.hasPrefix("4 complete (") == true, "\(calendar.stdoutText)")
        let status = try sandbox.run(["--format", "table", "archive", "--status", "1978-01", "1978-12"])
        #expect(status.stdoutLines.dropFirst().first?.hasPrefix("1978  . . . . . . . # 0 0 # .") == true, "\(status.stdoutText)")
    }

    @Test func aMonthThatKeepsFailingIsReportedAndTheRunGoesOn() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 30, seed: 63, from: "2019-01-01", to: "2019-03-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        server.enqueue(Array(repeating: .serverError, count: 6))  // the first month's six attempts
        let result = try archive(["2019-01", "2019-03"], server: server)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText.contains("warning: 2019-01 failed: HTTP 500"), "\(result.stderrText)")
        #expect(result.stderrText.contains("error: archive: 1 month of 2019-01..2019-03 failed (2019-01)"), "\(result.stderrText)")
        #expect(try result.json()["failed"] == .array([.string("2019-01")]))
        #expect(try statuses() == ["2019-01": "failed", "2019-02": "complete", "2019-03": "complete"])
        // The rerun fetches only the failed month.
        let rerun = try archive(["2019-01", "2019-03"], server: server)
        #expect(rerun.status == 0, "\(rerun)")
        #expect(try store().count == 30)
        #expect(try statuses().values.allSatisfy { $0 == "complete" })
    }

    @Test func aRefusedKeyStopsAtOnce() throws {
        defer { sandbox.remove() }
        let server = try FakeNYTServer(documents: [], apiKey: "another-key")
        let result = try archive(["2019-01", "2019-06"], server: server)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText.contains("HTTP 401"), "\(result.stderrText)")
        #expect(server.requests.count == 1)
        #expect(!result.stderrText.contains(Self.key) && !result.stdoutText.contains(Self.key))
    }

    @Test func theDailyLimitStopsMidRangeAndTheSameCommandContinuesTomorrow() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 40, seed: 64, from: "2019-01-01", to: "2019-04-30")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        _ = try store()  // the folder
        let usage = sandbox.path(ClientFiles.apiUsage)
        try sandbox.write(#"{"requests_per_day": {"\#(CalendarDay.today)": 498}}"#, to: usage)
        let result = try archive(["2019-01", "2019-04"], server: server)
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderrText.contains(
                "error: daily limit: 500 API requests were sent today (UTC) and NYT allows 500; none is sent before tomorrow (UTC): "
                    + "2 months of 2019-01..2019-04 are left; the same command continues tomorrow (UTC)"), "\(result.stderrText)")
        #expect(result.stderrText.contains("warning: 500 API requests today"), "\(result.stderrText)")
        #expect(server.requests.count == 2, "request 501 is never sent")
        #expect(try statuses() == ["2019-01": "complete", "2019-02": "complete"])

        // Tomorrow: the day's count belongs to yesterday.
        try sandbox.write(#"{"requests_per_day": {"\#(CalendarDay.today.adding(days: -1))": 500}}"#, to: usage)
        let tomorrow = try archive(["2019-01", "2019-04"], server: server)
        #expect(tomorrow.status == 0, "\(tomorrow)")
        #expect(tomorrow.stderrText.contains("note: 2 months of 2019-01..2019-04 are complete already"), "\(tomorrow.stderrText)")
        #expect(server.requests.count == 4)
        #expect(try store().count == 40)
        try expectConsistentStore()
    }

    @Test func searchAndRefreshStopAtTheDailyLimitWithoutSendingAnything() throws {
        defer { sandbox.remove() }
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 5, seed: 69, from: "2019-01-01", to: "2019-01-31"), apiKey: Self.key)
        _ = try store()
        try sandbox.write(#"{"requests_per_day": {"\#(CalendarDay.today)": 500}}"#, to: sandbox.path(ClientFiles.apiUsage))
        let search = try sandbox.run(["--format", "jsonl", "search", "jury", "--save", "jury"], environment: environment(server))
        #expect(search.status == 1, "\(search)")
        #expect(search.stderrText.contains("error: daily limit: 500 API requests were sent today (UTC)"), "\(search.stderrText)")
        let refresh = try sandbox.run(["--format", "jsonl", "refresh"], environment: environment(server))
        #expect(refresh.status == 1, "\(refresh)")
        #expect(refresh.stderrText.contains("jury: daily limit: 500 API requests"), "\(refresh.stderrText)")
        #expect(server.requests.isEmpty)
    }

    @Test func ctrlCDuringAMonthStopsAndTheRerunCompletesIt() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 1_200, seed: 65, from: "2019-01-01", to: "2019-02-28")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        server.enqueue([.slow(seconds: 3)])
        let running = try sandbox.start(["--format", "jsonl", "archive", "2019-01", "2019-02"], environment: environment(server))
        let deadline = Date().addingTimeInterval(60)
        while server.requests.isEmpty, Date() < deadline { usleep(5_000) }
        usleep(200_000)  // the request is on its way; the server holds its answer
        running.signal(SIGINT)
        let result = try running.wait()
        #expect(result.status == 130, "\(result)")
        #expect(result.stderrText.contains("error: archive: interrupted with 2 months of 2019-01..2019-02 left"), "\(result.stderrText)")
        #expect(try statuses()["2019-01"] != "complete")
        let rerun = try archive(["2019-01", "2019-02"], server: server)
        #expect(rerun.status == 0, "\(rerun)")
        #expect(try store().count == 1_200)
        #expect(try statuses() == ["2019-01": "complete", "2019-02": "complete"])
        try expectConsistentStore()
    }

    @Test func aKillWhileAMonthIsStoredLosesNothingAndTheRerunCompletesIt() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 6_000, seed: 66, from: "2019-01-01", to: "2019-01-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        let records = sandbox.path(ClientFiles.archive)
        let running = try sandbox.start(["--format", "jsonl", "archive", "2019-01"], environment: environment(server))
        let deadline = Date().addingTimeInterval(60)
        var sawPartial = false
        while running.process.isRunning, Date() < deadline {
            if let bytes = sandbox.contents(records), String(decoding: bytes, as: UTF8.self).contains("\"partial\"") {
                sawPartial = true
                break
            }
            usleep(2_000)
        }
        running.signal(SIGKILL)
        _ = try running.wait()
        if sawPartial {
            #expect(try statuses()["2019-01"] == "partial")
            #expect(try store().count >= Archiver.batchSize)
        }
        try expectConsistentStore()
        let rerun = try archive(["2019-01"], server: server)
        #expect(rerun.status == 0, "\(rerun)")
        #expect(try store().count == 6_000)
        #expect(try statuses() == ["2019-01": "complete"])
        try expectConsistentStore()
    }

    @Test func theKeyAppearsInNoByteWritten() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 50, seed: 67, from: "2020-01-01", to: "2020-02-29")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        server.enqueue([.serverError, .malformed, .forbiddenHTML])
        let runs = [
            try archive(["2020-01", "2020-02"], server: server), try archive(["2020-01", "2020-03"], server: server, format: "table"),
            try sandbox.run(["--format", "json", "archives"]),
        ]
        let key = Array(Self.key.utf8)
        for run in runs {
            #expect(!run.stdout.containsSequence(key) && !run.stderr.containsSequence(key), "\(run)")
        }
        for (path, bytes) in Self.everyFile(under: sandbox.root) {
            #expect(!bytes.containsSequence(key), "\(path) holds the key")
        }
    }

    @Test(arguments: [
        (["2019-13"], "FROM '2019-13' is not a month (expected YYYY-MM, or now)"),
        (["1851-08"], "FROM 1851-08 is before the archive's first month, 1851-09"),
        (["2019-05", "2019-04"], "TO 2019-04 is before FROM 2019-05"),
        (["9999-01"], "FROM 9999-01 is after this month"),
        ([], "give the first month, YYYY-MM"),
    ])
    func badMonthsAreUsageErrors(arguments: [String], message: String) throws {
        defer { sandbox.remove() }
        let result = try sandbox.run(["archive"] + arguments, environment: ["NYT_API_KEY": Self.key, "NYT_API_BASE": "http://127.0.0.1:9"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
    }

    @Test func searchAllWithoutAQuerySaysArchiveIsCheaper() throws {
        defer { sandbox.remove() }
        let corpus = ArticleGenerator.corpus(count: 60, seed: 68, from: "2019-01-01", to: "2019-01-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        let result = try sandbox.run(
            ["--format", "jsonl", "search", "--all", "--from", "2019-01-01", "--to", "2019-01-31"], environment: environment(server))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("`archive` fetches the same articles whole in 1 request, one a month"), "\(result.stderrText)")
        let withQuery = try sandbox.run(
            ["--format", "jsonl", "search", "election", "--all", "--from", "2019-01-01", "--to", "2019-01-31"],
            environment: environment(server))
        #expect(!withQuery.stderrText.contains("`archive`"), "\(withQuery.stderrText)")
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the bytes.
    func containsSequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
