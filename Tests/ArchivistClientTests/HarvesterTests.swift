import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistClient

/// A transport that answers Article Search requests from a corpus, as the API would: the documents
/// whose UTC publication day lies within `begin_date`...`end_date`, oldest first (newest first for
/// `sort=newest`), 10 a page, with the hit count of the whole range. `intercept` may answer a call
/// instead (by page and 1-based call number).
final class CorpusTransport: HTTPTransport {
    struct Request: Sendable, Equatable {
        var from: CalendarDay?
        var to: CalendarDay?
        var page: Int
        var sort: String?
    }

    private let entries: [(day: Int, bytes: [UInt8])]
    private let intercept: @Sendable (_ request: Request, _ call: Int) -> HTTPResponse?
    private let requests = Mutex<[Request]>([])

    init(corpus: [JSONValue], intercept: @escaping @Sendable (_ request: Request, _ call: Int) -> HTTPResponse? = { _, _ in nil }) {
        // By day, and in corpus order within a day.
        entries = corpus.enumerated().map { position, document in
            (publicationDay(document), position, JSONWriter.compactBytes(document))
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { ($0.0, $0.2) }
        self.intercept = intercept
    }

    func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        var items: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            items[item.name] = item.value ?? ""
        }
        let request = Request(
            from: items["begin_date"].flatMap(CalendarDay.init), to: items["end_date"].flatMap(CalendarDay.init),
            page: items["page"].flatMap { Int($0) } ?? 0, sort: items["sort"])
        let call = requests.withLock { requests in
            requests.append(request)
            return requests.count
        }
        if let answer = intercept(request, call) { return answer }
        let low = request.from?.dayNumber ?? Int.min
        let high = request.to?.dayNumber ?? Int.max
        var matching = entries.filter { $0.day >= low && $0.day <= high }
        if request.sort == "newest" { matching.reverse() }
        let offset = request.page * 10
        let docs = offset < matching.count ? matching[offset..<min(offset + 10, matching.count)].map(\.bytes) : []
        // The body the API sends, assembled from the documents' bytes.
        var body = Array(#"{"copyright":"Copyright (c) 2019 The New York Times Company.","response":{"docs":["#.utf8)
        body.append(contentsOf: docs.joined(separator: [UInt8(ascii: ",")]))
        body.append(contentsOf: #"],"meta":{"hits":\#(matching.count),"offset":\#(offset),"time":5}},"status":"OK"}"#.utf8)
        return HTTPResponse(status: 200, contentType: "application/json", body: body)
    }

    /// The requests received, in order.
    var received: [Request] { requests.withLock { $0 } }
}

/// `count` small documents (`_id`, `pub_date`, a headline) spread evenly over the days `from`
/// to `to`, in date order: for the runs of thousands of documents, where the generator's 2 KB
/// documents would only make the test slower.
func smallCorpus(count: Int, prefix: String, from: String, to: String) -> [JSONValue] {
    guard let first = CalendarDay(from), let last = CalendarDay(to) else { return [] }
    let days = last.dayNumber - first.dayNumber + 1
    return (0..<count).map { index in
        let day = CalendarDay(dayNumber: first.dayNumber + index * days / count)
        let second = index % 86_400
        let time = String(format: "%02d:%02d:%02d", second / 3600 % 24, second / 60 % 60, second % 60)
        return .object(sorting: [
            JSONMember(key: "_id", value: .string("\(prefix)-\(index)")),
            JSONMember(key: "pub_date", value: .string("\(day)T\(time)Z")),
            JSONMember(
                key: "headline", value: .object(sorting: [JSONMember(key: "main", value: .string("Headline \(index) of \(prefix)"))])),
        ])
    }
}

/// The IDs of `documents`.
func ids(_ documents: [JSONValue]) -> [String] {
    documents.compactMap { $0["_id"]?.stringValue }
}

/// The day number of a document's `pub_date` (its first ten characters), or `Int.min` without one.
func publicationDay(_ document: JSONValue) -> Int {
    CalendarDay(String((document["pub_date"]?.stringValue ?? "").prefix(10)))?.dayNumber ?? Int.min
}

/// One run of a harvester (see `HarvesterTests.harvester`) over `corpus` into a store in `folder`,
/// and what came of it.
struct HarvestRun {
    let summary: HarvestSummary
    let error: ClientError?
    let transport: CorpusTransport
    let store: DocumentStore
    /// Every event of the run, in order.
    let events: [HarvestEvent]

