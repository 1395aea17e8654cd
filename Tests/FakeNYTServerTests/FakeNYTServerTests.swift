import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Tests of the fake NYT Article Search server, over real sockets with URLSession, and of the
// date-range corpus generator it is usually fed with.

// MARK: - Helpers

/// One HTTP answer.
struct Reply: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    /// A header, looked up without regard to case.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body parsed as JSON.
    func json() throws -> JSONValue {
        try JSONParser.parse([UInt8](body))
    }

    /// `response.docs` of a search answer.
    func docs() throws -> [JSONValue] {
        guard case .array(let docs)? = try json()["response"]?["docs"] else {
            Issue.record("no docs array in \(String(decoding: body, as: UTF8.self).prefix(300))")
            return []
        }
        return docs
    }

    /// The `_id`s of `response.docs`.
    func ids() throws -> [String] {
        try docs().map { $0["_id"]?.stringValue ?? "?" }
    }

    /// `response.meta.<name>` (or `response.metadata.<name>`) as an integer.
    func meta(_ name: String, envelope: String = "meta") throws -> Int? {
        guard case .number(let literal)? = try json()["response"]?[envelope]?[name] else { return nil }
        return Int(literal)
    }
}

/// A session that never caches and gives up after 30 s (room for a busy machine; no test waits for it).
let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    configuration.timeoutIntervalForResource = 30
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    return URLSession(configuration: configuration)
}()

/// Percent-encodes everything but unreserved characters (so `+` and `&` survive).
func encode(_ text: String) -> String {
    let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
}

/// GETs `path` on `server` with `query` (the key `test-key` is added unless `key` says otherwise).
func fetch(
    _ server: FakeNYTServer, _ query: [String: String] = [:], key: String? = "test-key",
    path: String = FakeNYTServer.searchPath
) async throws -> Reply {
    var parameters = query
    if let key { parameters["api-key"] = key }
    let queryText = parameters.sorted { $0.key < $1.key }.map { "\(encode($0.key))=\(encode($0.value))" }.joined(separator: "&")
    let url = try #require(URL(string: server.baseURL + path + (queryText.isEmpty ? "" : "?" + queryText)))
    let (data, response) = try await session.data(for: URLRequest(url: url))
    let http = try #require(response as? HTTPURLResponse)
    var headers: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        if let name = name as? String, let value = value as? String { headers[name] = value }
    }
    return Reply(status: http.statusCode, headers: headers, body: data)
}

/// A hand-made document with the fields the search looks at.
func document(
    _ id: String, _ pubDate: String, headline: String = "Plain Headline", abstract: String? = nil,
    snippet: String? = nil, lead: String? = nil, section: String = "World", desk: String? = "Foreign",
    material: String = "News", type: String = "article", source: String = "The New York Times"
) -> JSONValue {
    var members = [
        JSONMember(key: "_id", value: .string(id)),
        JSONMember(key: "pub_date", value: .string(pubDate)),
        JSONMember(
            key: "headline",
            value: .object(sorting: [
                JSONMember(key: "main", value: .string(headline)),
                JSONMember(key: "kicker", value: .null),
            ])),
        JSONMember(key: "section_name", value: .string(section)),
        JSONMember(key: "news_desk", value: desk.map { .string($0) } ?? .null),
        JSONMember(key: "type_of_material", value: .string(material)),
        JSONMember(key: "document_type", value: .string(type)),
        JSONMember(key: "source", value: .string(source)),
    ]
    if let abstract { members.append(JSONMember(key: "abstract", value: .string(abstract))) }
    if let snippet { members.append(JSONMember(key: "snippet", value: .string(snippet))) }
    if let lead { members.append(JSONMember(key: "lead_paragraph", value: .string(lead))) }
    return .object(sorting: members)
}

/// `count` simple documents `d00`, `d01`, ... one day apart from 2020-01-01.
func numberedDocuments(_ count: Int, prefix: String = "d") -> [JSONValue] {
    (0..<count).map { i in
        let day = 1 + i % 28
        let month = 1 + i / 28
        let date = String(format: "2020-%02d-%02dT12:00:00Z", month, day)
        return document(prefix + String(format: "%02d", i), date)
    }
}

/// The error a request failed with, or nil when it got an answer.
func failure(_ server: FakeNYTServer, _ query: [String: String] = [:]) async -> (any Error)? {
    do {
        _ = try await fetch(server, query)
        return nil
    } catch {
        return error
    }
}

// MARK: - Searching

