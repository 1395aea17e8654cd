import ArchivistBase
import Foundation
import Testing

@testable import ArchivistClient

/// The query of `url` as a typical server reads it (`application/x-www-form-urlencoded`: pairs split
/// on `&`, name and value on the first `=`, `+` read as a space, then percent-decoded).
func serverDecodedQuery(_ url: URL) -> [(name: String, value: String)] {
    guard let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery else { return [] }
    return query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        func decode(_ text: Substring) -> String {
            let spaced = text.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? "<undecodable \(spaced)>"
        }
        return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
    }
}

/// The query items of `url` as URLComponents decodes them.
func componentQueryItems(_ url: URL) -> [URLQueryItem] {
    URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
}

@Suite struct SearchRequestTests {
    static let base = "https://api.nytimes.com"

    // MARK: Paths

    @Test(arguments: [
        ("https://api.nytimes.com", "https", "api.nytimes.com", nil as Int?, "/svc/search/v2/articlesearch.json"),
        ("https://api.nytimes.com/", "https", "api.nytimes.com", nil, "/svc/search/v2/articlesearch.json"),
        ("https://api.nytimes.com///", "https", "api.nytimes.com", nil, "/svc/search/v2/articlesearch.json"),
        ("http://127.0.0.1:8080", "http", "127.0.0.1", 8080, "/svc/search/v2/articlesearch.json"),
        ("http://127.0.0.1:8080/", "http", "127.0.0.1", 8080, "/svc/search/v2/articlesearch.json"),
        ("http://localhost:9000/proxy", "http", "localhost", 9000, "/proxy/svc/search/v2/articlesearch.json"),
        ("http://localhost:9000/proxy/", "http", "localhost", 9000, "/proxy/svc/search/v2/articlesearch.json"),
        ("HTTPS://API.NYTIMES.COM", "https", "api.nytimes.com", nil, "/svc/search/v2/articlesearch.json"),
    ])
    func urlPathIsTheAPIPathUnderTheBaseWithOrWithoutATrailingSlash(
        base: String, scheme: String, host: String,
        port: Int?, path: String
    ) throws {
        let url = try #require(SearchRequest(query: "jury").url(base: base, apiKey: "k"))
        let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        #expect(components.scheme?.lowercased() == scheme)
        #expect(components.host?.lowercased() == host)
        #expect(components.port == port)
        #expect(components.path == path)
    }

    @Test(arguments: [
        "ftp://api.nytimes.com", "file:///tmp/x", "mailto:someone@example.com", "https://", "http:///path",
        "garbage", "", "api.nytimes.com", "//api.nytimes.com", "https://exa mple.com", "https//api.nytimes.com",
        "https://api.nytimes.com?x=1", "https://api.nytimes.com#part",
    ])
    func baseThatIsNotAnHTTPURLWithAHostGivesNil(base: String) {
        #expect(SearchRequest(query: "jury").url(base: base, apiKey: "k") == nil)
        #expect(SearchRequest(query: "jury").url(base: base, apiKey: nil) == nil)
    }

    @Test func redactedURLOfAnInvalidBaseFallsBackToBasePlusPath() {
        #expect(SearchRequest(query: "jury").redactedURL(base: "garbage") == "garbage/svc/search/v2/articlesearch.json")
    }

    // MARK: Query items

    @Test func queryItemsComeInAFixedOrderWithTheKeyLast() throws {
        let request = SearchRequest(
            query: "jury", filterQuery: "news_desk:Sports", from: CalendarDay("2020-01-02"),
            to: CalendarDay("2020-12-31"), sort: .newest, page: 7)
        let url = try #require(request.url(base: SearchRequestTests.base, apiKey: "key123"))
        let items = componentQueryItems(url)
        #expect(items.map(\.name) == ["q", "fq", "begin_date", "end_date", "sort", "page", "api-key"])
        #expect(items.map(\.value) == ["jury", "news_desk:Sports", "20200102", "20201231", "newest", "7", "key123"])
        #expect(request.queryItems(apiKey: "key123") == items)
    }

    @Test func absentAndEmptyParametersAreLeftOut() throws {
        let bare = try #require(SearchRequest().url(base: SearchRequestTests.base, apiKey: "k"))
        #expect(componentQueryItems(bare).map(\.name) == ["page", "api-key"])
        #expect(componentQueryItems(bare).first?.value == "0")

        let empty = try #require(SearchRequest(query: "", filterQuery: "").url(base: SearchRequestTests.base, apiKey: "k"))
        #expect(componentQueryItems(empty).map(\.name) == ["page", "api-key"])

        let onlyTo = try #require(SearchRequest(to: CalendarDay("1999-02-03")).url(base: SearchRequestTests.base, apiKey: "k"))
        #expect(componentQueryItems(onlyTo).map(\.name) == ["end_date", "page", "api-key"])
        #expect(componentQueryItems(onlyTo).first?.value == "19990203")
    }

    @Test(arguments: SearchRequest.Sort.allCases)
    func sortIsSentByItsName(sort: SearchRequest.Sort) throws {
        let url = try #require(SearchRequest(sort: sort).url(base: SearchRequestTests.base, apiKey: "k"))
        #expect(componentQueryItems(url).first { $0.name == "sort" }?.value == sort.rawValue)
    }

