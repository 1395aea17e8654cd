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
