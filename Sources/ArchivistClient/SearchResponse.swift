import ArchivistBase
import Foundation

/// One page of an Article Search response: the hit count and the documents exactly as received.
///
/// Accepts every schema the API has used: `response.meta` or (2025) `response.metadata`, and
/// `response.docs` as an array, `null` or absent (an empty page). A page is all or nothing: one
/// document that is not an object or has no `_id` fails the whole page, so the caller stores
/// nothing from it.
public struct SearchResponse: Sendable, Equatable {
    /// The total number of hits the API reports for the query (`response.meta.hits` or
    /// `response.metadata.hits`).
    public var hits: Int
    /// The offset of the first document of this page, when the response says (`meta.offset`).
    public var offset: Int?
    /// The documents as received (raw JSON values, every key kept, `null`s and number literals
    /// such as `0.0` included), in the response's order. This is what gets stored.
    public var documents: [JSONValue]
    /// The typed view of each document, in the same order as ``documents``.
    public var articles: [Article]

    /// Parses a response body; `source` names it in errors (`response from https://…&api-key=REDACTED`).
    ///
    /// - Throws: ``ClientError/invalidJSON(source:error:)`` when the body is not JSON;
    ///   ``ClientError/unexpectedShape(path:reason:)`` naming the key path that is wrong
    ///   (`(response body)`, `fault`, `errors`, `response`, `response.meta.hits`, `response.docs`,
    ///   `response.docs[4]`), quoting the API's message when the body is a fault or an error
    ///   status; ``ClientError/missingID(path:)`` for a document without `_id`.
    public init(body: [UInt8], source: String) throws(ClientError) {
        let root: JSONValue
        do { root = try JSONParser.parse(body) } catch { throw .invalidJSON(source: source, error: error) }
        try self.init(root: root)
    }

    /// Reads an already parsed response body.
    ///
    /// - Throws: as ``init(body:source:)``, except for `invalidJSON`.
    public init(root: JSONValue) throws(ClientError) {
        guard case .object = root else {
            throw .unexpectedShape(path: "(response body)", reason: "expected an object, found \(root.typeName)")
        }
        if let problem = SearchResponse.apiProblem(in: root) { throw problem }
        guard let response = root["response"] else {
            throw .unexpectedShape(path: "response", reason: "missing (the body has \(SearchResponse.keyList(of: root)))")
        }
        guard case .object = response else {
            throw .unexpectedShape(path: "response", reason: "expected an object, found \(response.typeName)")
        }

        // `meta` (to 2024) or `metadata` (2025); whichever is an object wins.
        let metaKey = response["meta"]?.isObject == true || response["metadata"] == nil ? "meta" : "metadata"
        guard let meta = response[metaKey] else {
            throw .unexpectedShape(path: "response.meta", reason: "missing (neither meta nor metadata)")
        }
        guard case .object = meta else {
            throw .unexpectedShape(path: "response.\(metaKey)", reason: "expected an object, found \(meta.typeName)")
        }
        guard let hitsValue = meta["hits"] else {
            throw .unexpectedShape(path: "response.\(metaKey).hits", reason: "missing")
        }
        guard case .number(let hitsText) = hitsValue, let hits = Int(hitsText), hits >= 0 else {
            throw .unexpectedShape(
                path: "response.\(metaKey).hits",
                reason: "expected a whole number of hits, found \(SearchResponse.describe(hitsValue))")
        }
        self.hits = hits
        offset = meta["offset"].flatMap { JSONTransformer<Int>.integer($0) }

        switch response["docs"] {
        case .array(let docs)?:
            documents = docs
        case .null?, nil:
            documents = []
        case let other?:
            throw .unexpectedShape(path: "response.docs", reason: "expected an array, found \(other.typeName)")
        }
        var articles: [Article] = []
        articles.reserveCapacity(documents.count)
        for (index, document) in documents.enumerated() {
            articles.append(try Article(document: document, path: "response.docs[\(index)]"))
        }
        self.articles = articles
    }

    /// The error a body that reports a failure instead of results stands for, if it is one:
    /// the gateway's `{"fault": {"faultstring": ..., "detail": {"errorcode": ...}}}` (rate limits,
    /// bad keys), the API's `{"status": "ERROR", "errors": [...]}` (bad parameters), or a bare
    /// `{"message": ...}`; these can come with a 200 status.
    static func apiProblem(in root: JSONValue) -> ClientError? {
        if let fault = root["fault"] {
            var reason = "the API answered with a fault instead of results"
            if let text = fault["faultstring"]?.stringValue ?? fault.stringValue {
                reason += ": " + quoted(text)
            }
            if let code = fault["detail"]?["errorcode"]?.stringValue {
                reason += " (\(code))"
            }
            return .unexpectedShape(path: "fault", reason: reason)
        }
        let status = root["status"]?.stringValue
        let isErrorStatus = status.map { $0.uppercased() == "ERROR" } ?? false
        if isErrorStatus || (root["errors"] != nil && root["response"] == nil) {
            var reason = "the API answered with status \(status.map { quoted($0) } ?? "null") instead of results"
            if case .array(let errors)? = root["errors"], let first = errors.first {
                reason += ": " + (first.stringValue.map { quoted($0) } ?? describe(first))
                if errors.count > 1 { reason += " (and \(errors.count - 1) more)" }
                return .unexpectedShape(path: "errors", reason: reason)
            }
            return .unexpectedShape(path: "status", reason: reason)
        }
        if root["response"] == nil, let message = root["message"]?.stringValue {
            return .unexpectedShape(path: "message", reason: "the API answered with a message instead of results: " + quoted(message))
        }
        return nil
    }

    /// A string as a JSON literal (a server's line breaks and control bytes escaped, so a message
    /// stays one line), cut at 300 characters.
    private static func quoted(_ text: String) -> String {
        let cut = text.count > 300 ? String(text.prefix(300)) + "…" : text
        return JSONWriter.compactString(.string(cut))
    }

    /// A short description of a value for messages: its text when small, its type otherwise.
    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .number(let literal): return literal
        case .string(let text): return "the string " + quoted(text)
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array, .object: return "an \(value.typeName)"
        }
    }

    /// The keys of an object, for messages (`keys copyright, status`, or `no keys`).
    private static func keyList(of object: JSONValue) -> String {
        guard case .object(let members) = object, !members.isEmpty else { return "no keys" }
        let keys = members.prefix(8).map { member in
            member.key.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } ? member.key : quoted(member.key)
        }.joined(separator: ", ")
        return (members.count == 1 ? "key " : "keys ") + keys + (members.count > 8 ? ", …" : "")
    }
}
