import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP answer: status, content type and body.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The `Content-Type` header, when sent.
    public var contentType: String?
    /// The body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, contentType: String? = nil, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

/// Why a request got no HTTP answer. The reasons never include the URL (which holds the key).
public enum TransportFailure: Error, Sendable, Equatable {
    /// Connection refused, no route, host not found.
    case cannotConnect(String)
    /// No answer within the timeout.
    case timedOut
    /// The connection dropped before the whole answer arrived.
    case connectionLost
    /// Anything else, described without the URL.
    case other(String)

    /// A short lowercase description.
    public var reason: String {
        switch self {
        case .cannotConnect(let why): return why
        case .timedOut: return "timed out"
        case .connectionLost: return "the connection dropped before the whole answer arrived"
        case .other(let why): return why
        }
    }
}

/// Sends GET requests. Tests may give the client another transport; the real one is
/// `URLSessionTransport`.
public protocol HTTPTransport: Sendable {
    /// Fetches `url`, waiting at most `timeout` seconds; throws `TransportFailure` when no HTTP
    /// answer came back.
    func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse
}

/// The real transport: an ephemeral URLSession (no cookies, no disk cache, so no URL with the key
/// is ever written to disk).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// A transport with its own ephemeral session.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Fetches `url` with a whole-second timeout of at least 1 s (Linux truncates fractions).
    public func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        var request = URLRequest(url: url)
        request.timeoutInterval = max(1, timeout.rounded(.up))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("archivist", forHTTPHeaderField: "User-Agent")
        let result: Result<(Data, URLResponse), Error> = await withCheckedContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(error))
                } else if let response {
                    continuation.resume(returning: .success((data ?? Data(), response)))
                } else {
                    continuation.resume(returning: .failure(URLError(.badServerResponse)))
                }
            }
            task.resume()
        }
        switch result {
        case .success(let (data, response)):
            guard let http = response as? HTTPURLResponse else { throw .other("not an HTTP response") }
            if let length = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), length > data.count {
                throw .connectionLost
            }
            return HTTPResponse(
                status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"),
                body: [UInt8](data))
        case .failure(let error):
            throw URLSessionTransport.failure(for: error)
        }
    }

    /// Classifies a URLSession error by its code only (its message would hold the URL).
    static func failure(for error: Error) -> TransportFailure {
        guard let urlError = error as? URLError else { return .other("request failed") }
        switch urlError.code {
        case .cannotConnectToHost: return .cannotConnect("connection refused")
        case .cannotFindHost, .dnsLookupFailed: return .cannotConnect("host not found")
        case .notConnectedToInternet: return .cannotConnect("not connected to the internet")
        case .timedOut: return .timedOut
        case .networkConnectionLost: return .connectionLost
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return .cannotConnect("TLS handshake failed")
        case .badServerResponse: return .connectionLost  // "empty reply from server"
        case .unknown: return .connectionLost  // curl's "transfer closed with N bytes remaining"
        case .cancelled: return .other("cancelled")
        case .badURL, .unsupportedURL: return .other("bad URL")
        default: return .other("URL error \(urlError.code.rawValue)")
        }
    }
}
