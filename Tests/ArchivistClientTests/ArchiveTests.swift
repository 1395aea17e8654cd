import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistClient

/// A transport that answers Archive API requests from bodies by month (`/svc/archive/v1/Y/M.json`);
/// `intercept` may answer a call instead (by month and 1-based call number). A month without a
/// body answers 404.
final class ArchiveTransport: HTTPTransport {
    private let bodies: [ArchiveMonth: [UInt8]]
    private let intercept: @Sendable (_ month: ArchiveMonth?, _ call: Int) -> ScriptedTransport.Step?
    private let asked = Mutex<[ArchiveMonth?]>([])

    init(
        bodies: [ArchiveMonth: [UInt8]],
        intercept: @escaping @Sendable (_ month: ArchiveMonth?, _ call: Int) -> ScriptedTransport.Step? = { _, _ in nil }
    ) {
        self.bodies = bodies
        self.intercept = intercept
    }

    func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        let parts = url.path.split(separator: "/")
        var month: ArchiveMonth?
        if parts.count == 5, let year = Int(parts[3]), parts[4].hasSuffix(".json"), let number = Int(parts[4].dropLast(5)) {
            month = ArchiveMonth(year: year, month: number)
        }
        let call = asked.withLock { asked in
            asked.append(month)
            return asked.count
        }
        if let step = intercept(month, call) {
            switch step {
            case .respond(let response): return response
            case .fail(let failure): throw failure
            }
        }
        guard let month, let body = bodies[month] else {
            return HTTPResponse(status: 404, contentType: "application/json", body: Array(#"{"fault":{"faultstring":"no"}}"#.utf8))
        }
        return HTTPResponse(status: 200, contentType: "application/json", body: body)
    }

    /// The months asked for, in order (nil for a path that is not a month).
    var months: [ArchiveMonth?] { asked.withLock { $0 } }
}

/// An Archive API body holding `documents`: `{"copyright":...,"response":{"docs":[...],"meta":{"hits":N}}}`.
func archiveBody(_ documents: [JSONValue], hits: Int? = nil) -> [UInt8] {
    var body = Array(#"{"copyright":"Copyright (c) 2020 The New York Times Company. All Rights Reserved.","response":{"docs":["#.utf8)
    body.append(contentsOf: documents.map { JSONWriter.compactBytes($0) }.joined(separator: [UInt8(ascii: ",")]))
    body.append(contentsOf: #"],"meta":{"hits":\#(hits ?? documents.count)}}}"#.utf8)
    return body
}

@Suite struct ArchiveMonthTests {
    @Test(
        arguments: [
            ("2019-01", 2019, 1), ("1851-09", 1851, 9), ("2025-12", 2025, 12), ("0999-01", nil, nil), ("2019-13", nil, nil),
            ("2019-00", nil, nil), ("2019-1", nil, nil), ("201901", nil, nil), ("2019/01", nil, nil), ("２019-01", nil, nil),
            ("", nil, nil), ("2019-01-01", nil, nil), ("-019-01", nil, nil),
        ] as [(String, Int?, Int?)])
    func monthsAreReadAsYYYYMMOnly(text: String, year: Int?, month: Int?) {
        let parsed = ArchiveMonth(text)
        #expect(parsed?.year == year)
        #expect(parsed?.month == month)
        if let parsed { #expect(parsed.description == text) }
    }

    @Test func theURLHasNoLeadingZeroAndShowsTheKeyOnlyWhenAsked() throws {
        let month = try #require(ArchiveMonth("2019-01"))
        #expect(month.path == "/svc/archive/v1/2019/1.json")
        #expect(
            month.url(base: "https://api.nytimes.com/", apiKey: "k+y")?.absoluteString
                == "https://api.nytimes.com/svc/archive/v1/2019/1.json?api-key=k%2By")
        #expect(month.redactedURL(base: "http://127.0.0.1:9") == "http://127.0.0.1:9/svc/archive/v1/2019/1.json?api-key=REDACTED")
        #expect(month.url(base: "ftp://x", apiKey: "k") == nil)
    }

    @Test func monthArithmeticCrossesYears() throws {
        let december = try #require(ArchiveMonth("1999-12"))
        #expect(december.adding(months: 1).description == "2000-01")
        #expect(december.adding(months: -12).description == "1998-12")
        #expect(ArchiveMonth(ordinal: december.ordinal) == december)
        #expect(ArchiveMonth.first.description == "1851-09")
    }
}

@Suite struct ArchiveResponseTests {
    static let folder = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/nyt-samples").path

    static func sample(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }

    @Test func theRealFebruary1963MonthDecodesEveryDocumentLosslessly() throws {
        let body = try Self.sample("14_archive_1963_02_strike_era_3012docs_reserialized.json")
        let response = try ArchiveResponse(body: body, source: "sample 14")
        #expect(response.hits == 3012)
        #expect(response.documentCount == 3012)
        guard case .array(let expected)? = try JSONParser.parse(body)["response"]?["docs"] else {
            Issue.record("sample 14 has no docs array")
            return
        }
        let decoded = response.documents(0..<response.documentCount).compactMap { try? $0.get() }
        #expect(decoded.count == 3012)
        #expect(decoded == expected, "every document as a parse of the whole body gives it")
        #expect(decoded.allSatisfy { $0["news_desk"] == .string("None") || $0["news_desk"] == .string("") })
    }

    @Test func theRealStrikeMonthIsCompleteAndEmpty() throws {
        let response = try ArchiveResponse(
            body: try Self.sample("10_archive_1978_09_strike_hits0_verbatim_from_issue.json"), source: "sample 10")
        #expect(response.hits == 0)
        #expect(response.documentCount == 0)
    }

    @Test func aCutOffBodyIsInvalidJSONNamingItsSource() throws {
        var generator = ArticleGenerator(seed: 3)
        let body = archiveBody(generator.documents(5))
        for length in [1, body.count / 3, body.count / 2, body.count - 1] {
            #expect {
                try ArchiveResponse(body: Array(body[..<length]), source: "response from X")
            } throws: { error in
                guard case ClientError.invalidJSON(let source, _) = error else { return false }
                return source == "response from X"
            }
        }
    }

    @Test func aFaultBodyIsRefusedWithTheAPIsMessage() throws {
        let body = Array(#"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#.utf8)
        #expect {
            try ArchiveResponse(body: body, source: "x")
        } throws: { error in
            (error as? ClientError)?.errorDescription?.contains("Invalid ApiKey") == true
        }
    }

    @Test func documentsThatCannotBeStoredAreErrorsNamingTheirPlace() throws {
        let body = Array(#"{"response":{"docs":[{"_id":"a"},7,{"headline":{}},{"_id":""}],"meta":{"hits":4}}}"#.utf8)
        let results = try ArchiveResponse(body: body, source: "x").documents(0..<4)
        #expect((try? results[0].get())?["_id"] == .string("a"))
        #expect(results[1].failureMessage?.hasPrefix("response.docs[1]: expected a document") == true)
        #expect(results[2] == .failure(.missingID(path: "response.docs[2]")))
        #expect(results[3] == .failure(.missingID(path: "response.docs[3]")))
    }

    @Test func batchesEndAtTheirDocumentCountOrBeforeTheirBytesRunOver() throws {
        // Documents of 11, 11, 37, 11 and 11 bytes.
        let docs = [#"{"_id":"a"}"#, #"{"_id":"b"}"#, #"{"_id":"c","x":"0123456789abcdefghi"}"#, #"{"_id":"d"}"#, #"{"_id":"e"}"#]
        let body = Array((#"{"response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":5}}}"#).utf8)
        let response = try ArchiveResponse(body: body, source: "x")
        #expect(docs.map(\.utf8.count) == [11, 11, 37, 11, 11])
        #expect(response.batchEnd(from: 0, documents: 2, bytes: 1_000) == 2)  // the count
        #expect(response.batchEnd(from: 0, documents: 10, bytes: 1_000) == 5)  // the end of the month
        #expect(response.batchEnd(from: 0, documents: 10, bytes: 30) == 2)  // the bytes: c would pass 30
        #expect(response.batchEnd(from: 2, documents: 10, bytes: 30) == 3)  // one document at least
        #expect(response.batchEnd(from: 3, documents: 10, bytes: 22) == 5)  // exactly the bytes
        #expect(response.batchEnd(from: 5, documents: 10, bytes: 30) == 5)
    }
}

extension Result where Failure == ClientError {
    /// The error's message, for a failure.
    var failureMessage: String? {
        if case .failure(let error) = self { return error.errorDescription }
        return nil
    }
}

@Suite struct ArchiverTests {
    let folder: ScratchFolder

    init() throws {
        folder = try ScratchFolder()
    }

    static let january = ArchiveMonth("2019-01")!
    static let february = ArchiveMonth("2019-02")!
    static let march = ArchiveMonth("2019-03")!

    /// Months of 2019 with `count` documents each, distinct by seed.
    static func bodies(_ counts: [ArchiveMonth: Int]) -> [ArchiveMonth: [UInt8]] {
        var result: [ArchiveMonth: [UInt8]] = [:]
        for (month, count) in counts {
            let day = "\(month)-01"
            result[month] = archiveBody(ArticleGenerator.corpus(count: count, seed: UInt64(100 + month.ordinal), from: day, to: day))
        }
        return result
    }

    func archiver(
        _ transport: any HTTPTransport, maximumRetries: Int = 2, ledger: (any RequestLedger)? = nil,
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) throws -> Archiver {
        let store = try folder.store()
        let configuration = NYTClient.Configuration(
            baseURL: "https://api.example.test", apiKey: "archive-K3Y", pace: 0, backoff: 0.001, maximumRetries: maximumRetries, timeout: 5)
        let client = NYTClient(
            configuration: configuration, transport: transport, ledger: ledger ?? StoreRequestLedger(store: store), isCancelled: isCancelled
        )
        return Archiver(client: client, store: store, isCancelled: isCancelled)
    }

    func records() throws -> [String: ArchiveRecord] {
        Dictionary(uniqueKeysWithValues: try ArchiveRecords(store: try folder.store()).all().map { ($0.month.description, $0) })
    }

    func expectConsistentStore(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problems = try folder.store().check()
        #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
    }

    @Test func everyDocumentOfTheRealMonthIsStoredEqualToItsSource() async throws {
        defer { folder.remove() }
        let body = try ArchiveResponseTests.sample("14_archive_1963_02_strike_era_3012docs_reserialized.json")
        let month = try #require(ArchiveMonth("1963-02"))
        let (summary, error) = try await archiver(ArchiveTransport(bodies: [month: body])).run([month])
        #expect(error == nil)
        #expect(summary.fetched == 1)
        #expect(summary.added == 3012)
        guard case .array(let expected)? = try JSONParser.parse(body)["response"]?["docs"] else { return }
        let store = try folder.store()
        #expect(try store.count == 3012)
        for document in expected {
            let id = try #require(document["_id"]?.stringValue)
            #expect(try store.document(withID: id) == document, "\(id)")
        }
        let record = try #require(try records()["1963-02"])
        #expect(record.status == .complete)
        #expect((record.hits, record.received, record.stored, record.added) == (3012, 3012, 3012, 3012))
        try expectConsistentStore()
    }

    @Test func monthsAreFetchedOldestFirstAndRunningAgainChangesNothing() async throws {
        defer { folder.remove() }
        let bodies = Self.bodies([Self.january: 1_500, Self.february: 20, Self.march: 0])
        let transport = ArchiveTransport(bodies: bodies)
        let (first, error) = try await archiver(transport).run([Self.january, Self.february, Self.march])
        #expect(error == nil)
        #expect(transport.months == [Self.january, Self.february, Self.march])
        #expect((first.fetched, first.added, first.documents) == (3, 1_520, 1_520))
        let (second, _) = try await archiver(transport).run([Self.january, Self.february, Self.march])
        #expect((second.added, second.updated, second.unchanged) == (0, 0, 1_520))
        #expect(try records().mapValues(\.status) == ["2019-01": .complete, "2019-02": .complete, "2019-03": .complete])
        #expect(try folder.store().count == 1_520)
        try expectConsistentStore()
    }

    @Test func aCutOffBodyIsRetriedAndNothingOfItIsStored() async throws {
        defer { folder.remove() }
        let bodies = Self.bodies([Self.january: 30])
        let full = try #require(bodies[Self.january])
        let transport = ArchiveTransport(bodies: bodies) { _, call in
            call == 1 ? .respond(HTTPResponse(status: 200, contentType: "application/json", body: Array(full.prefix(full.count / 2)))) : nil
        }
        let events = Mutex<[ArchiveEvent]>([])
        let (summary, error) = try await archiver(transport).run([Self.january]) { event in events.withLock { $0.append(event) } }
        #expect(error == nil)
        #expect(transport.months.count == 2)
        #expect(summary.added == 30)
        let retries = events.withLock { $0 }.filter { if case .client(.retrying) = $0 { true } else { false } }
        #expect(retries.count == 1)
        try expectConsistentStore()
    }

    @Test func aMonthThatKeepsFailingIsRecordedFailedAndTheRunGoesOn() async throws {
        defer { folder.remove() }
        let bodies = Self.bodies([Self.january: 5, Self.february: 7])
        let transport = ArchiveTransport(bodies: bodies) { month, _ in
            month == Self.january
                ? .respond(
                    HTTPResponse(status: 500, contentType: "application/json", body: Array(#"{"fault":{"faultstring":"boom"}}"#.utf8)))
                : nil
        }
        let (summary, error) = try await archiver(transport, maximumRetries: 2).run([Self.january, Self.february])
        #expect(error == nil)
        #expect(summary.failed == [Self.january])
        #expect(summary.fetched == 1)
        #expect(transport.months == [Self.january, Self.january, Self.january, Self.february])
        let recorded = try records()
        #expect(recorded["2019-01"]?.status == .failed)
        #expect(recorded["2019-01"]?.error?.contains("HTTP 500") == true)
        #expect(recorded["2019-02"]?.status == .complete)
        #expect(try folder.store().count == 7)
    }

    @Test(arguments: [401, 403])
    func aRefusedKeyStopsTheRunAtOnce(status: Int) async throws {
        defer { folder.remove() }
        let transport = ArchiveTransport(bodies: Self.bodies([Self.february: 3])) { _, _ in
            .respond(
                HTTPResponse(
                    status: status, contentType: "application/json", body: Array(#"{"fault":{"faultstring":"Invalid ApiKey"}}"#.utf8)))
        }
        let (summary, error) = try await archiver(transport).run([Self.january, Self.february])
        guard case .http(let got, _, _, _)? = error else {
            Issue.record("expected an HTTP error, got \(String(describing: error))")
            return
        }
        #expect(got == status)
        #expect(summary.left == 2)
        #expect(transport.months.count == 1)
        #expect(try records().isEmpty)
    }

    @Test func theDailyLimitStopsBeforeTheRequestPastIt() async throws {
        defer { folder.remove() }
        let store = try folder.store()
        let today = CalendarDay.today.description
        try writeFile(store.sideFilePath(named: ClientFiles.apiUsage), #"{"requests_per_day": {"\#(today)": 498}}"#)
        let transport = ArchiveTransport(bodies: Self.bodies([Self.january: 2, Self.february: 2, Self.march: 2]))
        let (summary, error) = try await archiver(transport).run([Self.january, Self.february, Self.march])
        #expect(error == .dailyLimitReached(requestsToday: 500, limit: 500))
        #expect(transport.months == [Self.january, Self.february])
        #expect(summary.fetched == 2)
        #expect(summary.left == 1)
        #expect(try StoreRequestLedger(store: store).requestsPerDay().last?.requests == 500)
        // Tomorrow (the day's count moved back a day): the same months go on where they stopped.
        try writeFile(
            store.sideFilePath(named: ClientFiles.apiUsage), #"{"requests_per_day": {"\#(CalendarDay.today.adding(days: -1))": 500}}"#)
        let plan = Archiver.plan(from: Self.january, to: Self.march, refetch: false, recorded: try records().values.map { $0 })
        #expect(plan.months == [Self.march])
        let (rest, restError) = try await archiver(transport).run(plan.months)
        #expect(restError == nil)
        #expect(rest.fetched == 1)
        #expect(try folder.store().count == 6)
    }

    @Test func ctrlCBetweenBatchesLeavesTheMonthPartialWithItsBatchesStored() async throws {
        defer { folder.remove() }
        let stop = Atomic<Bool>(false)
        let transport = ArchiveTransport(bodies: Self.bodies([Self.january: 2_500, Self.february: 3]))
        let archiver = try archiver(transport, isCancelled: { stop.load(ordering: .relaxed) })
        let (summary, error) = await archiver.run([Self.january, Self.february]) { event in
            if case .storing(let stored, _) = event, stored >= Archiver.batchSize { stop.store(true, ordering: .relaxed) }
        }
        #expect(error == .cancelled)
        #expect(summary.left == 2)
        let record = try #require(try records()["2019-01"])
        #expect(record.status == .partial)
        #expect(record.stored == Archiver.batchSize)
        #expect(try folder.store().count == Archiver.batchSize)
        #expect(transport.months == [Self.january])
        // The next run fetches the month whole again: the stored batch is unchanged, the rest added.
        let plan = Archiver.plan(from: Self.january, to: Self.february, refetch: false, recorded: try records().values.map { $0 })
        #expect(plan.months == [Self.january, Self.february])
        let (rest, _) = try await self.archiver(transport).run(plan.months)
        #expect((rest.added, rest.unchanged) == (2_500 - Archiver.batchSize + 3, Archiver.batchSize))
        try expectConsistentStore()
    }

    @Test func hitsThatDifferFromTheDocumentsAreReportedAndAllAreStored() async throws {
        defer { folder.remove() }
        let documents = ArticleGenerator.corpus(count: 4, seed: 9, from: "2019-01-02", to: "2019-01-30")
        let body = archiveBody(documents + [.object([JSONMember(key: "headline", value: .string("no id"))])], hits: 9)
        let events = Mutex<[ArchiveEvent]>([])
        let (summary, error) = try await archiver(ArchiveTransport(bodies: [Self.january: body])).run([Self.january]) { event in
            events.withLock { $0.append(event) }
        }
        #expect(error == nil)
        #expect(summary.added == 4)
        let seen = events.withLock { $0 }
        #expect(seen.contains(.hitsDiffer(Self.january, hits: 9, received: 5)))
        #expect(seen.contains { if case .rejected(_, 1, let first) = $0 { first.contains("response.docs[4]") } else { false } })
        let record = try #require(try records()["2019-01"])
        #expect((record.status, record.hits, record.received, record.stored, record.rejected) == (.complete, 9, 5, 4, 1))
    }

    @Test func thePlanSkipsCompleteMonthsButNotTheTwoThatStillGrow() throws {
        defer { folder.remove() }
        let current = try #require(ArchiveMonth("2026-12"))
        let at = Date()
        let recorded =
            ["2026-09", "2026-10", "2026-11", "2026-12"].compactMap(ArchiveMonth.init).map {
                ArchiveRecord(month: $0, status: .complete, hits: 1, at: at)
            } + [
                ArchiveRecord(month: ArchiveMonth("2026-08")!, status: .partial, at: at),
                ArchiveRecord(month: ArchiveMonth("2026-07")!, status: .failed, at: at),
            ]
        let first = try #require(ArchiveMonth("2026-06"))
        let plan = Archiver.plan(from: first, to: current, refetch: false, recorded: recorded, current: current)
        #expect(plan.months.map(\.description) == ["2026-06", "2026-07", "2026-08", "2026-11", "2026-12"])
        #expect(plan.skipped == 2)
        let all = Archiver.plan(from: first, to: current, refetch: true, recorded: recorded, current: current)
        #expect(all.months.count == 7)
        #expect(all.skipped == 0)
    }
}

@Suite struct ArchiveRecordsTests {
    @Test func recordsRoundTripAndAFailureDoesNotReplaceACompleteMonth() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let records = ArchiveRecords(store: try folder.store())
        let month = try #require(ArchiveMonth("1978-09"))
        var complete = ArchiveRecord(month: month, status: .complete, hits: 0, at: Date(timeIntervalSince1970: 1_700_000_000))
        complete.received = 0
        try records.save(complete)
        try records.save(ArchiveRecord(month: month, status: .failed, at: Date(), error: "HTTP 500"))
        #expect(try records.all() == [complete])
        var other = ArchiveRecord(
            month: ArchiveMonth("1851-09")!, status: .partial, hits: 12, at: Date(timeIntervalSince1970: 1_600_000_000.5))
        (other.received, other.stored, other.added, other.updated, other.unchanged, other.rejected) = (12, 5, 3, 1, 1, 0)
        try records.save(other)
        #expect(try records.all() == [other, complete], "oldest first")
        let text = String(decoding: try #require(fileBytes(try folder.store().sideFilePath(named: ClientFiles.archive))), as: UTF8.self)
        #expect(text.contains(#""1978-09""#) && text.contains(#""status": "complete""#), "\(text)")
    }

    @Test(arguments: [
        "not json", "[]", #"{"months": []}"#, #"{"months": {"2019-13": {"status": "complete", "at": "2026-01-01T00:00:00.000Z"}}}"#,
        #"{"months": {"2019-01": {"status": "done", "at": "2026-01-01T00:00:00.000Z"}}}"#,
        #"{"months": {"2019-01": {"status": "complete", "at": "yesterday"}}}"#,
        #"{"months": {"2019-01": {"status": "complete", "at": "2026-01-01T00:00:00.000Z", "stored": -1}}}"#,
    ])
    func anUnreadableFileIsAnErrorNamingItAndIsNotReplaced(contents text: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let path = store.sideFilePath(named: ClientFiles.archive)
        try writeFile(path, text)
        let records = ArchiveRecords(store: store)
        #expect { try records.all() } throws: { error in (error as? ClientError)?.errorDescription?.hasPrefix(path) == true }
        #expect { try records.save(ArchiveRecord(month: ArchiveMonth("2019-01")!, status: .complete, at: Date())) } throws: { _ in true }
        #expect(fileBytes(path) == Array(text.utf8))
    }
}

@Suite struct DailyLimitTests {
    @Test func theLedgerRefusesTheRequestPastTheLimitAndRecordsNothing() throws {
        let ledger = MemoryRequestLedger()
        let t0 = Date(timeIntervalSince1970: 1_764_460_800)  // 2025-11-30 00:00 UTC
        for number in 1...3 {
            #expect(
                try ledger.reserve(at: t0.addingTimeInterval(Double(number)), pace: 0, dailyLimit: 3) == .granted(requestsToday: number))
        }
        #expect(try ledger.reserve(at: t0.addingTimeInterval(10), pace: 0, dailyLimit: 3) == .limitReached(requestsToday: 3))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(11), pace: 0, dailyLimit: 3) == .limitReached(requestsToday: 3))
        #expect(
            try ledger.reserve(at: t0.addingTimeInterval(86_400), pace: 0, dailyLimit: 3) == .granted(requestsToday: 1), "the next UTC day")
    }

    @Test func aSearchAtTheLimitSendsNothingAndSaysWhen() async throws {
        let transport = ScriptedTransport([], fallback: okStep())
        let ledger = MemoryRequestLedger()
        for _ in 0..<500 { _ = try ledger.reserve(at: Date(), pace: 0, dailyLimit: 500) }
        let client = NYTClientTests.client(transport, ledger: ledger)
        await #expect(throws: ClientError.dailyLimitReached(requestsToday: 500, limit: 500)) {
            _ = try await client.fetch(NYTClientTests.request)
        }
        #expect(transport.calls == 0)
        let message = ClientError.dailyLimitReached(requestsToday: 500, limit: 500).errorDescription ?? ""
        #expect(message.hasPrefix("daily limit: 500 API requests were sent today (UTC)"), "\(message)")
    }
}