@Suite("Fake NYT server: searching")
struct FakeNYTSearchTests {
    @Test func pagesHoldTenDocumentsWithTotalHitsAndOffset() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(25))
        let first = try await fetch(server)
        #expect(first.status == 200)
        #expect(first.header("Content-Type") == "application/json; charset=utf-8")
        #expect(try first.docs().count == 10)
        #expect(try first.meta("hits") == 25)
        #expect(try first.meta("offset") == 0)
        #expect(try first.meta("time") != nil)
        #expect(try first.json()["status"] == .string("OK"))
        #expect(try first.json()["copyright"] == .string(FakeNYTServer.copyright))
        let second = try await fetch(server, ["page": "1"])
        let third = try await fetch(server, ["page": "2"])
        #expect(try second.meta("offset") == 10)
        #expect(try third.docs().count == 5)
        #expect(try third.meta("offset") == 20)
        let all = try first.ids() + second.ids() + third.ids()
        #expect(Set(all).count == 25)
        #expect(all == all.sorted())  // relevance: a fixed order, by _id
    }

    @Test func pagePastTheEndIsEmptyButKeepsHits() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(25))
        let past = try await fetch(server, ["page": "3"])
        #expect(past.status == 200)
        #expect(try past.docs().isEmpty)
        #expect(try past.meta("hits") == 25)
        #expect(try past.meta("offset") == 30)
        let last = try await fetch(server, ["page": "100"])
        #expect(last.status == 200)
        #expect(try last.meta("offset") == 1000)
    }

    @Test(arguments: ["101", "-1", "abc", "1.5", ""])
    func pageOutsideZeroToHundredIsRejectedWith400(page: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(3))
        let reply = try await fetch(server, ["page": page])
        #expect(reply.status == 400)
        let body = try reply.json()
        #expect(body["status"] == .string("ERROR"))
        #expect(body["copyright"] == .string(FakeNYTServer.copyright))
        guard case .array(let errors)? = body["errors"] else {
            Issue.record("no errors array")
            return
        }
        #expect(errors.count == 1)
    }

    @Test func queryMatchesEveryWordCaseInsensitivelyAcrossTextFields() async throws {
        let server = try FakeNYTServer(documents: [
            document("a", "2020-01-01T00:00:00Z", headline: "Jury Weighs the Verdict"),
            document("b", "2020-01-01T00:00:00Z", headline: "Other", abstract: "the JURY was out", snippet: "a long verdict"),
            document("c", "2020-01-01T00:00:00Z", headline: "Other", lead: "Jurywork and verdicts"),
            document("d", "2020-01-01T00:00:00Z", headline: "Jury only"),
            document("e", "2020-01-01T00:00:00Z", headline: "Café Society in Zürich"),
        ])
        #expect(try await fetch(server, ["q": "jury verdict"]).ids() == ["a", "b", "c"])
        #expect(try await fetch(server, ["q": "VERDICT"]).meta("hits") == 3)
        #expect(try await fetch(server, ["q": "zürich café"]).ids() == ["e"])
        #expect(try await fetch(server, ["q": "nowhere"]).meta("hits") == 0)
        #expect(try await fetch(server, ["q": ""]).meta("hits") == 5)
        #expect(try await fetch(server, ["q": "  jury   only "]).ids() == ["d"])
    }

    @Test func filterQueryMatchesAnyOfTheListedValues() async throws {
        let server = try FakeNYTServer(documents: [
            document("a", "2020-01-01T00:00:00Z", section: "World", desk: "Foreign"),
            document("b", "2020-01-01T00:00:00Z", section: "Sports", desk: "Sports"),
            document("c", "2020-01-01T00:00:00Z", section: "Arts", desk: nil, material: "Review"),
            document("d", "2020-01-01T00:00:00Z", section: "U.S.", desk: "National", type: "multimedia", source: "AP"),
        ])
        #expect(try await fetch(server, ["fq": #"news_desk:("Sports" "Foreign")"#]).ids() == ["a", "b"])
        #expect(try await fetch(server, ["fq": #"section_name:"U.S.""#]).ids() == ["d"])
        #expect(try await fetch(server, ["fq": "type_of_material:Review"]).ids() == ["c"])
        #expect(try await fetch(server, ["fq": #"document_type:"multimedia" AND source:("AP")"#]).ids() == ["d"])
        #expect(try await fetch(server, ["fq": #"section_name:("World" "Sports") AND news_desk:"Sports""#]).ids() == ["b"])
        #expect(try await fetch(server, ["fq": #"section_name:"world""#]).ids() == [])  // exact, case-sensitive
        #expect(try await fetch(server, ["fq": "news_desk:Foreign", "q": "plain"]).ids() == ["a"])
    }

    @Test(arguments: [
        #"headline.main:"Jury""#, "section_name:(World)", #"section_name:"World" OR news_desk:"Foreign""#,
        #"section_name:"World"AND news_desk:"Foreign""#, "section_name:", #"pub_year:"2020""#, #"section_name:("World""#,
    ])
    func unsupportedFilterSyntaxIsRejectedWith400(fq: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let reply = try await fetch(server, ["fq": fq])
        #expect(reply.status == 400)
        #expect(try reply.json()["errors"] == .array([.string("Invalid fq: \(fq)")]))
    }

    @Test func dateRangeIsInclusiveAtBothEndsOnTheUTCDay() async throws {
        let server = try FakeNYTServer(documents: [
            document("before", "2019-12-31T23:59:59Z"),
            document("first", "2020-01-01T00:00:00Z"),
            document("firstOffset", "2020-01-01T23:59:59+0000"),
            document("last", "2020-01-02T23:59:59.999Z"),
            document("after", "2020-01-03T00:00:00+0000"),
        ])
        #expect(try await fetch(server, ["begin_date": "20200101", "end_date": "20200102"]).ids() == ["first", "firstOffset", "last"])
        #expect(try await fetch(server, ["begin_date": "20200102"]).ids() == ["after", "last"])
        #expect(try await fetch(server, ["end_date": "20191231"]).ids() == ["before"])
        #expect(try await fetch(server, ["begin_date": "20200103", "end_date": "20200103"]).ids() == ["after"])
    }

    @Test(arguments: ["2020-01-01", "20201301", "20200230", "2020011", "abcdefgh"])
    func invalidDateIsRejectedWith400(date: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        #expect(try await fetch(server, ["begin_date": date]).status == 400)
        let reply = try await fetch(server, ["end_date": date])
        #expect(reply.status == 400)
        #expect(try reply.json()["status"] == .string("ERROR"))
    }

    @Test func sortNewestAndOldestOrderByPublicationDateThenId() async throws {
        let server = try FakeNYTServer(documents: [
            document("m", "2020-03-01T00:00:00Z"),
            document("b", "2020-01-01T10:00:00+0000"),
            document("a", "2020-01-01T10:00:00Z"),
            document("z", "2021-07-04T00:00:00Z"),
            document("c", "2019-05-05T05:05:05+0000"),
        ])
        #expect(try await fetch(server, ["sort": "newest"]).ids() == ["z", "m", "a", "b", "c"])
        #expect(try await fetch(server, ["sort": "oldest"]).ids() == ["c", "a", "b", "m", "z"])
        #expect(try await fetch(server, ["sort": "relevance"]).ids() == ["a", "b", "c", "m", "z"])
        #expect(try await fetch(server).ids() == ["a", "b", "c", "m", "z"])
        #expect(try await fetch(server, ["sort": "random"]).status == 400)
    }

    @Test func paginationUnderNewestIsStableAndComplete() async throws {
        // Many documents share a date: ties are broken by _id, so pages neither repeat nor skip.
        let documents = (0..<35).map {
            document(String(format: "t%02d", $0), $0 % 2 == 0 ? "2020-01-01T00:00:00Z" : "2020-01-02T00:00:00Z")
        }
        let server = try FakeNYTServer(documents: documents)
        var seen: [String] = []
        for page in 0..<4 { seen += try await fetch(server, ["sort": "newest", "page": String(page)]).ids() }
        #expect(seen.count == 35)
        #expect(Set(seen).count == 35)
        #expect(Array(seen.prefix(3)) == ["t01", "t03", "t05"])
    }

    @Test func metadataEnvelopeNamesTheCountsMetadata() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12), envelope: .metadata)
        let reply = try await fetch(server, ["page": "1"])
        #expect(try reply.json()["response"]?["meta"] == nil)
        #expect(try reply.meta("hits", envelope: "metadata") == 12)
        #expect(try reply.meta("offset", envelope: "metadata") == 10)
        #expect(try reply.docs().count == 2)
    }

    @Test func documentsAreServedExactlyAsGiven() async throws {
        let corpus = ArticleGenerator.corpus(count: 30, seed: 7, from: "2019-01-01", to: "2019-12-31")
        let server = try FakeNYTServer(documents: corpus)
        let reply = try await fetch(server, ["sort": "oldest"])
        let served = try reply.docs()
        #expect(served == Array(corpus.prefix(10)))  // the corpus is in ascending date order
        let body = [UInt8](reply.body)
        for document in corpus.prefix(10) {
            let bytes = JSONWriter.compactBytes(document)
            #expect(body.firstRange(of: bytes) != nil)
        }
    }

    @Test func addGrowsTheResults() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(5, prefix: "a"))
        #expect(try await fetch(server).meta("hits") == 5)
        server.add(numberedDocuments(8, prefix: "b"))
        let reply = try await fetch(server, ["page": "1"])
        #expect(try reply.meta("hits") == 13)
        #expect(try reply.ids() == ["b05", "b06", "b07"])
    }

    @Test func unknownPathIsA404FaultAndNotRecorded() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let reply = try await fetch(server, path: "/svc/search/v2/nothing.json")
        #expect(reply.status == 404)
        guard case .string(let message)? = try reply.json()["fault"]?["faultstring"] else {
            Issue.record("no faultstring")
            return
        }
        #expect(message.hasPrefix("Resource not found"))
        #expect(server.requests.isEmpty)
    }
}