    @Test(arguments: [
        "climate change",
        "\"climate change\" +policy -denial",
        "C++ & C#",
        "a+b=c; d/e? 100% sure",
        "news_desk:(\"Sports\" \"Foreign\") AND pub_date:[2020-01-01 TO 2020-12-31]",
        "headline:\"Café ☕ 東京\" AND byline:O'Brien",
        "emoji 🇺🇸 and Zalgo e\u{301}\u{302}",
        "tabs\tand\nnewlines",
        "brackets {x} [y] <z> | ~ ^ ` \\",
        "++",
        "%2B is not a plus",
    ])
    func queryAndFilterTextReachTheServerExactly(text: String) throws {
        let request = SearchRequest(query: text, filterQuery: text)
        let url = try #require(request.url(base: SearchRequestTests.base, apiKey: "k"))
        let encodedQuery = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
        // A form decoder reads `+` as a space and splits on `&` and `#` ends the query: none may be
        // left raw inside a value.
        #expect(!encodedQuery.contains("+"))
        #expect(!encodedQuery.contains(" "))
        #expect(!encodedQuery.contains("#"))
        #expect(!url.absoluteString.contains("#"))
        #expect(encodedQuery.split(separator: "&").count == 4)  // q, fq, page, api-key

        let decoded = serverDecodedQuery(url)
        #expect(decoded.map(\.name) == ["q", "fq", "page", "api-key"])
        #expect(decoded.first { $0.name == "q" }?.value == text)
        #expect(decoded.first { $0.name == "fq" }?.value == text)
        // URLComponents reads it back the same way.
        #expect(componentQueryItems(url).first { $0.name == "q" }?.value == text)
        #expect(componentQueryItems(url).first { $0.name == "fq" }?.value == text)
    }

    // MARK: The key

    @Test(arguments: ["0123456789abcdefABCDEF", "key+with/odd=chars&more"])
    func keyAppearsOnlyAsTheLastItemApiKeyEqualsKey(key: String) throws {
        let request = SearchRequest(query: "jury", filterQuery: "section_name:World", from: CalendarDay("2020-01-01"), page: 3)
        let url = try #require(request.url(base: SearchRequestTests.base, apiKey: key))
        let decoded = serverDecodedQuery(url)
        #expect(decoded.last?.name == "api-key")
        #expect(decoded.last?.value == key)
        #expect(decoded.filter { $0.value.contains(key) }.count == 1)
        #expect(!url.absoluteString.contains("REDACTED"))
    }

    @Test func redactedURLShowsREDACTEDInsteadOfTheKey() throws {
        let request = SearchRequest(query: "jury", from: CalendarDay("2020-01-01"), to: CalendarDay("2020-01-31"), sort: .oldest, page: 2)
        let redacted = request.redactedURL(base: SearchRequestTests.base)
        #expect(
            redacted == "https://api.nytimes.com/svc/search/v2/articlesearch.json"
                + "?q=jury&begin_date=20200101&end_date=20200131&sort=oldest&page=2&api-key=REDACTED")
        let withoutKey = try #require(request.url(base: SearchRequestTests.base, apiKey: nil))
        #expect(withoutKey.absoluteString == redacted)
        #expect(serverDecodedQuery(withoutKey).last?.value == "REDACTED")
    }

    @Test func urlWithTheKeyDiffersFromTheRedactedOneOnlyInTheKey() throws {
        let request = SearchRequest(query: "a \"b\" +c", filterQuery: "x:(\"y\" \"z\")", sort: .relevance, page: 100)
        let url = try #require(request.url(base: SearchRequestTests.base, apiKey: "SECRET"))
        #expect(
            url.absoluteString.replacingOccurrences(of: "api-key=SECRET", with: "api-key=REDACTED")
                == request.redactedURL(base: SearchRequestTests.base))
    }

    // MARK: Validation

    @Test(arguments: [0, 1, 50, 100])
    func pagesFrom0To100AreValid(page: Int) throws {
        try SearchRequest(page: page).validate()
    }

    @Test(arguments: [-1, 101, Int.min, Int.max])
    func pagesOutside0To100AreInvalid(page: Int) {
        #expect(throws: ClientError.invalidRequest(parameter: "page", reason: "\(page) is outside 0...100")) {
            try SearchRequest(page: page).validate()
        }
    }

    @Test func rangeEndingBeforeItBeginsIsInvalid() throws {
        let request = SearchRequest(from: CalendarDay("2024-01-02"), to: CalendarDay("2024-01-01"))
        #expect(throws: ClientError.invalidRequest(parameter: "--to", reason: "2024-01-01 is before --from 2024-01-02")) {
            try request.validate()
        }
        #expect(
            ClientError.invalidRequest(parameter: "--to", reason: "2024-01-01 is before --from 2024-01-02").errorDescription
                == "--to: 2024-01-01 is before --from 2024-01-02")
    }

    @Test func oneDayRangesAndOpenRangesAreValid() throws {
        try SearchRequest(from: CalendarDay("2024-01-01"), to: CalendarDay("2024-01-01")).validate()
        try SearchRequest(from: CalendarDay("2024-01-01")).validate()
        try SearchRequest(to: CalendarDay("1851-09-18")).validate()
        try SearchRequest().validate()
    }
}
