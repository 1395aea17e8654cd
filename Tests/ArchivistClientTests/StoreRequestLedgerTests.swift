import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct StoreRequestLedgerTests {
    static let start = utc(2026, 11, 29, 22, 10)

    /// The ledger's counts as `YYYY-MM-DD=N` strings.
    static func counts(_ ledger: StoreRequestLedger) throws -> [String] {
        try ledger.requestsPerDay().map { "\($0.day)=\($0.requests)" }
    }

    @Test func countsRequestsPerUTCDay() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let ledger = StoreRequestLedger(store: try folder.store())
        #expect(try StoreRequestLedgerTests.counts(ledger) == [])
        let t0 = StoreRequestLedgerTests.start
        #expect(try ledger.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(12), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(100), pace: 12, dailyLimit: 500) == .granted(requestsToday: 3))
        // 2026-11-30T00:00:01Z is a new UTC day.
        #expect(try ledger.reserve(at: utc(2026, 11, 30, 0, 0, 1), pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: utc(2026, 11, 30, 9), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
        #expect(try StoreRequestLedgerTests.counts(ledger) == ["2026-11-29=3", "2026-11-30=2"])
    }

    @Test func asksToWaitWithinThePaceAndChangesNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let ledger = StoreRequestLedger(store: store)
        let path = store.sideFilePath(named: ClientFiles.apiUsage)
        let t0 = StoreRequestLedgerTests.start
        #expect(try ledger.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        let before = fileBytes(path)
        #expect(try ledger.reserve(at: t0.addingTimeInterval(5), pace: 12, dailyLimit: 500) == .wait(seconds: 7))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(11.5), pace: 12, dailyLimit: 500) == .wait(seconds: 0.5))
        #expect(fileBytes(path) == before)
        #expect(try ledger.reserve(at: t0.addingTimeInterval(12), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
        #expect(try StoreRequestLedgerTests.counts(ledger) == ["2026-11-29=2"])
    }

    @Test func ledgersOfTwoStoresOnOneFolderShareThePaceAndTheCounts() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = StoreRequestLedger(store: try folder.store())
        let second = StoreRequestLedger(store: try folder.store())
        let t0 = StoreRequestLedgerTests.start
        #expect(try first.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try second.reserve(at: t0.addingTimeInterval(1), pace: 12, dailyLimit: 500) == .wait(seconds: 11))
        #expect(try second.reserve(at: t0.addingTimeInterval(12), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
        #expect(try first.reserve(at: t0.addingTimeInterval(13), pace: 12, dailyLimit: 500) == .wait(seconds: 11))
        #expect(try StoreRequestLedgerTests.counts(first) == ["2026-11-29=2"])
    }

    @Test func clockSetBackDoesNotBlockTheNextRequest() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let ledger = StoreRequestLedger(store: try folder.store())
        let t0 = StoreRequestLedgerTests.start
        #expect(try ledger.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(-3600), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
    }

    @Test func fileIsPrettyJSONWithLastRequestAndCountsPerDay() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let ledger = StoreRequestLedger(store: store)
        let t0 = StoreRequestLedgerTests.start
        _ = try ledger.reserve(at: t0, pace: 1, dailyLimit: 500)
        _ = try ledger.reserve(at: t0.addingTimeInterval(2.25), pace: 1, dailyLimit: 500)
        let path = store.sideFilePath(named: ClientFiles.apiUsage)
        #expect(path == folder.data + "/api-usage.json")
        let bytes = try #require(fileBytes(path))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(
            text == """
                {
                  "last_request_at": "2026-11-29T22:10:02.250Z",
                  "requests_per_day": {
                    "2026-11-29": 2
                  }
                }

                """)
        let value = try JSONParser.parse(bytes)
        #expect(JSONWriter.prettyBytes(value) == bytes)
        #expect(try store.sideFile(named: ClientFiles.apiUsage) == bytes)
    }

    @Test func keepsTheLast31DaysOnly() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let ledger = StoreRequestLedger(store: try folder.store())
        let first = try #require(CalendarDay("2026-01-01"))
        _ = try ledger.reserve(at: first.start, pace: 0, dailyLimit: 500)
        _ = try ledger.reserve(at: first.adding(days: 30).start, pace: 0, dailyLimit: 500)
        #expect(try StoreRequestLedgerTests.counts(ledger) == ["2026-01-01=1", "2026-01-31=1"])
        _ = try ledger.reserve(at: first.adding(days: 31).start, pace: 0, dailyLimit: 500)
        #expect(try StoreRequestLedgerTests.counts(ledger) == ["2026-01-31=1", "2026-02-01=1"])
    }

    @Test func existingFileWrittenByHandIsReadAndKept() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let path = store.sideFilePath(named: ClientFiles.apiUsage)
        try writeFile(path, #"{"requests_per_day": {"2026-11-29": 448, "20261128": 3}, "last_request_at": null}"#)
        let ledger = StoreRequestLedger(store: store)
        #expect(try ledger.reserve(at: StoreRequestLedgerTests.start, pace: 12, dailyLimit: 500) == .granted(requestsToday: 449))
        #expect(try StoreRequestLedgerTests.counts(ledger) == ["2026-11-28=3", "2026-11-29=449"])
    }

    @Test(arguments: [
        "",
        "{\"requests_per_day\": ",
        "not json",
        "[]",
        "{\"last_request_at\": \"yesterday\"}",
        "{\"last_request_at\": 5}",
        "{\"requests_per_day\": []}",
        "{\"requests_per_day\": {\"2026-13-01\": 1}}",
        "{\"requests_per_day\": {\"2026-11-29\": \"many\"}}",
        "{\"requests_per_day\": {\"2026-11-29\": 1.5}}",
    ])
    func unreadableFileIsAStorageErrorNamingItAndIsNotReplaced(contents: String) throws {
        try withSideFile(ClientFiles.apiUsage, contents: contents) { store, path in
            let ledger = StoreRequestLedger(store: store)
            for attempt in 0..<2 {
                let storeError = expectStorageError(naming: path, "reserve (attempt \(attempt + 1))") {
                    _ = try ledger.reserve(
                        at: StoreRequestLedgerTests.start.addingTimeInterval(Double(attempt) * 60), pace: 12, dailyLimit: 500)
                }
                switch storeError {
                case .invalidJSON(let errorPath, _)?, .invalidFile(let errorPath, _)?: #expect(errorPath == path)
                case nil: break  // already recorded
                case let other?: Issue.record("expected invalid JSON or metadata, got \(other)")
                }
            }
            #expect(throws: ClientError.self) { try ledger.requestsPerDay() }
        }
    }
}