    init(
        _ corpus: [JSONValue], _ request: SearchRequest, limit: PageLimit, in folder: TemporaryFolder,
        intercept: @escaping @Sendable (_ request: CorpusTransport.Request, _ call: Int) -> HTTPResponse? = { _, _ in nil }
    ) async throws {
        store = try folder.store()
        transport = CorpusTransport(corpus: corpus, intercept: intercept)
        let events = Locked<[HarvestEvent]>([])
        (summary, error) = await HarvesterTests.harvester(transport, store: store)
            .run(request, limit: limit) { event in events.withLock { $0.append(event) } }
        self.events = events.value
    }

    /// The `.page` events, in order.
    var pageEvents: [HarvestEvent] { events.filter { if case .page = $0 { true } else { false } } }

    /// The IDs in the store.
    func storedIDs() throws -> Set<String> {
        Set(try store.entries().map(\.id))
    }
}

@Suite struct HarvesterTests {
    /// A harvester over `transport` into `store`, without pacing.
    static func harvester(
        _ transport: any HTTPTransport, store: DocumentStore,
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) -> Harvester {
        let configuration = NYTClient.Configuration(
            baseURL: "http://127.0.0.1:9", apiKey: "test-key", pace: 0, backoff: 0.001,
            maximumRetries: 2, timeout: 1)
        let client = NYTClient(
            configuration: configuration, transport: transport, ledger: MemoryRequestLedger(),
            isCancelled: isCancelled)
        return Harvester(client: client, store: store)
    }

    static func range(_ from: String, _ to: String, sort: SearchRequest.Sort? = nil) -> SearchRequest {
        SearchRequest(query: "anything", from: CalendarDay(from), to: CalendarDay(to), sort: sort)
    }

    // MARK: Pages

