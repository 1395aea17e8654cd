import ArchivistBase
import Foundation
import Synchronization

/// Sends Article Search and Archive API requests one at a time: paced, counted, retried with
/// backoff, and never past the daily limit.
///
/// Every attempt first takes a slot from the ledger (at most one request per `pace` seconds, across
/// processes sharing the data folder). A 429, a 408, a 5xx, a timeout, a dropped connection or
/// another transport failure is retried up to `maximumRetries` times after an exponential backoff
/// with jitter (the API sends no Retry-After); any other 4xx (400, 401, 403, 404) fails at once. A connection that cannot be made (refused,
/// host not found, no network, TLS) is retried only once this client has had an answer from the
/// server: before that it means offline, and fails at once. Waits end early when `isCancelled`
/// turns true. When the ledger has counted `dailyLimit` requests today (UTC), no request is sent:
/// the call fails with `ClientError.dailyLimitReached`. An Archive API body that is cut off (an
/// HTTP 200 whose JSON ends early) is retried like a dropped connection.
public final class NYTClient: Sendable {
    /// How the client talks to the API.
    public struct Configuration: Sendable {
        /// The default base URL.
        public static let defaultBaseURL = "https://api.nytimes.com"
        /// The base URL of the API (`https://api.nytimes.com`, or a test server).
        public var baseURL: String
        /// The API key (`NYT_API_KEY`). Never printed.
        public var apiKey: String
        /// Least seconds between two requests; NYT allows 5 a minute.
        public var pace: Double
        /// The first retry's backoff in seconds; each retry doubles it, with jitter.
        public var backoff: Double
        /// Retries after the first attempt.
        public var maximumRetries: Int
        /// Seconds to wait for an answer (whole seconds, at least 1).
        public var timeout: Double
        /// Requests allowed per UTC day (NYT allows 500); the next one is refused, not sent.
        public var dailyLimit: Int

        /// A configuration with the defaults: 12 s pace, 2 s first backoff, 5 retries, 30 s
        /// timeout, 500 requests a day.
        public init(
            baseURL: String = Configuration.defaultBaseURL, apiKey: String, pace: Double = 12,
            backoff: Double = 2, maximumRetries: Int = 5, timeout: Double = 30, dailyLimit: Int = 500
        ) {
            self.baseURL = baseURL
            self.apiKey = apiKey
            self.pace = pace
            self.backoff = backoff
            self.maximumRetries = maximumRetries
            self.timeout = timeout
            self.dailyLimit = dailyLimit
        }
    }

    /// Something worth telling the user while a request is on its way.
    public enum Event: Sendable, Equatable {
        /// Waiting for the pace before the next request.
        case pacing(seconds: Double)
        /// Attempt `attempt` failed for `reason`; retrying after `delay` seconds.
        case retrying(attempt: Int, reason: String, delay: Double)
        /// The day's request count has reached a warning level (450, then 500).
        case quotaWarning(requestsToday: Int)
    }

    /// The daily counts at which a warning is given.
    public static let quotaWarningLevels = [450, 500]

    /// The configuration.
    public let configuration: Configuration
    private let transport: any HTTPTransport
    private let ledger: any RequestLedger
    private let isCancelled: @Sendable () -> Bool
    private let warnedLevels = Mutex<Set<Int>>([])
    /// Whether some request has had an HTTP answer (after which a refused connection is transient).
    private let hasReachedServer = Mutex(false)

    /// A client; `isCancelled` is polled during waits.
    public init(
        configuration: Configuration, transport: any HTTPTransport = URLSessionTransport(),
        ledger: any RequestLedger = MemoryRequestLedger(), isCancelled: @escaping @Sendable () -> Bool = { false }
    ) {
        self.configuration = configuration
        self.transport = transport
        self.ledger = ledger
        self.isCancelled = isCancelled
    }

    /// Checks the base URL and the request before anything is sent.
    public func validate(_ request: SearchRequest) throws(ClientError) {
        try request.validate()
        guard request.url(base: configuration.baseURL, apiKey: nil) != nil else {
            throw .invalidRequest(parameter: "base URL", reason: "'\(configuration.baseURL)' is not an http(s) URL")
        }
    }

