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

/// End-to-end tests of `search`, `searches` and `refresh`: the built `archivist` binary against the
/// project's fake NYT server over real HTTP on 127.0.0.1.
@Suite("archivist search against the fake NYT server")
struct SearchCommandTests {
    static let key = "k3y-SECRET-7f1e2d"
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// The environment of a run against `server`: no pacing, tiny backoff, a timeout with room for a busy machine.
    func environment(_ server: FakeNYTServer?, key: String = SearchCommandTests.key, base: String? = nil) -> [String: String] {
        CLI.fakeAPIEnvironment(key: key, base: base ?? server?.baseURL ?? "http://127.0.0.1:9")
    }

    @discardableResult
    func search(
        _ arguments: [String], server: FakeNYTServer?, key: String = SearchCommandTests.key, base: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        try sandbox.run(
            ["--format", "jsonl", "search"] + arguments, environment: environment(server, key: key, base: base),
            sourceLocation: sourceLocation)
    }

    func storedCount() throws -> Int {
        try DocumentStore(folder: sandbox.data, schema: .nyt).count
    }

    func expectConsistentStore(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problems = try DocumentStore(folder: sandbox.data, schema: .nyt).check()
        #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
    }

    /// The summary line a jsonl run prints first.
    func summary(_ result: CLIResult) throws -> [String: Int] {
        let first = try #require(result.stdoutLines.first, "no summary: \(result)")
        #expect(
            first.hasPrefix(#"{"fetched":"#) && first.contains(#","added":"#) && first.contains(#","updated":"#)
                && first.contains(#","unchanged":"#) && first.contains(#","pages":"#), "\(first)")
        guard case .object(let members) = try json(first) else { Issue.record("summary is not an object: \(first)"); return [:] }
        var values: [String: Int] = [:]
        for member in members {
            // The sequence range is checked on its own: it spans the changes the run committed.
            if member.key.hasSuffix("_seq") { continue }
            if case .number(let text) = member.value { values[member.key] = Int(text) }
        }
        #expect(Set(members.map(\.key)) == ["fetched", "added", "updated", "unchanged", "pages", "first_seq", "last_seq"])
        return values
    }

    // MARK: Paging

    @Test func searchFetchesPagesInOrderAndPrintsSummaryThenArticles() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 35, seed: 11, from: "2021-01-01", to: "2021-03-31"),
            apiKey: Self.key)
        let result = try search(["--pages", "2", "--sort", "newest", "--fields", "_id,pub_date"], server: server)
        #expect(result.status == 0, "\(result)")
        #expect(try summary(result) == ["fetched": 20, "added": 20, "updated": 0, "unchanged": 0, "pages": 2])
        let rows = try result.stdoutLines.dropFirst().map { try json($0) }
        #expect(rows.count == 20)
        let dates = rows.compactMap { $0["pub_date"]?.stringValue }.map { ISODate.instant(of: $0) ?? 0 }
        #expect(dates == dates.sorted(by: >), "newest first")
        #expect(server.requests.map { $0.query["page"] } == ["0", "1"])
        #expect(server.requests.allSatisfy { $0.query["sort"] == "newest" })
        #expect(try storedCount() == 20)