// MARK: - Keys and faults

@Suite("Fake NYT server: keys and faults")
struct FakeNYTFaultTests {
    @Test func wrongKeyIs401WithTheGatewayFaultBody() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2), apiKey: "right")
        let reply = try await fetch(server, key: "wrong")
        #expect(reply.status == 401)
        #expect(
            try reply.json()
                == JSONParser.parse(#"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#))
        #expect(try await fetch(server, key: "right").status == 200)
    }

    @Test func missingKeyIs401FailedToResolve() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let reply = try await fetch(server, key: nil)
        #expect(reply.status == 401)
        #expect(try reply.json()["fault"]?["faultstring"] == .string("Failed to resolve API Key variable request.queryparam.api-key"))
    }

    @Test func rateLimitedIs429WithQuotaBodyAndNoRetryAfter() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.rateLimited])
        let reply = try await fetch(server)
        #expect(reply.status == 429)
        #expect(reply.header("Retry-After") == nil)
        let body = try reply.json()
        #expect(body["fault"]?["detail"]?["errorcode"] == .string("policies.ratelimit.QuotaViolation"))
        let message = body["fault"]?["faultstring"]?.stringValue ?? ""
        #expect(message.hasPrefix("Rate limit quota violation. Quota limit  exceeded. Identifier : "))
        #expect(message.count == "Rate limit quota violation. Quota limit  exceeded. Identifier : ".count + 36)
        #expect(try await fetch(server).status == 200)  // one fault, one request
    }

    @Test func unauthorizedFaultIs401EvenWithTheRightKey() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.unauthorized])
        let reply = try await fetch(server)
        #expect(reply.status == 401)
        #expect(try reply.json()["fault"]?["detail"]?["errorcode"] == .string("oauth.v2.InvalidApiKey"))
    }

    @Test func serverErrorIs500WithJSONBody() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError])
        let reply = try await fetch(server)
        #expect(reply.status == 500)
        #expect(try reply.json()["fault"] != nil)
    }

    @Test func forbiddenHTMLIs403WithAnHTMLPage() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.forbiddenHTML])
        let reply = try await fetch(server)
        #expect(reply.status == 403)
        #expect(reply.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(String(decoding: reply.body, as: UTF8.self).contains("<html>"))
        #expect(throws: JSONSyntaxError.self) { try reply.json() }
    }

    @Test func slowAnswersAfterAtLeastTheGivenTime() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.slow(seconds: 1)])
        let clock = ContinuousClock()
        let start = clock.now
        let reply = try await fetch(server)
        let elapsed = clock.now - start
        #expect(elapsed >= .seconds(1))
        #expect(reply.status == 200)
        #expect(try reply.meta("hits") == 2)
    }

    @Test func truncatedBodyFailsOrComesShortOfContentLength() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12))
        server.enqueue([.truncated])
        do {
            let reply = try await fetch(server)
            let announced = Int(reply.header("Content-Length") ?? "") ?? Int.max
            #expect(reply.body.count < announced)
            #expect(throws: JSONSyntaxError.self) { try reply.json() }
        } catch {
            // URLSession noticed the connection closed early: that is the expected outcome on Linux.
        }
        #expect(server.requests.map(\.fault) == [.truncated])
        #expect(try await fetch(server).status == 200)
    }

    @Test func malformedIsA200WhoseBodyIsNotValidJSON() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12))
        server.enqueue([.malformed])
        let reply = try await fetch(server)
        #expect(reply.status == 200)
        #expect(reply.header("Content-Length") == String(reply.body.count))
        #expect(reply.body.count > 100)
        #expect(throws: JSONSyntaxError.self) { try reply.json() }
    }

    @Test func docsNullIsA200WithNullDocsAndZeroHits() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12))
        server.enqueue([.docsNull])
        let reply = try await fetch(server)
        #expect(reply.status == 200)
        #expect(try reply.json()["response"]?["docs"] == .null)
        #expect(try reply.meta("hits") == 0)
    }

    @Test func dropConnectionMakesTheRequestFail() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.dropConnection])
        let error = await failure(server)
        #expect(error != nil)
        #expect(server.requests.map(\.fault) == [.dropConnection])
        #expect(try await fetch(server).status == 200)
    }

    @Test func faultsApplyInOrderToSearchRequestsOnly() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError, .rateLimited])
        #expect(try await fetch(server, path: "/elsewhere").status == 404)
        #expect(try await fetch(server).status == 500)
        #expect(try await fetch(server, key: "wrong").status == 429)  // the fault comes before the key check
        #expect(try await fetch(server).status == 200)
        #expect(server.requests.map(\.fault) == [.serverError, .rateLimited, nil])
    }

    @Test func requestsAreRecordedWithDecodedQuery() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError])
        _ = try await fetch(server, ["q": "café & crème+brûlée", "fq": #"news_desk:("Sports" "Foreign")"#, "page": "0"])
        _ = try await fetch(server, ["begin_date": "20200101"])
        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.first?.path == FakeNYTServer.searchPath)
        #expect(
            requests.first?.query == [
                "q": "café & crème+brûlée", "fq": #"news_desk:("Sports" "Foreign")"#, "page": "0",
                "api-key": "test-key",
            ])
        #expect(requests.first?.fault == .serverError)
        #expect(requests.last?.query["begin_date"] == "20200101")
        #expect(requests.last?.fault == nil)
    }

    @Test func stopRefusesLaterConnectionsAndIsIdempotent() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        #expect(try await fetch(server).status == 200)
        server.stop()
        server.stop()
        let error = await failure(server)
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test func stopDoesNotWaitForASlowAnswer() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.slow(seconds: 120)])
        let pending = Task { await failure(server) }
        // The request is recorded before the slow wait. Polls are counted rather than timed: while
        // the parallel tests' blocking work holds every thread of the pool, neither this loop nor
        // the fetch runs, and a clock would run out without either having had a turn.
        for _ in 0..<6_000 where server.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        if server.requests.isEmpty {
            server.stop()
            Issue.record("no request arrived after 6,000 polls; the fetch ended with \(String(describing: await pending.value))")
            return
        }
        let clock = ContinuousClock()
        let start = clock.now
        server.stop()
        // Far below the 120 s answer, with room for a busy machine.
        #expect(clock.now - start < .seconds(10))
        let error = await pending.value
        // The server closed the connection ("empty reply"); the client did not give up on its own.
        let code = try #require(error as? URLError, "\(String(describing: error))").code
        #expect(code != .timedOut, "\(String(describing: error))")
    }

    @Test func freeingTheServerStopsIt() async throws {
        var server: FakeNYTServer? = try FakeNYTServer(documents: numberedDocuments(2))
        let url = try #require(server.map { URL(string: $0.baseURL + FakeNYTServer.searchPath + "?api-key=test-key") } ?? nil)
        server = nil
        do {
            _ = try await session.data(for: URLRequest(url: url))
            Issue.record("a freed server still answered")
        } catch {
            #expect((error as? URLError)?.code == .cannotConnectToHost)
        }
    }

    @Test func aTakenPortThrowsStartError() throws {
        let first = try FakeNYTServer(documents: [])
        #expect(throws: FakeNYTServer.StartError.self) {
            _ = try FakeNYTServer(documents: [], port: UInt16(first.port))
        }
    }
}

