import ArchivistBase
import Foundation

/// Everything the NYT client can fail with. Each case names what was wrong and where; no case ever
/// carries the API key (URLs are kept redacted, `api-key=REDACTED`).
public indirect enum ClientError: Error, LocalizedError, Sendable, Equatable {
    /// No API key was given (`NYT_API_KEY`).
    case missingAPIKey
    /// A request parameter was wrong before anything was sent: the parameter and what was wrong.
    case invalidRequest(parameter: String, reason: String)
    /// The server answered with an error status: the status, its fault string (or a short
    /// description of the body), the redacted URL, and how many attempts were made.
    case http(status: Int, fault: String, url: String, attempts: Int)
    /// The server could not be reached (refused, DNS, timeout, dropped connection): the redacted
    /// URL, the reason, and how many attempts were made.
    case unreachable(url: String, reason: String, attempts: Int)
    /// Requests cannot be sent at all in this process: the network library is missing or of
    /// another version (what is wrong and where). Not offline: nothing was tried.
    case networkUnavailable(reason: String)
    /// A response body was not JSON: where it came from and the syntax error.
    case invalidJSON(source: String, error: JSONSyntaxError)
    /// A response was valid JSON of the wrong shape: the key path (`response.docs[3].headline`)
    /// and what was wrong there.
    case unexpectedShape(path: String, reason: String)
    /// A document in a response had no usable `_id`: its key path (`response.docs[3]`).
    case missingID(path: String)
    /// An error that happened on one page of a search (pages count from 0).
    case onPage(Int, ClientError)
    /// The search was interrupted (Ctrl-C) before it finished.
    case cancelled
    /// The day's requests are used up: `requestsToday` were counted this UTC day, `limit` allowed.
    /// Nothing was sent.
    case dailyLimitReached(requestsToday: Int, limit: Int)
    /// No saved search has this name.
    case unknownSearch(name: String)
    /// A file of the client's in the data folder could not be read or written.
    case storage(StoreError)

    /// A one-line, lowercase message that starts with its subject.
    public var errorDescription: String? {
        switch self {
        case .missingAPIKey:
            return "NYT_API_KEY is not set: get a key at https://developer.nytimes.com/get-started "
                + "(enable the Article Search API), then export NYT_API_KEY=..."
        case .invalidRequest(let parameter, let reason):
            return "\(parameter): \(reason)"
        case .http(let status, let fault, let url, let attempts):
            let tries = attempts > 1 ? " (after \(attempts) attempts)" : ""
            return "HTTP \(status) from \(url): \(fault)\(tries)"
        case .unreachable(let url, let reason, let attempts):
            let tries = attempts > 1 ? " (after \(attempts) attempts)" : ""
            return "\(url): cannot reach the server: \(reason)\(tries)"
        case .networkUnavailable(let reason):
            return reason
        case .invalidJSON(let source, let error):
            return "\(source): \(error)"
        case .unexpectedShape(let path, let reason):
            return "\(path): \(reason)"
        case .missingID(let path):
            return "\(path): document has no _id (string), so it cannot be stored"
        case .onPage(let page, let error):
            return "page \(page): \(error.errorDescription ?? "\(error)")"
        case .cancelled:
            return "search: interrupted"
        case .dailyLimitReached(let count, let limit):
            return "daily limit: \(count) API requests were sent today (UTC) and NYT allows \(limit); "
                + "none is sent before tomorrow (UTC)"
        case .unknownSearch(let name):
            return "\(name): no saved search has this name (see `searches`)"
        case .storage(let error):
            return error.errorDescription
        }
    }

    /// Whether the API could not be reached at all: refused, DNS, timeouts, dropped connections,
    /// or 5xx answers after every retry. These are the errors `search` answers from the cache.
    public var meansOffline: Bool {
        switch self {
        case .unreachable: return true
        case .http(let status, _, _, _): return status >= 500
        case .onPage(_, let error): return error.meansOffline
        default: return false
        }
    }

    /// The same error with every occurrence of `secret` in its text redacted (`KeyRedaction`: a
    /// server may echo the key in a body that ends up quoted in a message).
    public func redacting(_ secret: String) -> ClientError {
        guard !secret.isEmpty else { return self }
        let clean = KeyRedaction(key: secret)
        switch self {
        case .missingAPIKey, .cancelled, .storage, .networkUnavailable, .dailyLimitReached: return self
        case .invalidRequest(let parameter, let reason): return .invalidRequest(parameter: clean(parameter), reason: clean(reason))
        case .http(let status, let fault, let url, let attempts):
            return .http(status: status, fault: clean(fault), url: clean(url), attempts: attempts)
        case .unreachable(let url, let reason, let attempts):
            return .unreachable(url: clean(url), reason: clean(reason), attempts: attempts)
        case .invalidJSON(let source, var error):
            error.reason = clean(error.reason)
            return .invalidJSON(source: clean(source), error: error)
        case .unexpectedShape(let path, let reason): return .unexpectedShape(path: clean(path), reason: clean(reason))
        case .missingID(let path): return .missingID(path: clean(path))
        case .onPage(let page, let error): return .onPage(page, error.redacting(secret))
        case .unknownSearch(let name): return .unknownSearch(name: clean(name))
        }
    }

    /// The error without its page wrapper.
    public var underlying: ClientError {
        if case .onPage(_, let error) = self { return error.underlying }
        return self
    }
}
