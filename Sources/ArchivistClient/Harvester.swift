import ArchivistBase
import Foundation

/// What a search run fetched and what it changed in the store.
public struct HarvestSummary: Sendable, Equatable {
    /// Distinct documents received.
    public var fetched = 0
    /// Documents new to the store.
    public var added = 0
    /// Documents whose stored version changed.
    public var updated = 0
    /// Documents already stored exactly so.
    public var unchanged = 0
    /// Pages received.
    public var pages = 0
    /// The IDs received, in the order they came, each once.
    public var ids: [String] = []
    /// The sequence numbers of the changes committed while the run stored (nil: none), for
    /// `changes --since` (changes other processes committed meanwhile may be among them).
    public var sequences: ClosedRange<Int>?
    /// The latest `pub_date` among the documents received.
    public var newestPublication: Date?
    /// Hits that could not be fetched: more than 1,000 on a single day.
    public var unreachableHits = 0

    /// An empty summary.
    public init() {}
}

/// How many pages a run fetches.
public enum PageLimit: Sendable, Equatable {
    /// At most this many pages from page 0 (fewer when the hits run out).
    case pages(Int)
    /// Every hit: a date range with more than 1,000 hits is split until each part can be paged
    /// through.
    case all
}

/// Progress of a run, for the terminal.
public enum HarvestEvent: Sendable, Equatable {
    /// A page arrived: `page` (from 1) of `pages` planned for `range` (nil: the whole request),
    /// and the documents received so far in the run.
    case page(Int, of: Int, range: String?, documents: Int)
    /// A date range has more hits than can be reached; it is split into `parts`.
    case splitting(range: String, hits: Int, parts: Int)
    /// A single day has more than 1,000 hits: only the first 1,000 can be fetched.
    case dayTooLarge(day: CalendarDay, hits: Int)
    /// Every hit of a range without `q` or `fq` needs about `requests` requests, more than the
    /// `months` Archive API requests that fetch the same articles whole.
    case archiveIsCheaper(requests: Int, months: Int)
    /// Something the client said (pacing, retries, quota).
    case client(NYTClient.Event)
}

/// Runs a search page by page, upserting each page into the store as soon as it arrives, so an
/// interruption or a crash loses at most the page in flight.
public final class Harvester: Sendable {
    /// The first day `--all` considers when a search has no `--from` (the first issue: 1851-09-18).
    public static let firstDay = CalendarDay("1851-09-18")!
    /// Aim for parts of about this many hits when splitting a range (under 1,000 to allow for
    /// uneven spread).
    static let targetHitsPerPart = 800

    private let client: NYTClient
    private let store: any DataFolder

    /// A harvester fetching with `client` into `store`.
    public init(client: NYTClient, store: any DataFolder) {
        self.client = client
        self.store = store
    }

    /// Runs `request` from page 0. Returns what was done, and the error that stopped the run early
    /// (`.cancelled` for an interruption); everything stored before it stays stored.
    public func run(
        _ request: SearchRequest, limit: PageLimit,
        onEvent: @escaping @Sendable (HarvestEvent) -> Void = { _ in }
    ) async -> (HarvestSummary, ClientError?) {
        var run = Run()
        do throws(ClientError) {
            try client.validate(request)
            switch limit {
            case .pages(let count):
                try await fetchPages(request, from: 0, upTo: count, range: nil, run: &run, onEvent: onEvent)
            case .all:
                // Oldest first unless asked otherwise: articles published during the run then
                // land on later pages instead of shifting the earlier ones.
                var stable = request
                if stable.sort == nil { stable.sort = .oldest }
                try await fetchAll(stable, run: &run, onEvent: onEvent)
            }
            return (run.summary, nil)
        } catch {
            return (run.summary, error)
        }
    }

    /// State of one run.
    private struct Run {
        var summary = HarvestSummary()
        /// IDs as the store tells them apart (byte for byte, not by Unicode equivalence).
        var seen: Set<DocumentID> = []
    }

    /// Fetches pages `first..<planned` of one request, fewer when the hits run out (the plan is
    /// cut to the pages the latest hit count needs, and an empty page ends it).
    private func fetchPages(
        _ request: SearchRequest, from first: Int, upTo planned: Int, range: String?, run: inout Run,
        onEvent: @escaping @Sendable (HarvestEvent) -> Void
    ) async throws(ClientError) {
        var request = request
        var planned = min(planned, SearchRequest.lastPage + 1)
        var page = first
        while page < planned {
            request.page = page
            let response = try await fetchPage(request, run: &run, onEvent: onEvent)
            planned = min(planned, max(page + 1, SearchRequest.pagesNeeded(forHits: response.hits)))
            onEvent(.page(page + 1, of: planned, range: range, documents: run.summary.fetched))
            if response.documents.isEmpty { break }
            page += 1
        }
    }