// MARK: - The archive

/// The Archive API body the fake server should send for `docs` (in this order): compact, `docs`
/// before `meta`, the archive's copyright.
func archiveBody(_ docs: [JSONValue], meta: String = "meta") -> [UInt8] {
    var out = Array(#"{"copyright":"Copyright (c) 2020 The New York Times Company. All Rights Reserved.","response":{"docs":["#.utf8)
    for (number, document) in docs.enumerated() {
        if number > 0 { out.append(UInt8(ascii: ",")) }
        JSONWriter.writeCompact(document, into: &out)
    }
    out.append(contentsOf: #"],"\#(meta)":{"hits":\#(docs.count)}}}"#.utf8)
    return out
}

/// Where a served body first differs from the expected bytes, or nil when they are equal (a
/// short message: comparing megabytes with `==` inside `#expect` would describe every byte).
func firstDifference(_ served: Data, _ expected: [UInt8]) -> String? {
    let bytes = [UInt8](served)
    guard bytes != expected else { return nil }
    let at = (0..<min(bytes.count, expected.count)).first { bytes[$0] != expected[$0] } ?? min(bytes.count, expected.count)
    func around(_ data: [UInt8]) -> String { String(decoding: data[max(0, at - 60)..<min(data.count, at + 60)], as: UTF8.self) }
    return "\(bytes.count) bytes served, \(expected.count) expected, first difference at byte \(at): "
        + "served …\(around(bytes))… expected …\(around(expected))…"
}

/// Documents in the archive's order: by `pub_date` instant, then by `_id` (UTF-8 bytes); undated ones dropped.
func inMonthOrder(_ docs: [JSONValue]) -> [JSONValue] {
    let dated = docs.compactMap { document -> (Int64, [UInt8], JSONValue)? in
        guard let instant = ISODate.instant(of: document["pub_date"]?.stringValue ?? "") else { return nil }
        return (instant, Array((document["_id"]?.stringValue ?? "").utf8), document)
    }
    return dated.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1.lexicographicallyPrecedes($1.1) }.map(\.2)
}

/// GETs the archive's answer for a month.
func fetchMonth(_ server: FakeNYTServer, _ year: Int, _ month: Int, key: String? = "test-key") async throws -> Reply {
    try await fetch(server, key: key, path: FakeNYTServer.archivePath(year: year, month: month))
}

/// The real answer for September and October 1978, as quoted in nytimes/public_api_specs#42
/// (nyt-samples/10_archive_1978_09_strike_hits0_verbatim_from_issue.json, 125 bytes).
let strikeBody =
    #"{"copyright":"Copyright (c) 2013 The New York Times Company.  All Rights Reserved.","response":{"meta":{"hits":0},"docs":[]}}"#

/// The current UTC year and month.
func currentMonth() -> (year: Int, month: Int) {
    let now = Timestamp.now().milliseconds
    let (year, month, _) = ISODate.civilFromDays(now / 86_400_000)
    return (Int(year), Int(month))
}

@Suite("Fake NYT server: the archive")
struct FakeNYTArchiveTests {
    @Test func fullCropSetsGoToTheChosenShareOfTheDocumentsWithCropsAndLeaveTheRestAlone() throws {
        let corpus = ArticleGenerator.corpus(count: 2_000, seed: 37, from: "2019-01-01", to: "2019-01-31")
        #expect(ArticleGenerator.withFullCropSets(corpus, percent: 0, seed: 37) == corpus)
        let cropped = ArticleGenerator.withFullCropSets(corpus, percent: 25, seed: 37)
        #expect(cropped == ArticleGenerator.withFullCropSets(corpus, percent: 25, seed: 37))  // depends only on the seed
        var withCrops = 0
        var changed = 0
        for (before, after) in zip(corpus, cropped) {
            guard case .array(let listed)? = before["multimedia"], listed.first?["crop_name"] != nil else {
                #expect(after == before)
                continue
            }
            withCrops += 1
            if after == before { continue }
            changed += 1
            guard case .array(let crops)? = after["multimedia"] else {
                Issue.record("multimedia is no longer an array")
                continue
            }
            #expect(crops.count == 68)
            // The crops listed before keep their URLs, in the same places; every crop is an image.
            for (index, crop) in listed.enumerated() { #expect(crops[index]["url"] == crop["url"]) }
            #expect(crops.allSatisfy { $0["type"] == .string("image") && $0["legacy"]?.isObject == true })
            // Nothing else of the document changes.
            #expect(after.setting("multimedia", to: .array(listed)) == before)
        }
        #expect(withCrops > 300)
        // About a quarter of them (binomial: well inside 15%-35%).
        #expect(Double(changed) > 0.15 * Double(withCrops) && Double(changed) < 0.35 * Double(withCrops), "\(changed) of \(withCrops)")
        // The bench's month: 10% take it past 20 MB at 8,000 documents; here the bytes grow accordingly.
        let before = corpus.reduce(0) { $0 + JSONWriter.compactBytes($1).count }
        let after = cropped.reduce(0) { $0 + JSONWriter.compactBytes($1).count }
        #expect(after > before + changed * 15_000)
    }

    @Test func archivePathHasNoLeadingZero() {
        #expect(FakeNYTServer.archivePath(year: 2019, month: 1) == "/svc/archive/v1/2019/1.json")
        #expect(FakeNYTServer.archivePath(year: 1851, month: 12) == "/svc/archive/v1/1851/12.json")
    }

    @Test func aMonthAnswersEachOfItsDocumentsOnceInDateOrder() async throws {
        let corpus = ArticleGenerator.corpus(count: 300, seed: 31, from: "2019-01-15", to: "2019-03-15")
        let server = try FakeNYTServer(documents: corpus)
        // Added out of order, with ties, and one whose local date is January but UTC date February.
        let added = [
            document("zz", "2019-02-10T00:00:00Z"), document("aa", "2019-02-10T00:00:00+0000"),
            document("tz", "2019-01-31T22:00:00-0500"), document("early", "2019-02-01T00:00:00Z"),
            document("march", "2019-02-28T23:30:00-0100"), document("undated", "someday"),
        ]
        server.add(added)
        let all = (corpus + added).filter { ISODate.instant(of: $0["pub_date"]?.stringValue ?? "") != nil }
        func inMonth(_ month: String) -> [JSONValue] {
            let first = ISODate.instant(of: month + "-01") ?? 0
            let next = ISODate.instant(of: month == "2019-02" ? "2019-03-01" : "2019-02-01") ?? 0
            return inMonthOrder(
                all.filter {
                    let instant = ISODate.instant(of: $0["pub_date"]?.stringValue ?? "") ?? -1
                    return instant >= first && instant < next
                })
        }
        let february = inMonth("2019-02")
        #expect(february.count > 100)
        let reply = try await fetchMonth(server, 2019, 2)
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
        #expect(firstDifference(reply.body, archiveBody(february)) == nil)
        let ids = try reply.ids()
        #expect(ids.count == Set(ids).count)
        #expect(try reply.meta("hits") == ids.count)
        #expect(ids.contains("tz") && ids.contains("early") && !ids.contains("march") && !ids.contains("undated"))
        #expect((ids.firstIndex(of: "aa") ?? Int.max) < (ids.firstIndex(of: "zz") ?? -1))  // a tie: by _id
        // January: the corpus's own documents, from the 15th on (and "tz" is not among them).
        let january = try await fetchMonth(server, 2019, 1)
        #expect(firstDifference(january.body, archiveBody(inMonth("2019-01"))) == nil)
        #expect(server.requests.map(\.path) == ["/svc/archive/v1/2019/2.json", "/svc/archive/v1/2019/1.json"])
        #expect(server.requests.first?.query["api-key"] == "test-key")
    }

    @Test func aMonthWithoutDocumentsAnswersHitsZeroAndNoDocs() async throws {
        let server = try FakeNYTServer(documents: ArticleGenerator.corpus(count: 50, seed: 32, from: "2019-01-01", to: "2019-01-31"))
        for (year, month) in [(2019, 2), (1851, 1), (1851, 9), (2000, 12)] {
            let reply = try await fetchMonth(server, year, month)
            #expect(reply.status == 200)
            #expect(firstDifference(reply.body, archiveBody([])) == nil)
            #expect(try reply.meta("hits") == 0)
            #expect(try reply.docs().isEmpty)
        }
        let now = currentMonth()
        #expect(try await fetchMonth(server, now.year, now.month).status == 200)  // a month that has begun
    }

    @Test func theMetadataEnvelopeNamesTheCountMetadata() async throws {
        let corpus = ArticleGenerator.corpus(count: 20, seed: 33, from: "2025-03-01", to: "2025-03-31")
        let server = try FakeNYTServer(documents: corpus, envelope: .metadata)
        let reply = try await fetchMonth(server, 2025, 3)
        #expect(firstDifference(reply.body, archiveBody(inMonthOrder(corpus), meta: "metadata")) == nil)
        #expect(try reply.meta("hits", envelope: "metadata") == 20)
    }

    @Test func theStrikeMonthsOf1978AnswerTheRealBodyWhateverTheCorpusHolds() async throws {
        // The generated corpus has documents in every month from August to November 1978.
        let corpus = ArticleGenerator.corpus(count: 400, seed: 34, from: "1978-08-01", to: "1978-11-30")
        let server = try FakeNYTServer(documents: corpus)
        #expect(corpus.contains { ($0["pub_date"]?.stringValue ?? "").hasPrefix("1978-09-") })
        #expect(FakeNYTServer.strikeMonthBody == Array(strikeBody.utf8))
        #expect(strikeBody.utf8.count == 125)
        for month in [9, 10] {
            let reply = try await fetchMonth(server, 1978, month)
            #expect(reply.status == 200)
            #expect(String(decoding: reply.body, as: UTF8.self) == strikeBody)
        }
        #expect((try await fetchMonth(server, 1978, 8).meta("hits") ?? 0) > 50)
        #expect((try await fetchMonth(server, 1978, 11).meta("hits") ?? 0) > 50)
        #expect(try await fetchMonth(server, 1978, 9, key: "wrong").status == 401)  // the key is still checked
    }

    @Test(arguments: [
        "/svc/archive/v1/2019/01.json", "/svc/archive/v1/2019/00.json", "/svc/archive/v1/19/1.json", "/svc/archive/v1/2019/1",
        "/svc/archive/v1/2019/1.json/more", "/svc/archive/v1/2019/-1.json", "/svc/archive/v1/2019.json", "/svc/archive/v1/2019/.json",
        "/svc/archive/v2/2019/1.json", "/svc/archive/v1/2019/100.json", "/svc/archive/v1/20190/1.json", "/svc/archive/v1/2019/1.JSON",
        "/svc/archive/v1/2019/1x.json", "/svc/archive/v1/+201/1.json", "/svc/archive/v1//2019/1.json",
    ])
    func aPathThatNamesNoMonthIsA404AndIsNotRecorded(path: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError])
        let reply = try await fetch(server, path: path)
        #expect(reply.status == 404)
        #expect((try reply.json()["fault"]?["faultstring"]?.stringValue ?? "").hasPrefix("Resource not found"))
        #expect(server.requests.isEmpty)
        #expect(try await fetchMonth(server, 2020, 1).status == 500)  // the fault was left for the next real request
    }

    @Test func aMonthTheAPIRefusesIsA400WithTheErrorsBody() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let now = currentMonth()
        let refused =
            [(2019, 13), (2019, 0), (2019, 99), (1850, 12), (1000, 1), (now.year + 1, 1)]
            + [now.month == 12 ? (now.year + 1, 1) : (now.year, now.month + 1)]
        for (year, month) in refused {
            let reply = try await fetchMonth(server, year, month)
            #expect(reply.status == 400, "\(year)/\(month)")
            let body = try reply.json()
            #expect(body["status"] == .string("ERROR"))
            guard case .array(let errors)? = body["errors"], errors.count == 1 else {
                Issue.record("no errors array for \(year)/\(month)")
                continue
            }
        }
        #expect(
            try await fetchMonth(server, 2019, 13).json()["errors"]
                == .array([.string("Invalid month: 13. month must be an integer from 1 to 12")]))
        #expect(server.requests.count == refused.count + 1)  // recorded: they are API requests
    }

    @Test func aMissingOrWrongKeyIs401WithTheGatewaysBodies() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2), apiKey: "right")
        let missing = try await fetchMonth(server, 2020, 1, key: nil)
        #expect(missing.status == 401)
        #expect(try missing.json()["fault"]?["faultstring"] == .string("Failed to resolve API Key variable request.queryparam.api-key"))
        let wrong = try await fetchMonth(server, 2020, 1, key: "wrong")
        #expect(wrong.status == 401)
        #expect(
            try wrong.json()
                == JSONParser.parse(#"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#))
        #expect(try await fetchMonth(server, 2019, 13, key: "wrong").status == 401)  // the key comes before the month
        #expect(try await fetchMonth(server, 2020, 1, key: "right").meta("hits") == 2)
    }

    @Test func faultsApplyToArchiveRequestsInTheSameQueueAsSearches() async throws {
        let corpus = ArticleGenerator.corpus(count: 40, seed: 35, from: "2019-05-01", to: "2019-05-31")
        let server = try FakeNYTServer(documents: corpus)
        server.enqueue([.malformed, .rateLimited, .serverError, .forbiddenHTML, .unauthorized, .docsNull, .slow(seconds: 0.2)])
        let full = archiveBody(inMonthOrder(corpus))

        let malformed = try await fetchMonth(server, 2019, 5)
        #expect(malformed.status == 200)
        #expect(malformed.header("Content-Length") == String(malformed.body.count))
        #expect(firstDifference(malformed.body, Array(full.prefix(full.count / 2))) == nil)  // the first half of the real answer
        #expect(throws: JSONSyntaxError.self) { try malformed.json() }

        #expect(try await fetchMonth(server, 2019, 5).status == 429)
        #expect(try await fetch(server).status == 500)  // a search takes the next fault
        #expect(try await fetchMonth(server, 2019, 5).status == 403)
        #expect(try await fetchMonth(server, 2019, 5).status == 401)
        let null = try await fetchMonth(server, 2019, 5)
        #expect(null.status == 200)
        #expect(try null.json()["response"]?["docs"] == .null)
        #expect(try null.json()["copyright"] == .string(FakeNYTServer.archiveCopyright))
        #expect(try null.meta("hits") == 0)
        let slow = try await fetchMonth(server, 2019, 5)
        #expect(firstDifference(slow.body, full) == nil)
        #expect(firstDifference(try await fetchMonth(server, 2019, 5).body, full) == nil)
        #expect(
            server.requests.map(\.fault) == [
                .malformed, .rateLimited, .serverError, .forbiddenHTML, .unauthorized, .docsNull, .slow(seconds: 0.2), nil,
            ])
        #expect(server.requests.map(\.path).filter { $0 == FakeNYTServer.searchPath }.count == 1)
    }

    @Test func aTruncatedOrDroppedArchiveAnswerFails() async throws {
        let corpus = ArticleGenerator.corpus(count: 200, seed: 36, from: "2019-05-01", to: "2019-05-31")
        let server = try FakeNYTServer(documents: corpus)
        server.enqueue([.truncated, .dropConnection])
        do {
            let reply = try await fetchMonth(server, 2019, 5)
            #expect(reply.body.count < Int(reply.header("Content-Length") ?? "") ?? Int.max)
        } catch {
            // URLSession noticed the connection closed early: the expected outcome on Linux.
        }
        do {
            _ = try await fetchMonth(server, 2019, 5)
            Issue.record("a dropped connection gave an answer")
        } catch {}
        #expect(firstDifference(try await fetchMonth(server, 2019, 5).body, archiveBody(inMonthOrder(corpus))) == nil)
        #expect(server.requests.map(\.fault) == [.truncated, .dropConnection, nil])
    }

    @Test func aModernMonthOf8000DocumentsIsAtLeast16MB() async throws {
        let corpus = ArticleGenerator.corpus(count: 8000, seed: 5, from: "2019-01-01", to: "2019-01-31")
        let server = try FakeNYTServer(documents: corpus)
        let reply = try await fetchMonth(server, 2019, 1)
        #expect(reply.status == 200)
        #expect(reply.body.count >= 16_000_000, "\(reply.body.count) bytes")
        #expect(firstDifference(reply.body, archiveBody(inMonthOrder(corpus))) == nil)  // every document, once, in order, hits 8000
    }
}