    @Test func threePagesFetchThreePagesAndUpsertThirty() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: 100, seed: 11, from: "2020-01-01", to: "2020-12-31")
        let run = try await HarvestRun(corpus, HarvesterTests.range("2020-01-01", "2020-12-31"), limit: .pages(3), in: folder)
        #expect(run.error == nil)
        #expect(run.transport.received.map(\.page) == [0, 1, 2])
        #expect(run.transport.received.allSatisfy { $0.sort == nil })
        #expect(run.summary.pages == 3)
        #expect(run.summary.fetched == 30)
        #expect(run.summary.added == 30)
        #expect(run.summary.ids == Array(ids(corpus).prefix(30)))
        #expect(try run.store.count == 30)
        #expect(try run.storedIDs() == Set(ids(corpus).prefix(30)))
        #expect(
            run.pageEvents == [
                .page(1, of: 3, range: nil, documents: 10), .page(2, of: 3, range: nil, documents: 20),
                .page(3, of: 3, range: nil, documents: 30),
            ])
        // The newest publication date is the latest pub_date received.
        let dates = try corpus.prefix(30).map { try Article(document: $0, path: "doc").pubDate }
        #expect(run.summary.newestPublication == dates.compactMap { $0 }.max())
    }

    @Test func idsTheStoreTellsApartAreCountedApart() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Canonically equivalent spellings: equal as Swift strings, two documents in the store.
        let corpus: [JSONValue] = ["caf\u{e9}", "cafe\u{301}"].map { id in
            .object(sorting: [
                JSONMember(key: "_id", value: .string(id)),
                JSONMember(key: "pub_date", value: .string("2020-01-01T12:00:00Z")),
            ])
        }
        let run = try await HarvestRun(corpus, HarvesterTests.range("2020-01-01", "2020-01-02"), limit: .pages(1), in: folder)
        #expect(run.error == nil)
        #expect(try run.store.count == 2)
        #expect(run.summary.fetched == 2 && run.summary.added == 2)
        #expect(run.summary.ids.map { Array($0.utf8) } == ["caf\u{e9}", "cafe\u{301}"].map { Array($0.utf8) })
    }

    @Test(arguments: [(25, 3), (20, 2), (10, 1), (3, 1), (0, 1)])
    func pagesStopWhenTheHitsRunOut(hits: Int, requests: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: hits, seed: 12, from: "2021-01-01", to: "2021-01-31")
        let run = try await HarvestRun(corpus, HarvesterTests.range("2021-01-01", "2021-01-31"), limit: .pages(10), in: folder)
        #expect(run.error == nil)
        #expect(run.transport.received.map(\.page) == Array(0..<requests))
        #expect(run.summary.fetched == hits)
        #expect(run.summary.pages == requests)
        #expect(try run.store.count == hits)
    }

    @Test func anEmptyPageStopsTheRunEvenWhenTheHitsSayMore() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: 20, seed: 13, from: "2021-01-01", to: "2021-01-31")
        // The API claims 500 hits but page 1 comes back empty.
        let run = try await HarvestRun(corpus, HarvesterTests.range("2021-01-01", "2021-01-31"), limit: .pages(10), in: folder) {
            request, _ in
            let docs = request.page == 0 ? Array(corpus.prefix(10)) : []
            let body = ArticleGenerator(seed: 1).apiResponse(docs: docs, offset: request.page * 10, hits: 500)
            return HTTPResponse(status: 200, body: JSONWriter.compactBytes(body))
        }
        #expect(run.error == nil)
        #expect(run.transport.received.map(\.page) == [0, 1])
        #expect(run.summary.fetched == 10)
        #expect(try run.store.count == 10)
    }

    @Test func runningAgainCountsUnchangedDocuments() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let corpus = ArticleGenerator.corpus(count: 15, seed: 14, from: "2022-05-01", to: "2022-05-31")
        let harvester = HarvesterTests.harvester(CorpusTransport(corpus: corpus), store: store)
        let request = HarvesterTests.range("2022-05-01", "2022-05-31")
        let (first, _) = await harvester.run(request, limit: .pages(5))
        let (second, error) = await harvester.run(request, limit: .pages(5))
        #expect(error == nil)
        #expect(first.added == 15 && first.unchanged == 0)
        #expect(second.added == 0 && second.unchanged == 15 && second.fetched == 15)
        #expect(try store.count == 15)
    }

    // MARK: All

    @Test func allSplitsARangeOfMoreThan1000HitsAndFetchesEveryDocumentOnce() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // 1,000 over the year and 1,500 more in 20 days of March: one part needs a second split.
        let corpus =
            smallCorpus(count: 1_000, prefix: "year", from: "2020-01-01", to: "2020-12-31")
            + smallCorpus(count: 1_500, prefix: "march", from: "2020-03-01", to: "2020-03-20")
        #expect(Set(ids(corpus)).count == 2_500)
        let run = try await HarvestRun(corpus, HarvesterTests.range("2020-01-01", "2020-12-31"), limit: .all, in: folder)
        #expect(run.error == nil)
        #expect(run.summary.fetched == 2_500)
        #expect(run.summary.added == 2_500)
        #expect(run.summary.ids.count == 2_500)
        #expect(Set(run.summary.ids) == Set(ids(corpus)))
        #expect(run.summary.unreachableHits == 0)
        #expect(try run.store.count == 2_500)
        #expect(try run.storedIDs() == Set(ids(corpus)))

        let received = run.transport.received
        #expect(received.allSatisfy { $0.page <= SearchRequest.lastPage })
        // Every part that was paged through had at most 1,000 hits; no page was asked for twice.
        let keys = received.map { "\($0.from.map(\.description) ?? "")..\($0.to.map(\.description) ?? "") p\($0.page)" }
        #expect(Set(keys).count == keys.count)
        let splits = run.events.compactMap { event -> (String, Int, Int)? in
            if case .splitting(let range, let hits, let parts) = event { return (range, hits, parts) } else { return nil }
        }
        #expect(splits.count >= 2)
        #expect(splits.first.map { "\($0.0) \($0.1) \($0.2)" } == "2020-01-01..2020-12-31 2500 4")
        #expect(!run.events.contains { if case .dayTooLarge = $0 { true } else { false } })
        // Requests beyond page 0 only go to ranges with at most 1,000 hits.
        let days = corpus.map(publicationDay)
        for request in received where request.page > 0 {
            let low = request.from?.dayNumber ?? Int.min
            let high = request.to?.dayNumber ?? Int.max
            let hits = days.filter { $0 >= low && $0 <= high }.count
            #expect(hits <= SearchRequest.reachableHits, "page \(request.page) of \(String(describing: request.from))..")
        }
    }

    @Test func allWithNewestFirstFetchesThePartsNewestFirst() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = smallCorpus(count: 1_200, prefix: "2019", from: "2019-01-01", to: "2019-12-31")
        let run = try await HarvestRun(corpus, HarvesterTests.range("2019-01-01", "2019-12-31", sort: .newest), limit: .all, in: folder)
        #expect(run.error == nil)
        #expect(run.summary.fetched == 1_200)
        #expect(try run.store.count == 1_200)
        let partStarts = run.transport.received.dropFirst().filter { $0.page == 0 }.compactMap(\.from)
        #expect(partStarts.count == 2)
        #expect(partStarts == partStarts.sorted(by: >))
    }

    @Test func allWithFewHitsNeedsNoSplitting() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: 35, seed: 24, from: "2018-01-01", to: "2018-01-31")
        let run = try await HarvestRun(corpus, HarvesterTests.range("2018-01-01", "2018-01-31"), limit: .all, in: folder)
        #expect(run.error == nil)
        #expect(run.transport.received.map(\.page) == [0, 1, 2, 3])
        // Without a sort, --all asks for the oldest first, so new articles land on later pages.
        #expect(run.transport.received.allSatisfy { $0.sort == "oldest" })
        #expect(run.summary.fetched == 35)
        #expect(
            run.pageEvents == [
                .page(1, of: 4, range: "2018-01-01..2018-01-31", documents: 10),
                .page(2, of: 4, range: "2018-01-01..2018-01-31", documents: 20),
                .page(3, of: 4, range: "2018-01-01..2018-01-31", documents: 30),
                .page(4, of: 4, range: "2018-01-01..2018-01-31", documents: 35),
            ])
    }

    @Test func dayWithMoreThan1000HitsIsReportedAndItsFirst1000Fetched() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let crowded = smallCorpus(count: 1_050, prefix: "crowded", from: "2021-05-05", to: "2021-05-05")
        let others =
            ArticleGenerator.corpus(count: 20, seed: 32, from: "2021-05-04", to: "2021-05-04")
            + ArticleGenerator.corpus(count: 10, seed: 33, from: "2021-05-06", to: "2021-05-06")
        let run = try await HarvestRun(crowded + others, HarvesterTests.range("2021-05-04", "2021-05-06"), limit: .all, in: folder)
        #expect(run.error == nil)
        let day = try #require(CalendarDay("2021-05-05"))
        let tooLarge = run.events.filter { if case .dayTooLarge = $0 { true } else { false } }
        #expect(tooLarge == [.dayTooLarge(day: day, hits: 1_050)])
        #expect(run.summary.unreachableHits == 50)
        #expect(run.summary.fetched == 1_030)
        #expect(try run.store.count == 1_030)
        #expect(try run.storedIDs().isSuperset(of: ids(others)))
        #expect(run.transport.received.allSatisfy { $0.page <= SearchRequest.lastPage })
        let crowdedPages = run.transport.received.filter { $0.from == day && $0.to == day }.map(\.page)
        #expect(crowdedPages == Array(0..<100))
    }

    // MARK: Failures

    @Test func errorOnPage2KeepsPages0And1() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: 60, seed: 41, from: "2020-01-01", to: "2020-01-31")
        let request = HarvesterTests.range("2020-01-01", "2020-01-31")
        let run = try await HarvestRun(corpus, request, limit: .pages(5), in: folder) { request, _ in
            request.page == 2 ? HTTPResponse(status: 404, body: Array("{\"message\":\"Not Found\"}".utf8)) : nil
        }
        var failed = request
        failed.page = 2
        #expect(
            run.error
                == .onPage(
                    2,
                    .http(
                        status: 404, fault: "Not Found", url: failed.redactedURL(base: "http://127.0.0.1:9"),
                        attempts: 1)))
        #expect(run.summary.pages == 2)
        #expect(run.summary.fetched == 20)
        #expect(run.summary.ids == Array(ids(corpus).prefix(20)))
        #expect(try run.storedIDs() == Set(ids(corpus).prefix(20)))
    }

    @Test func errorOnPage2OfAnAllRunKeepsWhatCameBefore() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: 60, seed: 42, from: "2020-01-01", to: "2020-01-31")
        let run = try await HarvestRun(corpus, HarvesterTests.range("2020-01-01", "2020-01-31"), limit: .all, in: folder) { request, _ in
            request.page == 2 ? HTTPResponse(status: 503, body: Array("down".utf8)) : nil
        }
        guard case .onPage(2, .http(503, "down", _, 3))? = run.error else {
            Issue.record("expected a 503 on page 2 after 3 attempts, got \(String(describing: run.error))")
            return
        }
        #expect(run.error?.meansOffline == true)
        #expect(run.summary.fetched == 20)
        #expect(try run.storedIDs() == Set(ids(corpus).prefix(20)))
    }

    @Test func pageWithADocumentWithoutAnIDStoresNothingFromThatPage() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corpus = ArticleGenerator.corpus(count: 30, seed: 43, from: "2020-02-01", to: "2020-02-29")
        let run = try await HarvestRun(corpus, HarvesterTests.range("2020-02-01", "2020-02-29"), limit: .pages(3), in: folder) {
            request, _ in
            guard request.page == 1 else { return nil }
            var docs = Array(corpus[10..<20])
            if case .object(let members) = docs[3] {
                docs[3] = .object(members.filter { $0.key != "_id" })
            }
            let body = ArticleGenerator(seed: 1).apiResponse(docs: docs, offset: 10, hits: 30)
            return HTTPResponse(status: 200, body: JSONWriter.compactBytes(body))
        }
        #expect(run.error == .onPage(1, .missingID(path: "response.docs[3]")))
        #expect(run.summary.pages == 1)
        #expect(run.summary.fetched == 10)
        #expect(try run.storedIDs() == Set(ids(corpus).prefix(10)))
    }

    @Test func cancellationStopsBetweenPagesAndKeepsWhatArrived() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let corpus = ArticleGenerator.corpus(count: 50, seed: 44, from: "2020-03-01", to: "2020-03-31")
        let transport = CorpusTransport(corpus: corpus)
        let harvester = HarvesterTests.harvester(transport, store: store, isCancelled: { transport.received.count >= 2 })
        let (summary, error) = await harvester.run(HarvesterTests.range("2020-03-01", "2020-03-31"), limit: .pages(5))
        #expect(error == .cancelled)
        #expect(summary.fetched == 20)
        #expect(try store.count == 20)
    }

    @Test func invalidRequestSendsNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let run = try await HarvestRun([], HarvesterTests.range("2020-03-02", "2020-03-01"), limit: .all, in: folder)
        #expect(run.error == .invalidRequest(parameter: "--to", reason: "2020-03-01 is before --from 2020-03-02"))
        #expect(run.summary == HarvestSummary())
        #expect(run.transport.received.isEmpty)
    }
}
