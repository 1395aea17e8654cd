import Foundation

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
    /// The transport cannot send anything in this process (its network library is missing or of
    /// another version): what is wrong and where. Not worth retrying.
    case unavailable(String)

    /// A short lowercase description.
    public var reason: String {
        switch self {
        case .cannotConnect(let why): return why
        case .timedOut: return "timed out"
        case .connectionLost: return "the connection dropped before the whole answer arrived"
        case .other(let why): return why
        case .unavailable(let why): return why
        }
    }
}

/// Sends GET requests. Tests may give the client another transport; the real one is
/// `URLSessionTransport`.
public protocol HTTPTransport: Sendable {
    /// Makes sure requests can be sent (the real transport loads its network library here),
    /// throwing `TransportFailure.unavailable` when they cannot. The client calls it before it
    /// counts or paces a request; the default does nothing.
    func prepare() throws(TransportFailure)

    /// Fetches `url`, waiting at most `timeout` seconds; throws `TransportFailure` when no HTTP
    /// answer came back.
    func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse

    /// Fetches `url` as `get(_:timeout:)` does, telling `onProgress` the body's bytes received so
    /// far and its announced length (nil when not announced) as it arrives. The default reports
    /// once, when the whole body is there.
    func get(
        _ url: URL, timeout: Double, onProgress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(TransportFailure) -> HTTPResponse
}

extension HTTPTransport {
    /// Nothing to prepare.
    public func prepare() throws(TransportFailure) {}

    /// `get(_:timeout:)`, then one report of the whole body.
    public func get(
        _ url: URL, timeout: Double, onProgress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(TransportFailure) -> HTTPResponse {
        let response = try await get(url, timeout: timeout)
        onProgress(response.body.count, response.body.count)
        return response
    }
}
