import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

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
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        try SavedSearches(store: store).recordRun(of: "nope", at: Date(), summary: HarvestSummary(), isComplete: true)
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
    }

    @Test func savingAnInvalidNameIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        #expect(throws: ClientError.self) {
            try SavedSearches(store: store).save(SavedSearch(name: "a b", request: SearchRequest(query: "x"), savedAt: Date()))
        }
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
    }

    @Test func noFileMeansNoSearchesAndReadingCreatesNothing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let searches = SavedSearches(store: store)
        #expect(try searches.all().isEmpty)
        #expect(throws: ClientError.unknownSearch(name: "jury")) { try searches.search(named: "jury") }
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
    }

    @Test func savedSearchReadsBackWithEveryFieldButThePage() throws {
        let folder = try TemporaryFolder()
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
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let searches = SavedSearches(store: try folder.store())
        let bare = SavedSearch(name: "everything", request: SearchRequest(), savedAt: SavedSearchesTests.savedAt)
        try searches.save(bare)
        #expect(try searches.search(named: "everything") == bare)
    }

    @Test func savingAgainReplacesAndAllListsByName() throws {
        let folder = try TemporaryFolder()
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
        let folder = try TemporaryFolder()
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
        let folder = try TemporaryFolder()
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
        let folder = try TemporaryFolder()
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