    /// Fetches every hit of `request`, splitting its date range while it has too many.
    private func fetchAll(
        _ request: SearchRequest, run: inout Run,
        onEvent: @escaping @Sendable (HarvestEvent) -> Void
    ) async throws(ClientError) {
        var first = request
        first.page = 0
        let label = request.from == nil && request.to == nil ? nil : Harvester.label(request)
        let response = try await fetchPage(first, run: &run, onEvent: onEvent)
        let pages = SearchRequest.pagesNeeded(forHits: response.hits)
        if run.summary.pages == 1, request.query == nil, request.filterQuery == nil {
            // The first answer of the run: the whole range's hits, of which pages of 10 cost one request each.
            let months =
                ArchiveMonth((request.to ?? CalendarDay.today).start).ordinal
                - ArchiveMonth((request.from ?? Harvester.firstDay).start).ordinal + 1
            if pages > months { onEvent(.archiveIsCheaper(requests: pages, months: months)) }
        }
        if response.hits <= SearchRequest.reachableHits || response.documents.isEmpty {
            onEvent(.page(1, of: max(1, pages), range: label, documents: run.summary.fetched))
            try await fetchPages(request, from: 1, upTo: pages, range: label, run: &run, onEvent: onEvent)
            return
        }
        let from = request.from ?? Harvester.firstDay
        let to = request.to ?? CalendarDay.today
        let days = to.dayNumber - from.dayNumber + 1
        if days <= 1 {
            onEvent(.dayTooLarge(day: from, hits: response.hits))
            onEvent(.page(1, of: SearchRequest.lastPage, range: label, documents: run.summary.fetched))
            try await fetchPages(request, from: 1, upTo: SearchRequest.lastPage, range: label, run: &run, onEvent: onEvent)
            run.summary.unreachableHits += max(0, response.hits - SearchRequest.lastPage * SearchRequest.pageSize)
            return
        }
        let parts = min(days, max(2, (response.hits + Harvester.targetHitsPerPart - 1) / Harvester.targetHitsPerPart))
        onEvent(.splitting(range: "\(from)..\(to)", hits: response.hits, parts: parts))
        var ranges: [(CalendarDay, CalendarDay)] = []
        for part in 0..<parts {
            let start = from.dayNumber + days * part / parts
            let end = from.dayNumber + days * (part + 1) / parts - 1
            ranges.append((CalendarDay(dayNumber: start), CalendarDay(dayNumber: end)))
        }
        // Newest first when the results are wanted newest first, else in date order.
        if request.sort == .newest { ranges.reverse() }
        for (start, end) in ranges {
            var part = request
            part.from = start
            part.to = end
            try await fetchAll(part, run: &run, onEvent: onEvent)
        }
    }

    /// Fetches one page and upserts its documents; errors name the page.
    private func fetchPage(
        _ request: SearchRequest, run: inout Run,
        onEvent: @escaping @Sendable (HarvestEvent) -> Void
    ) async throws(ClientError) -> SearchResponse {
        let response: SearchResponse
        do {
            response = try await client.fetch(request) { event in onEvent(.client(event)) }
        } catch {
            switch error {
            case .cancelled, .networkUnavailable, .dailyLimitReached: throw error  // not the page's doing
            default: throw .onPage(request.page, error)
            }
        }
        let results: [UpsertResult]
        do {
            results = try store.upsert(response.documents)
        } catch {
            throw .onPage(request.page, .storage(error))
        }
        run.summary.pages += 1
        for (article, result) in zip(response.articles, results) {
            let outcome: UpsertOutcome
            switch result.outcome {
            case .success(let value): outcome = value
            case .failure(let error): throw .onPage(request.page, .storage(error))
            }
            if let date = article.pubDate, date > (run.summary.newestPublication ?? .distantPast) {
                run.summary.newestPublication = date
            }
            guard run.seen.insert(DocumentID(article.id)).inserted else { continue }
            run.summary.ids.append(article.id)
            run.summary.fetched += 1
            switch outcome {
            case .added: run.summary.added += 1
            case .updated: run.summary.updated += 1
            case .unchanged: run.summary.unchanged += 1
            }
        }
        return response
    }

    /// `2020-01-01..2020-06-30` for a request's range.
    static func label(_ request: SearchRequest) -> String {
        "\(request.from.map(\.description) ?? "")..\(request.to.map(\.description) ?? "")"
    }
}

extension SearchRequest {
    /// Pages needed to see `hits` documents, before the 101-page cap.
    static func pagesNeeded(forHits hits: Int) -> Int {
        (max(0, hits) + pageSize - 1) / pageSize
    }
}