    /// Fetches one page, retrying what can be retried. `onEvent` hears about waits and retries.
    public func fetch(_ request: SearchRequest, onEvent: @Sendable (Event) -> Void = { _ in }) async throws(ClientError) -> SearchResponse {
        try request.validate()
        guard let url = request.url(base: configuration.baseURL, apiKey: configuration.apiKey) else {
            throw .invalidRequest(parameter: "base URL", reason: "'\(configuration.baseURL)' is not an http(s) URL")
        }
        let shownURL = request.redactedURL(base: configuration.baseURL)
        return try await perform(url, shownURL: shownURL, retryingCutOffBodies: false, onEvent: onEvent, onProgress: { _, _ in }) {
            (response) throws(ClientError) -> SearchResponse in
            try SearchResponse(body: response.body, source: "response from \(shownURL)")
        }
    }

    /// Fetches every article of `month` from the Archive API in one request, retrying what can be
    /// retried, a body cut off included. `onProgress` hears the body's bytes so far and its
    /// announced length while it downloads.
    public func fetchArchive(
        _ month: ArchiveMonth, onEvent: @Sendable (Event) -> Void = { _ in },
        onProgress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void = { _, _ in }
    ) async throws(ClientError) -> ArchiveResponse {
        guard let url = month.url(base: configuration.baseURL, apiKey: configuration.apiKey) else {
            throw .invalidRequest(parameter: "base URL", reason: "'\(configuration.baseURL)' is not an http(s) URL")
        }
        let shownURL = month.redactedURL(base: configuration.baseURL)
        return try await perform(url, shownURL: shownURL, retryingCutOffBodies: true, onEvent: onEvent, onProgress: onProgress) {
            (response) throws(ClientError) -> ArchiveResponse in
            try ArchiveResponse(body: response.body, source: "response from \(shownURL)")
        }
    }

    /// Sends `url` until an answer `decode` accepts, a failure that cannot be retried, or the last
    /// retry. With `retryingCutOffBodies`, a 2xx body that is not valid JSON is retried too.
    private func perform<Answer>(
        _ url: URL, shownURL: String, retryingCutOffBodies: Bool, onEvent: @Sendable (Event) -> Void,
        onProgress: @escaping @Sendable (Int, Int?) -> Void,
        decode: (HTTPResponse) throws(ClientError) -> Answer
    ) async throws(ClientError) -> Answer {
        do {
            try transport.prepare()  // before a slot is taken: a request that cannot be sent is not counted
        } catch {
            throw .networkUnavailable(reason: error.reason)
        }
        var attempt = 0
        while true {
            attempt += 1
            try await takeSlot(onEvent: onEvent)
            let failure: ClientError
            let retryReason: String
            switch await send(url, shownURL: shownURL, attempt: attempt, onProgress: onProgress) {
            case .success(let response):
                do {
                    return try decode(response)
                } catch {
                    let clean = error.redacting(configuration.apiKey)
                    guard retryingCutOffBodies, case .invalidJSON(_, let syntax) = clean else { throw clean }
                    failure = clean
                    retryReason = "the body was cut off or is not JSON (\(syntax))"
                }
            case .failure(let error, let retryable):
                guard let retryable else { throw error }
                failure = error
                retryReason = retryable
            }
            guard attempt <= configuration.maximumRetries else { throw failure }
            let ceiling = configuration.backoff * pow(2, Double(attempt - 1))
            let delay = min(ceiling, 300) * Double.random(in: 0.5...1.0)
            onEvent(.retrying(attempt: attempt, reason: retryReason, delay: delay))
            try await sleep(delay)
        }
    }

    /// What one attempt came to.
    private enum Attempt {
        /// A 2xx answer.
        case success(HTTPResponse)
        /// A failure, with the reason to show when it can be retried (nil: fail at once).
        case failure(ClientError, retryable: String?)
    }