// MARK: - The corpus generator

@Suite("ArticleGenerator.corpus")
struct ArticleGeneratorCorpusTests {
    @Test func publicationDatesFallWithinTheRangeInTheShapesFormat() throws {
        let corpus = ArticleGenerator.corpus(count: 500, seed: 11, from: "2024-02-28", to: "2024-03-02")
        #expect(corpus.count == 500)
        let first = try #require(ISODate.interval(of: "2024-02-28")?.start)
        let end = try #require(ISODate.interval(of: "2024-03-02")?.end)
        var formats: Set<String> = []
        var days: Set<String> = []
        for document in corpus {
            let date = try #require(document["pub_date"]?.stringValue)
            let instant = try #require(ISODate.instant(of: date), "unparseable pub_date \(date)")
            #expect(instant >= first && instant < end, "\(date) out of range")
            formats.insert(date.hasSuffix("+0000") ? "+0000" : date.hasSuffix("Z") ? "Z" : date)
            days.insert(String(date.prefix(10)))
            // The 2019 shape (it has `score`) keeps +0000; the others end in Z.
            #expect(date.hasSuffix(document["score"] != nil ? "+0000" : "Z"))
            if let url = document["web_url"]?.stringValue {
                #expect(url.contains("/" + date.prefix(10).replacingOccurrences(of: "-", with: "/") + "/"), "\(url) vs \(date)")
            }
        }
        #expect(formats == ["+0000", "Z"])
        #expect(days == ["2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02"])  // spread over every day
    }

