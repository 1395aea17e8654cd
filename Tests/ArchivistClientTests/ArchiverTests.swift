import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistClient

@Suite struct ArchiverTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
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
        let body = try NYTSamples.bytes("14_archive_1963_02_strike_era_3012docs_reserialized.json")
        let month = try #require(ArchiveMonth("1963-02"))
        let (summary, error) = try await archiver(ArchiveTransport(bodies: [month: body])).run([month])
        #expect(error == nil)
        #expect(summary.fetched == 1)
        #expect(summary.added == 3012)
        // The body's documents, or a failure: never a pass that compared nothing.
        let expected = try responseDocs(body)
        #expect(expected.count == 3012)
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