    /// Sends one attempt and sorts the answer into success, retryable and final failures.
    private func send(_ url: URL, shownURL: String, attempt: Int, onProgress: @escaping @Sendable (Int, Int?) -> Void) async -> Attempt {
        let response: HTTPResponse
        do {
            response = try await transport.get(url, timeout: configuration.timeout, onProgress: onProgress)
        } catch {
            if case .unavailable(let why) = error { return .failure(.networkUnavailable(reason: why), retryable: nil) }
            let reason = redacting(error.reason)
            let failure = ClientError.unreachable(url: shownURL, reason: reason, attempts: attempt)
            if case .cannotConnect = error, !hasReachedServer.withLock({ $0 }) {
                // Never reached: offline, or the wrong address. Waiting would only delay the answer.
                return .failure(failure, retryable: nil)
            }
            return .failure(failure, retryable: reason)
        }
        hasReachedServer.withLock { $0 = true }
        if (200..<300).contains(response.status) { return .success(response) }
        let fault = redacting(NYTClient.describeFault(body: response.body, contentType: response.contentType))
        let failure = ClientError.http(status: response.status, fault: fault, url: shownURL, attempts: attempt)
        let retryable = response.status == 429 || response.status == 408 || response.status >= 500
        return .failure(failure, retryable: retryable ? "HTTP \(response.status): \(fault)" : nil)
    }

    /// Waits for the ledger's slot and counts the request.
    private func takeSlot(onEvent: @Sendable (Event) -> Void) async throws(ClientError) {
        var announced = false
        while true {
            if isCancelled() { throw .cancelled }
            switch try ledger.reserve(at: Date(), pace: configuration.pace, dailyLimit: configuration.dailyLimit) {
            case .granted(let count):
                let level = warnedLevels.withLock { warned -> Int? in
                    guard let level = NYTClient.quotaWarningLevels.last(where: { count >= $0 }), !warned.contains(level) else { return nil }
                    warned.formUnion(NYTClient.quotaWarningLevels.filter { $0 <= level })
                    return level
                }
                if level != nil { onEvent(.quotaWarning(requestsToday: count)) }
                return
            case .wait(let seconds):
                if !announced {
                    onEvent(.pacing(seconds: seconds))
                    announced = true
                }
                // `sleep` notices a cancellation within 0.1 s; the slot is asked for again after.
                try await sleep(seconds)
            case .limitReached(let count):
                throw .dailyLimitReached(requestsToday: count, limit: configuration.dailyLimit)
            }
        }
    }

    /// Sleeps in short steps, ending with `.cancelled` as soon as `isCancelled` is true.
    private func sleep(_ seconds: Double) async throws(ClientError) {
        let end = Date().addingTimeInterval(seconds)
        while true {
            if isCancelled() { throw .cancelled }
            let left = end.timeIntervalSinceNow
            if left <= 0 { return }
            try? await Task.sleep(nanoseconds: UInt64(min(left, 0.1) * 1e9))
        }
    }

    /// The key must never leak, even when a server echoes it.
    private func redacting(_ text: String) -> String {
        KeyRedaction(key: configuration.apiKey)(text)
    }

    /// What an error body says: the fault string of `{"fault":{"faultstring":...}}`, the errors of
    /// `{"status":"ERROR","errors":[...]}`, an HTML page's title, or the start of the text.
    public static func describeFault(body: [UInt8], contentType: String?) -> String {
        if body.isEmpty { return "empty body" }
        if let value = try? JSONParser.parse(body) {
            if case .string(let text)? = value["fault"]?["faultstring"] {
                if case .string(let code)? = value["fault"]?["detail"]?["errorcode"] { return "\(text) (\(code))" }
                return text
            }
            if case .array(let errors)? = value["errors"] {
                let texts = errors.compactMap { error -> String? in if case .string(let text) = error { return text } else { return nil } }
                if !texts.isEmpty { return texts.joined(separator: "; ") }
            }
            for key in ["message", "error", "status"] {
                if case .string(let text)? = value[key] { return text }
            }
        }
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        let lower = text.lowercased()
        if contentType?.lowercased().contains("html") == true || lower.contains("<html") {
            for tag in ["title", "h1"] {
                if let open = lower.range(of: "<\(tag)"), let close = lower.range(of: "</\(tag)>", range: open.upperBound..<lower.endIndex),
                    let start = lower.range(of: ">", range: open.upperBound..<close.lowerBound)
                {
                    let inner = text[
                        text.index(
                            text.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: start.upperBound))..<text.index(
                                text.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: close.lowerBound))]
                    let cleaned = inner.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                    if !cleaned.isEmpty { return "HTML page: \(cleaned)" }
                }
            }
            return "an HTML page (\(body.count) bytes)"
        }
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let flat = line.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count > 120 ? String(flat.prefix(120)) + "..." : (flat.isEmpty ? "\(body.count) bytes" : flat)
    }
}