    @Test func identifiersAreDistinctWithinASeedAndAcrossSeeds() {
        let one = ArticleGenerator.corpus(count: 2000, seed: 1, from: "2000-01-01", to: "2025-12-31")
        let two = ArticleGenerator.corpus(count: 2000, seed: 2, from: "2000-01-01", to: "2025-12-31")
        let ids = (one + two).compactMap { $0["_id"]?.stringValue }
        #expect(ids.count == 4000)
        #expect(Set(ids).count == 4000)
    }

    @Test func corpusIsDeterministicAndKeepsTheGeneratorsDocuments() {
        let corpus = ArticleGenerator.corpus(count: 50, seed: 5, from: "2010-06-01", to: "2010-06-30")
        #expect(corpus == ArticleGenerator.corpus(count: 50, seed: 5, from: "2010-06-01", to: "2010-06-30"))
        var generator = ArticleGenerator(seed: 5)
        let plain = generator.documents(50)
        #expect(corpus.map { $0["_id"] } == plain.map { $0["_id"] })
        #expect(corpus.map { $0["headline"] } == plain.map { $0["headline"] })
    }

    @Test func aDayRangeOfOneDayAndReversedOrInvalidBoundsStillGiveValidDates() throws {
        for date in ArticleGenerator.corpus(count: 40, seed: 3, from: "2021-07-04", to: "2021-07-04").compactMap({
            $0["pub_date"]?.stringValue
        }) {
            #expect(date.hasPrefix("2021-07-04T"))
        }
        let reversed = ArticleGenerator.corpus(count: 20, seed: 3, from: "2021-07-05", to: "2021-07-04")
        #expect(reversed.allSatisfy { ($0["pub_date"]?.stringValue ?? "").hasPrefix("2021-07-0") })
        let invalid = ArticleGenerator.corpus(count: 20, seed: 3, from: "not a day", to: "2021-02-30")
        #expect(invalid.count == 20)
        #expect(ArticleGenerator.corpus(count: 0, seed: 3, from: "2021-01-01", to: "2021-01-02").isEmpty)
        #expect(ArticleGenerator.corpus(count: -5, seed: 3, from: "2021-01-01", to: "2021-01-02").isEmpty)
        #expect(ArticleGenerator.startOfDay("2021-02-30") == nil)
        #expect(ArticleGenerator.startOfDay("1970-01-02") == 86_400_000)
    }