        // The same pages again change nothing.
        let again = try search(["--pages", "2", "--sort", "newest"], server: server)
        #expect(try summary(again) == ["fetched": 20, "added": 0, "updated": 0, "unchanged": 20, "pages": 2])
        try expectConsistentStore()
    }

    @Test func searchStopsAtTheLastPageOfHits() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 23, seed: 12, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        let result = try search(["--pages", "50"], server: server)
        #expect(result.status == 0, "\(result)")
        #expect(try summary(result)["fetched"] == 23)
        #expect(server.requests.count == 3, "pages 0, 1 and 2 only")
    }

    @Test func searchAllSplitsTheDateRangePastAThousandHits() throws {
        let corpus = ArticleGenerator.corpus(count: 2_345, seed: 13, from: "2019-01-01", to: "2020-12-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        let result = try search(["--all", "--from", "2019-01-01", "--to", "2020-12-31", "--fields", "_id"], server: server)
        #expect(result.status == 0, "\(result)")
        let counts = try summary(result)
        #expect(counts["fetched"] == 2_345)
        #expect(counts["added"] == 2_345)
        #expect(try storedCount() == 2_345)
        #expect(result.stdoutLines.count == 1 + 2_345)
        let requests = server.requests
        #expect(requests.allSatisfy { Int($0.query["page"] ?? "x").map { $0 <= 100 } == true })
        #expect(requests.contains { $0.query["begin_date"] != "20190101" }, "the range was split")
        #expect(requests.allSatisfy { $0.query["api-key"] == Self.key })
        #expect(result.stderrText.contains("more than the API's 1,000"), "\(result)")
        // Every request was counted in the data folder.
        let usage = try json(String(decoding: try #require(sandbox.contents(sandbox.path(ClientFiles.apiUsage))), as: UTF8.self))
        let today = CalendarDay.today.description
        #expect(usage["requests_per_day"]?[today] == .number(String(requests.count)))
        try expectConsistentStore()
    }

    @Test func searchSendsQueryFilterDatesAndSortAsTheAPIExpects() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 200, seed: 14, from: "2018-01-01", to: "2018-12-31"),
            apiKey: Self.key)
        let result = try search(
            [
                "climate", "talks", "--fq", #"news_desk:("Sports" "Foreign")"#, "--from", "2018-02-01",
                "--to", "2018-11-30", "--sort", "oldest",
            ], server: server)
        #expect(result.status == 0, "\(result)")
        let sent = try #require(server.requests.first).query
        #expect(sent["q"] == "climate talks")
        #expect(sent["fq"] == #"news_desk:("Sports" "Foreign")"#)
        #expect(sent["begin_date"] == "20180201")
        #expect(sent["end_date"] == "20181130")
        #expect(sent["sort"] == "oldest")
        #expect(sent["page"] == "0")
    }

    @Test func searchReadsTheMetadataEnvelopeAndNullDocs() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 15, seed: 15, from: "2025-05-01", to: "2025-05-31"),
            apiKey: Self.key, envelope: .metadata)
        let result = try search(["--pages", "2"], server: server)
        #expect(result.status == 0, "\(result)")
        #expect(try summary(result)["fetched"] == 15)
        server.enqueue([.docsNull])
        let empty = try search(["nothing"], server: server)
        #expect(empty.status == 0, "\(empty)")
        #expect(try summary(empty) == ["fetched": 0, "added": 0, "updated": 0, "unchanged": 0, "pages": 1])
    }

    // MARK: Errors and retries

    @Test func searchRetriesThroughRateLimitsServerErrorsAndDroppedConnections() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 15, seed: 16, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        server.enqueue([.rateLimited, .serverError, .truncated, .dropConnection])
        let result = try search(["--pages", "2"], server: server)
        #expect(result.status == 0, "\(result)")
        #expect(try summary(result)["fetched"] == 15)
        #expect(server.requests.count == 6, "4 failures, then pages 0 and 1")
        #expect(result.stderrText.contains("HTTP 429"), "\(result)")
        #expect(result.stderrText.contains("HTTP 500"), "\(result)")
        #expect(result.stderrLines.filter { $0.contains("retrying in") }.count == 4, "\(result)")
        try expectConsistentStore()
    }

    @Test func slowAnswerTimesOutAndIsRetried() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 5, seed: 27, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        server.enqueue([.slow(seconds: 4)])
        var env = environment(server)
        env["ARCHIVIST_TIMEOUT"] = "1"
        let result = try sandbox.run(["--format", "jsonl", "search"], environment: env)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("attempt 1 failed (timed out)"), "\(result)")
        #expect(try summary(result)["fetched"] == 5)
    }

    @Test func searchGivesUpAfterBoundedRetriesAndAnswersFromTheCache() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 5, seed: 17, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        server.enqueue(Array(repeating: .serverError, count: 10))
        let result = try search(["--pages", "1"], server: server)
        #expect(result.status == 0, "5xx after every retry counts as offline: \(result)")
        #expect(server.requests.count == 6, "1 attempt + 5 retries")
        #expect(result.stderrText.contains("HTTP 500"), "\(result)")
        #expect(result.stderrText.contains("answering from the cache"), "\(result)")
    }

    @Test func badKeyFailsAtOnceWithStatusAndFaultString() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 5, seed: 18, from: "2021-01-01", to: "2021-01-31"),
            apiKey: "the-right-key")
        let result = try search(["jury"], server: server, key: "wrong-key-123")
        #expect(result.status == 1, "\(result)")
        #expect(server.requests.count == 1, "401 is not retried")
        let line = try #require(result.stderrLines.first)
        #expect(line.hasPrefix("error: page 0: HTTP 401 from \(server.baseURL)/svc/search/v2/articlesearch.json?"), "\(line)")
        #expect(line.contains("api-key=REDACTED"))
        #expect(line.contains("Invalid ApiKey"))
        #expect(!result.stderrText.contains("wrong-key-123"))
        #expect(result.stdout.isEmpty)
        #expect(try storedCount() == 0)
    }

    @Test func htmlForbiddenPageIsReportedWithItsTitle() throws {
        let server = try FakeNYTServer(documents: [], apiKey: Self.key)
        server.enqueue([.forbiddenHTML])
        let result = try search(["jury"], server: server)
        #expect(result.status == 1, "\(result)")
        #expect(server.requests.count == 1, "403 is not retried")
        #expect(result.stderrText.contains("HTTP 403"), "\(result)")
        #expect(result.stderrText.contains("HTML page"), "\(result)")
    }

    @Test func aFilterTheAPIRefusesIsA400WithItsMessageAndNoRetry() throws {
        let server = try FakeNYTServer(documents: [], apiKey: Self.key)
        let result = try search(["--fq", "news_desk:[Sports TO Arts]"], server: server)
        #expect(result.status == 1, "\(result)")
        #expect(server.requests.count == 1)
        let line = try #require(result.stderrLines.first)
        #expect(line.hasPrefix("error: page 0: HTTP 400 from "), "\(line)")
        #expect(line.contains("fq=news_desk:%5BSports%20TO%20Arts%5D") || line.contains("fq=news_desk"), "\(line)")
        #expect(line.lowercased().contains("fq"), "the server's message names the filter: \(line)")
    }

    @Test func malformedPageStoresNothingFromItAndKeepsEarlierPages() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 40, seed: 19, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        server.enqueue([.slow(seconds: 0), .malformed])
        let result = try search(["--pages", "3", "--sort", "oldest"], server: server)
        #expect(result.status == 1, "\(result)")
        let line = try #require(result.stderrLines.first)
        #expect(line.hasPrefix("error: page 1: response from "), "\(line)")
        #expect(line.contains("invalid JSON at byte"), "\(line)")
        #expect(line.contains("the 10 articles from earlier pages are stored"), "\(line)")
        #expect(server.requests.count == 2, "a malformed body is not retried")
        #expect(try storedCount() == 10)
        try expectConsistentStore()
    }

    @Test func missingKeySaysHowToGetOneAndSendsNothing() throws {
        let server = try FakeNYTServer(documents: [], apiKey: Self.key)
        let result = try search(["jury"], server: server, key: "")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText.contains("NYT_API_KEY is not set"), "\(result)")
        #expect(result.stderrText.contains("developer.nytimes.com"), "\(result)")
        #expect(server.requests.isEmpty)
    }

    @Test(arguments: [
        (["--from", "2020-13-01"], "search: --from: '2020-13-01' is not a date (expected YYYY-MM-DD)"),
        (["--to", "20200101"], "search: --to: '20200101' is not a date (expected YYYY-MM-DD)"),
        (["--from", "2020-02-01", "--to", "2020-01-01"], "search: --to: 2020-01-01 is before --from 2020-02-01"),
        (["--sort", "best"], "search: --sort takes newest, oldest or relevance, not 'best'"),
        (["--pages", "0"], "search: --pages takes a number from 1 to 101, not '0'"),
        (["--pages", "2", "--all"], "search: give --pages or --all, not both"),
        (["--save", "a b"], "search: --save takes a name of letters, digits, '.', '_' and '-' (at most 64), not 'a b'"),
        (["--pace", "soon"], "search: --pace takes a number of seconds, not 'soon'"),
        (["--api-base", "ftp://example.com"], "search: --api-base: 'ftp://example.com' is not an http(s) URL"),
    ])
    func badArgumentsAreUsageErrorsBeforeAnyRequest(arguments: [String], message: String) throws {
        let server = try FakeNYTServer(documents: [], apiKey: Self.key)
        let result = try search(["jury"] + arguments, server: server)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines.first == "error: " + message, "\(result)")
        #expect(server.requests.isEmpty)
    }

    // MARK: Offline

    @Test func searchAnswersFromTheCacheWhenTheServerIsGone() throws {
        let corpus = ArticleGenerator.corpus(count: 60, seed: 20, from: "2021-01-01", to: "2021-12-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        let seeded = try search(["--all"], server: server)
        #expect(seeded.status == 0, "\(seeded)")
        let desks = #"news_desk:("Sports" "Foreign")"#
        let online = try search(["--fq", desks, "--all", "--fields", "_id"], server: server)
        #expect(online.status == 0, "\(online)")
        let base = server.baseURL
        server.stop()

        // With every article cached, a simple --fq answers offline what the API answered.
        let offline = try search(["--fq", desks, "--fields", "_id"], server: nil, base: base)
        #expect(offline.status == 0, "\(offline)")
        #expect(offline.stderrText.contains("answering from the cache"), "\(offline)")
        let onlineIDs = try Set(online.stdoutLines.dropFirst().compactMap { try json($0)["_id"]?.stringValue })
        #expect(!onlineIDs.isEmpty)
        #expect(try Set(offline.stdoutLines.dropFirst().compactMap { try json($0)["_id"]?.stringValue }) == onlineIDs)
        // An fq on text the cache does not hold is left out, with a note.
        let body = try search(["--fq", #"body:"climate""#, "--fields", "_id"], server: nil, base: base)
        #expect(body.status == 0, "\(body)")
        #expect(body.stderrText.contains(#"note: --fq 'body:"climate"' cannot be applied to the cache, so it was left out"#), "\(body)")
        #expect(body.stdoutLines.count == 1 + 60, "every cached article, after the summary")

        // A word that is in some headlines: the cache answers with its text search.
        let word = try #require(
            corpus.compactMap { $0["headline"]?["main"]?.stringValue }.first?
                .split(separator: " ").first(where: { $0.count > 4 && $0.allSatisfy(\.isLetter) }).map(String.init))
        let result = try search([word, "--from", "2021-01-01", "--to", "2021-12-31", "--fields", "_id"], server: nil, base: base)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("connection refused"), "\(result)")
        #expect(result.stderrText.contains("answering from the cache"), "\(result)")
        #expect(try summary(result) == ["fetched": 0, "added": 0, "updated": 0, "unchanged": 0, "pages": 0])
        let cached = try Set(result.stdoutLines.dropFirst().compactMap { try json($0)["_id"]?.stringValue })
        let local = try sandbox.run([
            "--format", "jsonl", "find", "\"\(word)\"", "and", "pub_date", ">=", "2021-01-01",
            "and", "pub_date", "<=", "2021-12-31", "--fields", "_id",
        ])
        let expected = try Set(local.stdoutLines.compactMap { try json($0)["_id"]?.stringValue })
        #expect(!cached.isEmpty)
        #expect(cached == expected)
    }

    @Test func searchAnswersFromTheCacheWhenNothingListens() throws {
        // Port 9 (discard) has no listener on the test machine: connection refused.
        var env = environment(nil, base: "http://127.0.0.1:9")
        env["ARCHIVIST_BACKOFF"] = "120"  // a retry would wait at least a minute
        let result = try sandbox.run(["--format", "jsonl", "search", "anything"], environment: env)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("cannot reach the server: connection refused; answering from the cache"), "\(result)")
        #expect(result.stderrText.contains("api-key=REDACTED"), "\(result)")
        // Never reached, so offline at once: no retry, no wait.
        #expect(!result.stderrText.contains("retrying"), "\(result)")
        #expect(result.seconds < 30, "took \(result.seconds) s")
    }

    // MARK: Saved searches and refresh

    @Test func refreshFetchesOnlyWhatIsNew() throws {
        let old = ArticleGenerator.corpus(count: 40, seed: 21, from: "2024-01-01", to: "2024-03-31")
        let server = try FakeNYTServer(documents: old, apiKey: Self.key)
        let first = try search(["--all", "--save", "quarter", "--from", "2024-01-01"], server: server)
        #expect(first.status == 0, "\(first)")
        #expect(try summary(first)["added"] == 40)

        let listed = try sandbox.run(["--format", "jsonl", "searches"])
        let row = try json(try #require(listed.stdoutLines.first))
        #expect(row["name"] == .string("quarter"))
        #expect(row["from"] == .string("2024-01-01"))
        #expect(row["fetched"] == .number("40"))
        let instants = old.compactMap { $0["pub_date"]?.stringValue }.compactMap { ISODate.instant(of: $0) }
        let newest = try #require(instants.max())
        let newestDay = CalendarDay(Date(timeIntervalSince1970: Double(newest) / 1000))
        #expect(row["newest_pub_date"]?.stringValue?.hasPrefix(newestDay.description) == true, "\(row)")

        // New articles appear in the last few days.
        let today = CalendarDay.today
        let fresh = ArticleGenerator.corpus(count: 7, seed: 22, from: today.adding(days: -3).description, to: today.description)
        server.add(fresh)
        let before = server.requests.count
        let refreshed = try sandbox.run(["--format", "jsonl", "refresh", "quarter"], environment: environment(server))
        #expect(refreshed.status == 0, "\(refreshed)")
        let report = try json(try #require(refreshed.stdoutLines.first))
        #expect(report["added"] == .number("7"), "\(report)")
        let overlap = newestDay.adding(days: -1)
        #expect(report["from"] == .string(overlap.description), "a day of overlap before the newest stored")
        #expect(report["to"] == .string(today.description))
        let sent = server.requests.dropFirst(before)
        #expect(!sent.isEmpty && sent.allSatisfy { $0.query["begin_date"] == overlap.compact })
        #expect(try storedCount() == 47)

        // Nothing new: one request.
        let quiet = try sandbox.run(["--format", "jsonl", "refresh"], environment: environment(server))
        #expect(quiet.status == 0, "\(quiet)")
        let quietReport = try json(try #require(quiet.stdoutLines.first))
        #expect(quietReport["added"] == .number("0"), "\(quietReport)")
        #expect(server.requests.count == before + sent.count + 1)
        try expectConsistentStore()
    }

    @Test func refreshOfAnUnknownSearchNamesIt() throws {
        let server = try FakeNYTServer(documents: [], apiKey: Self.key)
        let result = try sandbox.run(["refresh", "nope"], environment: environment(server))
        #expect(result.status == 1)
        #expect(result.stderrLines.first == "error: nope: no saved search has this name (see `searches`)", "\(result)")
    }

    @Test func searchesDropForgetsASavedSearch() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 3, seed: 23, from: "2024-01-01", to: "2024-01-31"),
            apiKey: Self.key)
        try search(["--save", "a"], server: server)
        try search(["--save", "b"], server: server)
        #expect(try sandbox.run(["--format", "jsonl", "searches"]).stdoutLines.count == 2)
        #expect(try sandbox.run(["searches", "--drop", "a"]).status == 0)
        let left = try sandbox.run(["--format", "jsonl", "searches"]).stdoutLines.map { try json($0)["name"] }
        #expect(left == [.string("b")])
    }

    @Test func nearTheDailyLimitASearchWarns() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 30, seed: 28, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        try FileManager.default.createDirectory(atPath: sandbox.data, withIntermediateDirectories: true)
        let today = CalendarDay.today.description
        try sandbox.write(#"{"requests_per_day": {"\#(today)": 448}}"#, to: sandbox.path(ClientFiles.apiUsage))
        let result = try search(["--pages", "3"], server: server)
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderrLines.filter { $0.hasPrefix("warning:") } == ["warning: 450 API requests today (UTC); NYT allows 500 a day"],
            "\(result)")
        let usage = try json(String(decoding: try #require(sandbox.contents(sandbox.path(ClientFiles.apiUsage))), as: UTF8.self))
        #expect(usage["requests_per_day"]?[today] == .number("451"))
    }

    @Test func anUnreadableRequestCounterStopsTheSearchAndIsKept() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 5, seed: 29, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        try FileManager.default.createDirectory(atPath: sandbox.data, withIntermediateDirectories: true)
        try sandbox.write("{not json", to: sandbox.path(ClientFiles.apiUsage))
        let result = try search(["jury"], server: server)
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderrLines.first?.hasPrefix("error: page 0: \(sandbox.data)/api-usage.json: invalid JSON at byte 1") == true,
            "\(result)")
        #expect(server.requests.isEmpty)
        #expect(sandbox.contents(sandbox.path(ClientFiles.apiUsage)) == Array("{not json".utf8))
    }

    // MARK: Pacing and Ctrl-C

    @Test func requestsAreSpacedByThePaceAcrossProcesses() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 30, seed: 24, from: "2021-01-01", to: "2021-01-31"),
            apiKey: Self.key)
        var env = environment(server)
        env["ARCHIVIST_PACE"] = "1"
        let first = try sandbox.run(["--format", "jsonl", "search", "--pages", "2"], environment: env)
        let second = try sandbox.run(["--format", "jsonl", "search", "--pages", "1"], environment: env)
        #expect(first.status == 0 && second.status == 0)
        // Three requests a second apart: the two runs together span at least two seconds of pacing.
        #expect(first.seconds + second.seconds >= 1.9, "\(first.seconds) + \(second.seconds)")
        #expect(server.requests.count == 3)
    }

    @Test func ctrlCStopsAfterTheCurrentPageKeepingWhatWasStored() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 300, seed: 25, from: "2021-01-01", to: "2021-12-31"),
            apiKey: Self.key)
        var env = environment(server)
        env["ARCHIVIST_PACE"] = "0.5"
        let child = try sandbox.start(["--format", "jsonl", "search", "--all", "--fields", "_id"], environment: env)
        var waited = 0.0
        while server.requests.count < 3 && waited < 30 {
            usleep(20_000)
            waited += 0.02
        }
        child.signal(SIGINT)
        let result = try child.wait(timeout: 30)
        #expect(result.status == 130, "\(result)")
        #expect(result.stderrText.contains("interrupted"), "\(result)")
        let counts = try summary(result)
        #expect((counts["pages"] ?? 0) >= 3 && (counts["pages"] ?? 0) < 30, "\(counts)")
        #expect(try storedCount() == counts["fetched"])
        #expect(result.stdoutLines.count == 1 + (counts["fetched"] ?? -1))
        try expectConsistentStore()
    }

    // MARK: The key

    @Test func theKeyNeverAppearsInAnyByteWritten() throws {
        let corpus = ArticleGenerator.corpus(count: 25, seed: 26, from: "2022-01-01", to: "2022-12-31")
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        var results: [CLIResult] = []
        results.append(try search(["--all", "--save", "everything"], server: server))
        server.enqueue([.rateLimited, .forbiddenHTML])
        results.append(try search(["--pages", "2"], server: server))
        results.append(try sandbox.run(["refresh"], environment: environment(server)))
        results.append(try sandbox.run(["searches"], environment: environment(server)))
        results.append(try sandbox.run(["--format", "json", "searches"], environment: environment(server)))
        let bad = try FakeNYTServer(documents: [], apiKey: "another-key")
        results.append(try search(["jury"], server: bad))
        server.stop()
        results.append(try search(["jury"], server: server))
        results.append(try sandbox.run(["stats"], environment: environment(server)))
        #expect(server.requests.contains { $0.query["api-key"] == Self.key }, "the key was really sent")

        let key = Array(Self.key.utf8)
        func holdsKey(_ bytes: [UInt8]) -> Bool {
            guard bytes.count >= key.count else { return false }
            return (0...(bytes.count - key.count)).contains { bytes[$0..<($0 + key.count)].elementsEqual(key) }
        }
        for result in results {
            #expect(!holdsKey(result.stdout), "stdout holds the key: \(result)")
            #expect(!holdsKey(result.stderr), "stderr holds the key: \(result)")
        }
        for relative in tree(sandbox.data) where !relative.hasSuffix("/") {
            let bytes = try #require(sandbox.contents(sandbox.path(relative)))
            #expect(!holdsKey(bytes), "\(relative) holds the key")
        }
    }
}
