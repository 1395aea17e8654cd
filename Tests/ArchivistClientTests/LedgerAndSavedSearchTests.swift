import ArchivistBase
import ArchivistStore
import Foundation
import Testing

@testable import ArchivistClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh folder made by mkdtemp(3) under the system temp folder. Call `remove()` when done.
struct ScratchFolder {
    struct CannotCreate: Error {}

    let path: String

    init() throws {
        var parent = FileManager.default.temporaryDirectory.path
        while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
        var template = Array((parent + "/archivist-client-tests-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let start = buffer.baseAddress else { return false }
            return mkdtemp(start) != nil
        }
        guard made else { throw CannotCreate() }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The data folder inside it (created by the store).
    var data: String { path + "/data" }

    /// A store in the data folder.
    func store() throws -> DocumentStore {
        try DocumentStore(folder: data, schema: .nyt)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The bytes of a file, or nil when it cannot be read.
func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// Writes `text` to `path`.
func writeFile(_ path: String, _ text: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Writes `contents` as the side file `name` of a store in a fresh folder, runs `body` with the
/// store and the file's path, then expects the file to be unchanged.
func withSideFile(_ name: String, contents: String, _ body: (DocumentStore, String) throws -> Void) throws {
    let folder = try ScratchFolder()
    defer { folder.remove() }
    let store = try folder.store()
    let path = store.sideFilePath(named: name)
    try writeFile(path, contents)
    let before = try #require(fileBytes(path))
    try body(store, path)
    #expect(fileBytes(path) == before)
}

/// The storage error `body` fails with, whose message must start with `path`; an issue naming
/// `operation` is recorded (and nil returned) when it does not fail, or fails otherwise.
@discardableResult
func expectStorageError(naming path: String, _ operation: String, _ body: () throws -> Void) -> StoreError? {
    do {
        try body()
        Issue.record("\(operation): expected an error")
    } catch {
        guard let error = error as? ClientError, case .storage(let storeError) = error else {
            Issue.record("\(operation): expected .storage, got \(error)")
            return nil
        }
        #expect(error.errorDescription?.hasPrefix(path + ": ") == true, "\(operation): \(error.errorDescription ?? "")")
        return storeError
    }
    return nil
}

@Suite struct StoreRequestLedgerTests {
    static let start = utc(2026, 11, 29, 22, 10)

    /// The ledger's counts as `YYYY-MM-DD=N` strings.
    static func counts(_ ledger: StoreRequestLedger) throws -> [String] {
        try ledger.requestsPerDay().map { "\($0.day)=\($0.requests)" }
    }

    @Test func countsRequestsPerUTCDay() throws {
        let folder = try ScratchFolder()
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
        let folder = try ScratchFolder()
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
        let folder = try ScratchFolder()
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
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let ledger = StoreRequestLedger(store: try folder.store())
        let t0 = StoreRequestLedgerTests.start
        #expect(try ledger.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(-3600), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
    }

    @Test func fileIsPrettyJSONWithLastRequestAndCountsPerDay() throws {
        let folder = try ScratchFolder()
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
        let folder = try ScratchFolder()
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
        let folder = try ScratchFolder()
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

@Suite struct MemoryRequestLedgerTests {
    @Test func countsPerUTCDayAndAsksToWaitWithinThePace() throws {
        let ledger = MemoryRequestLedger()
        let t0 = utc(2024, 2, 29, 23, 59, 50)
        #expect(try ledger.reserve(at: t0, pace: 5, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(1), pace: 5, dailyLimit: 500) == .wait(seconds: 4))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(5), pace: 5, dailyLimit: 500) == .granted(requestsToday: 2))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(10), pace: 5, dailyLimit: 500) == .granted(requestsToday: 1))  // 2024-03-01
        #expect(try ledger.reserve(at: t0.addingTimeInterval(10), pace: 0, dailyLimit: 500) == .granted(requestsToday: 2))
    }

    @Test func clockSetBackGrantsAtOnce() throws {
        let ledger = MemoryRequestLedger()
        let t0 = utc(2024, 3, 1, 12)
        #expect(try ledger.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(-3600), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
    }
}

@Suite struct SavedSearchesTests {
    static let savedAt = utc(2024, 3, 1, 12).addingTimeInterval(0.5)

    static func jury(page: Int = 0) -> SavedSearch {
        SavedSearch(
            name: "jury",
            request: SearchRequest(
                query: "jury \"grand\" Café 東京", filterQuery: "news_desk:(\"Metro\" \"National\")",
                from: CalendarDay("2020-01-01"), to: CalendarDay("2020-12-31"),
                sort: .newest, page: page),
            savedAt: savedAt)
    }

    @Test func recordingARunOfAnUnknownSearchWritesNothing() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try folder.store()
        try SavedSearches(store: store).recordRun(of: "nope", at: Date(), summary: HarvestSummary(), isComplete: true)
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
    }

    @Test func savingAnInvalidNameIsRefused() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try folder.store()
        #expect(throws: ClientError.self) {
            try SavedSearches(store: store).save(SavedSearch(name: "a b", request: SearchRequest(query: "x"), savedAt: Date()))
        }
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
    }

    @Test func noFileMeansNoSearchesAndReadingCreatesNothing() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let searches = SavedSearches(store: store)
        #expect(try searches.all().isEmpty)
        #expect(throws: ClientError.unknownSearch(name: "jury")) { try searches.search(named: "jury") }
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
    }

    @Test func savedSearchReadsBackWithEveryFieldButThePage() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let searches = SavedSearches(store: store)
        try searches.save(SavedSearchesTests.jury(page: 5))
        let expected = SavedSearchesTests.jury(page: 0)
        #expect(try searches.all() == [expected])
        #expect(try searches.search(named: "jury") == expected)
        // Another store on the same folder sees it.
        #expect(try SavedSearches(store: try folder.store()).search(named: "jury") == expected)
        let path = store.sideFilePath(named: ClientFiles.savedSearches)
        #expect(path == folder.data + "/searches.json")
        let bytes = try #require(fileBytes(path))
        #expect(JSONWriter.prettyBytes(try JSONParser.parse(bytes)) == bytes)
    }

    @Test func minimalSearchReadsBackWithNils() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let searches = SavedSearches(store: try folder.store())
        let bare = SavedSearch(name: "everything", request: SearchRequest(), savedAt: SavedSearchesTests.savedAt)
        try searches.save(bare)
        #expect(try searches.search(named: "everything") == bare)
    }

    @Test func savingAgainReplacesAndAllListsByName() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let searches = SavedSearches(store: try folder.store())
        try searches.save(SavedSearch(name: "zeta", request: SearchRequest(query: "z"), savedAt: SavedSearchesTests.savedAt))
        try searches.save(SavedSearchesTests.jury())
        try searches.save(SavedSearch(name: "alpha", request: SearchRequest(query: "a"), savedAt: SavedSearchesTests.savedAt))
        var replaced = SavedSearchesTests.jury()
        replaced.request.query = "jury duty"
        try searches.save(replaced)
        #expect(try searches.all().map(\.name) == ["alpha", "jury", "zeta"])
        #expect(try searches.search(named: "jury").request.query == "jury duty")
    }