    @Test func documentsBefore1981TakeThePrintArchiveShape() throws {
        // February 1963, as the real month (nyt-samples/14_archive_1963_02_strike_era_3012docs_reserialized.json).
        let corpus = ArticleGenerator.corpus(count: 3_012, seed: 12, from: "1963-02-01", to: "1963-02-28")
        let headlineKeys: Set<String> = ["main", "kicker", "content_kicker", "print_headline", "name", "seo", "sub"]
        let personKeys: Set<String> = ["firstname", "middlename", "lastname", "qualifier", "title", "role", "organization", "rank"]
        let keywordNames: Set<String> = ["subject", "persons", "glocations", "organizations", "creative_works"]
        func keys(_ value: JSONValue?) -> Set<String> {
            guard case .object(let members)? = value else { return [] }
            return Set(members.map(\.key))
        }
        var reviews = 0
        var printSections = 0
        var withoutKeywords = 0
        for document in corpus {
            let id = try #require(document["_id"]?.stringValue)
            #expect(id.hasPrefix("nyt://article/") && id.utf8.count == "nyt://article/".utf8.count + 36, "\(id)")
            #expect(document["uri"] == document["_id"])
            #expect(document["section_name"] == .string("Archives"))
            #expect(document["multimedia"] == .array([]))
            #expect(document["subsection_name"] == nil)
            #expect(document["source"] == .string("The New York Times"))
            #expect(document["document_type"] == .string("article"))
            let date = try #require(document["pub_date"]?.stringValue)
            #expect(date.hasPrefix("1963-02-") && date.hasSuffix("T05:00:00+0000") && date.utf8.count == 24, "\(date)")
            let url = try #require(document["web_url"]?.stringValue)
            #expect(url.hasPrefix("https://www.nytimes.com/1963/02/\(date.dropFirst(8).prefix(2))/archives/") && url.hasSuffix(".html"))
            #expect(keys(document["headline"]) == headlineKeys)
            #expect(document["headline"]?["print_headline"] == document["headline"]?["main"])
            #expect(keys(document["byline"]) == ["original", "person", "organization"])
            if case .array(let persons)? = document["byline"]?["person"] {
                for person in persons { #expect(keys(person) == personKeys) }
            }
            guard case .array(let keywords)? = document["keywords"] else {
                Issue.record("keywords is not an array in \(id)")
                continue
            }
            if keywords.isEmpty { withoutKeywords += 1 }
            for keyword in keywords {
                #expect(keys(keyword) == ["name", "value", "rank", "major"])
                #expect(keywordNames.contains(keyword["name"]?.stringValue ?? ""))
                #expect(keyword["major"] == .string("N"))
                guard case .number(_)? = keyword["rank"] else {
                    Issue.record("rank is not a number in \(id)")
                    continue
                }
            }
            if document["print_section"] != nil { printSections += 1 }
            if document["type_of_material"] == .string("Review") {
                reviews += 1
                #expect(document["news_desk"] == .string(""))
                guard case .number(let words)? = document["word_count"], let count = Int(words) else {
                    Issue.record("no word_count in \(id)")
                    continue
                }
                #expect(count > 0)
                #expect(document["lead_paragraph"] == document["abstract"])
            } else {
                #expect(document["type_of_material"] == .string("Archives"))
                #expect(document["news_desk"] == .string("None"))
                #expect(document["word_count"] == .number("0"))
                #expect(document["lead_paragraph"] == .string(""))
            }
        }
        #expect(Set(corpus.compactMap { $0["_id"]?.stringValue }).count == corpus.count)
        #expect(reviews > 0 && reviews < 40, "\(reviews) reviews")  // 13 of 3,012 in the real month
        #expect(printSections > 0 && printSections < corpus.count / 2, "\(printSections) print sections")  // 928 of 3,012
        #expect(withoutKeywords > corpus.count / 5 && withoutKeywords < corpus.count / 2)  // 1,158 of 3,012
        #expect(corpus == ArticleGenerator.corpus(count: 3_012, seed: 12, from: "1963-02-01", to: "1963-02-28"))
    }

    @Test func documentsFrom1981OnAreUnchangedByTheArchiveEraBeforeThem() throws {
        // A range across the end of the era: documents of 1980 are in the archive shape, those of
        // 1981 are the generator's, byte for byte what the generator gave before the archive shape
        // existed (pinned from that code).
        let corpus = ArticleGenerator.corpus(count: 400, seed: 9, from: "1980-07-01", to: "1981-06-30")
        let end = try #require(ISODate.instant(of: "1981-01-01"))
        var modern: [UInt8] = []
        var modernCount = 0
        for document in corpus {
            let instant = try #require(ISODate.instant(of: document["pub_date"]?.stringValue ?? ""))
            if instant < end {
                #expect(document["section_name"] == .string("Archives"))
                #expect(document["uri"] == document["_id"])
            } else {
                #expect(document["section_name"] != .string("Archives"))
                JSONWriter.writeCompact(document, into: &modern)
                modern.append(0x0A)
                modernCount += 1
            }
        }
        #expect(modernCount == 198)
        #expect(FNV1a64.hex(FNV1a64.hash(modern)) == "7b05282954254460")
        var generator = ArticleGenerator(seed: 9)
        #expect(corpus.map { $0["headline"]?["main"] } == generator.documents(400).map { $0["headline"]?["main"] })
    }

    @Test func serverDateFilterAgreesWithCorpusDates() async throws {
        let corpus = ArticleGenerator.corpus(count: 120, seed: 21, from: "2018-01-01", to: "2018-12-31")
        let server = try FakeNYTServer(documents: corpus)
        let inMarch = corpus.filter { ($0["pub_date"]?.stringValue ?? "").hasPrefix("2018-03-") }.count
        #expect(inMarch > 0)
        #expect(try await fetch(server, ["begin_date": "20180301", "end_date": "20180331"]).meta("hits") == inMarch)
    }
}

// MARK: - The generator's byte stream

/// Pins the generator's output: the benchmark and many tests rely on a seed giving the same bytes
/// forever, so any change to the order or number of its random draws, or to what it writes, fails
/// here. The constants were recorded from the generator before its shape builders were split up; a
/// deliberate change of the byte stream must update them (and says so in its commit).
@Suite("ArticleGenerator byte stream")
struct ArticleGeneratorByteStreamTests {
    @Test func theFirst3000DocumentsOfSeed3HaveTheirPinnedHash() {
        let lines = ArticleGenerator.jsonLines(count: 3_000, seed: 3)
        #expect(lines.count == 6_199_125)
        #expect(FNV1a64.hex(FNV1a64.hash(lines)) == "f6b58740f526ac20")
    }

