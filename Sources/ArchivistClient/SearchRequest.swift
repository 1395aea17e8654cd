import Foundation

/// One Article Search request: what to search for and which page of the answer to fetch.
public struct SearchRequest: Sendable, Equatable {
    /// The order of the results.
    public enum Sort: String, Sendable, CaseIterable {
        /// Latest `pub_date` first.
        case newest
        /// Earliest `pub_date` first.
        case oldest
        /// The API's relevance order.
        case relevance
    }

    /// The API's path under the base URL.
    public static let path = "/svc/search/v2/articlesearch.json"
    /// The last page the API serves (pages count from 0, 10 documents each).
    public static let lastPage = 100
    /// Documents in a page.
    public static let pageSize = 10
    /// Above this many hits, `--all` splits the date range: pages 0...99 hold the first 1,000
    /// (page 100 is allowed too, but a query with more hits needs splitting anyway).
    public static let reachableHits = 1_000

    /// `q`: the words to search for (nil: everything).
    public var query: String?
    /// `fq`: a Lucene filter passed through as given (`news_desk:("Sports" "Foreign")`).
    public var filterQuery: String?
    /// `begin_date`: the first day, inclusive.
    public var from: CalendarDay?
    /// `end_date`: the last day, inclusive.
    public var to: CalendarDay?
    /// `sort`; nil leaves the API's default (relevance).
    public var sort: Sort?
    /// `page`, from 0 to 100.
    public var page: Int

    /// Creates a request.
    public init(
        query: String? = nil, filterQuery: String? = nil, from: CalendarDay? = nil, to: CalendarDay? = nil,
        sort: Sort? = nil, page: Int = 0
    ) {
        self.query = query
        self.filterQuery = filterQuery
        self.from = from
        self.to = to
        self.sort = sort
        self.page = page
    }

    /// Throws when the request cannot be sent as it is: a page outside 0...100, or a range that
    /// ends before it begins.
    public func validate() throws(ClientError) {
        guard (0...SearchRequest.lastPage).contains(page) else {
            throw .invalidRequest(parameter: "page", reason: "\(page) is outside 0...\(SearchRequest.lastPage)")
        }
        if let from, let to, to < from {
            throw .invalidRequest(parameter: "--to", reason: "\(to) is before --from \(from)")
        }
    }

    /// The query items, in a fixed order, with the key last (`REDACTED` when `apiKey` is nil).
    public func queryItems(apiKey: String?) -> [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let query, !query.isEmpty { items.append(URLQueryItem(name: "q", value: query)) }
        if let filterQuery, !filterQuery.isEmpty { items.append(URLQueryItem(name: "fq", value: filterQuery)) }
        if let from { items.append(URLQueryItem(name: "begin_date", value: from.compact)) }
        if let to { items.append(URLQueryItem(name: "end_date", value: to.compact)) }
        if let sort { items.append(URLQueryItem(name: "sort", value: sort.rawValue)) }
        items.append(URLQueryItem(name: "page", value: String(page)))
        items.append(URLQueryItem(name: "api-key", value: apiKey ?? KeyRedaction.placeholder))
        return items
    }

    /// The URL under `base` (`https://api.nytimes.com`); nil when `base` is not an http(s) URL.
    /// With `apiKey` nil the key shows as `REDACTED`: the form for messages.
    public func url(base: String, apiKey: String?) -> URL? {
        APIURL.make(base: base, path: SearchRequest.path, items: queryItems(apiKey: apiKey))
    }

    /// The URL as messages show it, with `api-key=REDACTED`.
    public func redactedURL(base: String) -> String {
        url(base: base, apiKey: nil)?.absoluteString ?? base + SearchRequest.path
    }
}