    @Test func removeForgetsOneSearchAndUnknownNamesAreErrors() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let searches = SavedSearches(store: store)
        try searches.save(SavedSearchesTests.jury())
        try searches.save(SavedSearch(name: "other", request: SearchRequest(query: "o"), savedAt: SavedSearchesTests.savedAt))
        try searches.remove(named: "jury")
        #expect(try searches.all().map(\.name) == ["other"])
        let path = store.sideFilePath(named: ClientFiles.savedSearches)
        let before = fileBytes(path)
        #expect(throws: ClientError.unknownSearch(name: "jury")) { try searches.remove(named: "jury") }
        #expect(fileBytes(path) == before)
        #expect(ClientError.unknownSearch(name: "jury").errorDescription == "jury: no saved search has this name (see `searches`)")
    }

    @Test func recordRunKeepsTheSummaryAndAdvancesNewestPublicationOnlyOnCompleteRuns() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let searches = SavedSearches(store: try folder.store())
        try searches.save(SavedSearchesTests.jury())
        var summary = HarvestSummary()
        summary.fetched = 30
        summary.added = 20
        summary.updated = 4
        summary.unchanged = 6
        summary.pages = 3
        summary.ids = ["a", "b"]
        summary.unreachableHits = 7

        // An interrupted run: the summary and time are kept, newest publication is not.
        let march = utc(2024, 3, 1, 12)
        summary.newestPublication = march
        try searches.recordRun(of: "jury", at: utc(2024, 3, 2), summary: summary, isComplete: false)
        var saved = try searches.search(named: "jury")
        #expect(saved.lastRunAt == utc(2024, 3, 2))
        #expect(saved.newestPublication == nil)
        let lastRun = try #require(saved.lastRun)
        #expect([lastRun.fetched, lastRun.added, lastRun.updated, lastRun.unchanged, lastRun.pages] as [Int] == [30, 20, 4, 6, 3])

        // A complete run sets it.
        try searches.recordRun(of: "jury", at: utc(2024, 3, 3), summary: summary, isComplete: true)
        saved = try searches.search(named: "jury")
        #expect(saved.newestPublication == march)
        #expect(saved.lastRunAt == utc(2024, 3, 3))

        // An older newest publication never moves it back.
        summary.newestPublication = utc(2023, 1, 1)
        try searches.recordRun(of: "jury", at: utc(2024, 3, 4), summary: summary, isComplete: true)
        #expect(try searches.search(named: "jury").newestPublication == march)

        // A complete run that received nothing keeps it.
        summary.newestPublication = nil
        try searches.recordRun(of: "jury", at: utc(2024, 3, 5), summary: summary, isComplete: true)
        #expect(try searches.search(named: "jury").newestPublication == march)

        // A newer one from an incomplete run is ignored; from a complete run it advances.
        let april = utc(2024, 4, 1, 8, 30)
        summary.newestPublication = april
        try searches.recordRun(of: "jury", at: utc(2024, 4, 2), summary: summary, isComplete: false)
        #expect(try searches.search(named: "jury").newestPublication == march)
        try searches.recordRun(of: "jury", at: utc(2024, 4, 3), summary: summary, isComplete: true)
        saved = try searches.search(named: "jury")
        #expect(saved.newestPublication == april)
        #expect(saved.lastRunAt == utc(2024, 4, 3))
        // The rest of the search is untouched.
        #expect(saved.request == SavedSearchesTests.jury().request)
        #expect(saved.savedAt == SavedSearchesTests.savedAt)
    }

    @Test func recordRunOfAnUnknownNameAddsNothing() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let searches = SavedSearches(store: try folder.store())
        try searches.save(SavedSearchesTests.jury())
        try searches.recordRun(of: "nope", at: utc(2024, 3, 2), summary: HarvestSummary(), isComplete: true)
        #expect(try searches.all().map(\.name) == ["jury"])
        #expect(try searches.search(named: "jury").lastRunAt == nil)
    }

    @Test(arguments: [
        "",
        "{\"searches\": {",
        "not json",
        "[]",
        "{}",
        "{\"searches\": []}",
        "{\"searches\": {\"x\": 1}}",
        "{\"searches\": {\"x\": {\"q\": 5}}}",
        "{\"searches\": {\"x\": {\"from\": \"2024-13-01\"}}}",
        "{\"searches\": {\"x\": {\"sort\": \"best\"}}}",
        "{\"searches\": {\"x\": {\"saved_at\": \"soon\"}}}",
    ])
    func unreadableFileIsAnErrorNamingItAndIsNeverReplaced(contents: String) throws {
        try withSideFile(ClientFiles.savedSearches, contents: contents) { store, path in
            let searches = SavedSearches(store: store)
            expectStorageError(naming: path, "all") { _ = try searches.all() }
            expectStorageError(naming: path, "search") { _ = try searches.search(named: "x") }
            expectStorageError(naming: path, "save") { try searches.save(SavedSearchesTests.jury()) }
            expectStorageError(naming: path, "remove") { try searches.remove(named: "x") }
            expectStorageError(naming: path, "recordRun") {
                try searches.recordRun(of: "x", at: utc(2024, 1, 1), summary: HarvestSummary(), isComplete: true)
            }
        }
    }

    @Test(arguments: [
        ("jury", true),
        ("a", true),
        ("A.b_c-1", true),
        ("x-", true),
        ("2024", true),
        (".hidden", true),
        (String(repeating: "n", count: 64), true),
        (String(repeating: "n", count: 65), false),
        ("", false),
        ("-x", false),
        ("--all", false),
        ("with space", false),
        ("tab\there", false),
        ("café", false),
        ("東京", false),
        ("١٢٣", false),  // non-ASCII digits
        ("a/b", false),
        ("a:b", false),
        ("a\"b", false),
        ("a*b", false),
        ("new\nline", false),
    ])
    func validNamesAreOneTo64PortableCharactersNotStartingWithADash(name: String, valid: Bool) {
        #expect(SavedSearch.isValidName(name) == valid)
    }
}