    @Test func aDatedCorpusHasItsPinnedHash() {
        var out: [UInt8] = []
        for document in ArticleGenerator.corpus(count: 300, seed: 3, from: "2019-01-01", to: "2020-12-31") {
            JSONWriter.writeCompact(document, into: &out)
            out.append(0x0A)
        }
        #expect(FNV1a64.hex(FNV1a64.hash(out)) == "30b85eda7820a416")
    }
}

// MARK: - The fake-nyt program

/// The built `fake-nyt`, found beside the running test executable (SwiftPM puts every product of a
/// build in one folder), or nil.
let fakeNYTBinary: String? = {
    var folders: [URL] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        folders.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
    }
    if let first = CommandLine.arguments.first, first.contains("/") {
        folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
    }
    for start in folders {
        var folder = start
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("fake-nyt").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
    }
    return nil
}()

@Suite("fake-nyt program", .enabled(if: fakeNYTBinary != nil, "fake-nyt is not built beside the tests"))
struct FakeNYTProgramTests {
    /// Reads standard output up to the first newline.
    static func firstLine(of handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        while !bytes.contains(0x0A) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes.append(contentsOf: chunk)
        }
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    @Test func programServesPrintsItsAddressAndStopsOnSIGTERM() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(fakeNYTBinary))
        process.arguments = [
            "--docs", "25", "--seed", "4", "--from", "2021-01-01", "--to", "2021-01-31", "--key", "k",
            "--envelope", "metadata", "--fault", "429,docsnull",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = Self.firstLine(of: output.fileHandleForReading)
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        let base = String(line.dropFirst("listening on ".count))
        func get(_ query: String) async throws -> (Int, JSONValue?) {
            let url = try #require(URL(string: base + FakeNYTServer.searchPath + "?" + query))
            let (data, response) = try await session.data(for: URLRequest(url: url))
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONParser.parse([UInt8](data)))
        }
        #expect(try await get("api-key=k").0 == 429)
        #expect(try await get("api-key=k").1?["response"]?["docs"] == .null)
        let (status, body) = try await get("api-key=k&begin_date=20210101&end_date=20210131")
        #expect(status == 200)
        #expect(body?["response"]?["metadata"]?["hits"] == .number("25"))
        #expect(try await get("api-key=other").0 == 401)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test func programServesTheArchiveWithFaultsBeforeTheFirstRequests() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(fakeNYTBinary))
        process.arguments = ["--docs", "30", "--seed", "6", "--from", "1963-02-01", "--to", "1963-02-28", "--fault", "malformed"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let line = Self.firstLine(of: output.fileHandleForReading)
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        let url = try #require(URL(string: String(line.dropFirst("listening on ".count)) + "/svc/archive/v1/1963/2.json?api-key=test-key"))
        let (cut, first) = try await session.data(for: URLRequest(url: url))
        #expect((first as? HTTPURLResponse)?.statusCode == 200)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([UInt8](cut)) }
        let (data, _) = try await session.data(for: URLRequest(url: url))
        let body = try JSONParser.parse([UInt8](data))
        #expect(body["response"]?["meta"]?["hits"] == .number("30"))
        guard case .array(let docs)? = body["response"]?["docs"] else {
            Issue.record("no docs")
            return
        }
        #expect(docs.count == 30)
        #expect(docs.allSatisfy { $0["section_name"] == .string("Archives") && $0["news_desk"] != nil })
    }

    @Test(arguments: [
        ["--bogus"], ["--port"], ["--docs", "many"], ["--from", "2021-13-01"], ["--fault", "418"],
        ["--envelope", "json"], ["--from", "2021-02-01", "--to", "2021-01-01"],
    ])
    func badUsageExits64WithOneLineOnStandardError(arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(fakeNYTBinary))
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 64)
        #expect(text.split(separator: "\n").count == 1, "\(text)")
    }
}
