import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistClient

/// A value shared between a test and the closures it hands out.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }

    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { value in body(&value) }
    }
}

/// A transport that plays a script: each call takes the next step (an answer or a failure) and
/// records the URL it was asked for; when the script runs out it repeats `fallback`.
final class ScriptedTransport: HTTPTransport {
    enum Step: Sendable {
        case respond(HTTPResponse)
        case fail(TransportFailure)
    }

    private struct State {
        var steps: [Step]
        var urls: [URL] = []
        var timeouts: [Double] = []
    }

    private let state: Mutex<State>
    private let fallback: Step

    init(_ steps: [Step], fallback: Step = .fail(.other("the test's script ran out"))) {
        state = Mutex(State(steps: steps))
        self.fallback = fallback
    }

    func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        let step = state.withLock { state -> Step in
            state.urls.append(url)
            state.timeouts.append(timeout)
            return state.steps.isEmpty ? fallback : state.steps.removeFirst()
        }
        switch step {
        case .respond(let response): return response
        case .fail(let failure): throw failure
        }
    }

    /// The URLs asked for, in order.
    var urls: [URL] { state.withLock { $0.urls } }
    /// The timeouts passed, in order.
    var timeouts: [Double] { state.withLock { $0.timeouts } }
    /// The number of calls.
    var calls: Int { state.withLock { $0.urls.count } }
}

/// A 200 answer with `count` generated documents and `hits` hits.
func okStep(count: Int = 3, hits: Int = 42, seed: UInt64 = 7) -> ScriptedTransport.Step {
    var generator = ArticleGenerator(seed: seed)
    let documents = generator.documents(count)
    let body = generator.apiResponse(docs: documents, offset: 0, hits: hits)
    return .respond(HTTPResponse(status: 200, contentType: "application/json", body: JSONWriter.compactBytes(body)))
}

/// An answer with `status` and a text body.
func statusStep(
    _ status: Int, _ body: String = "{\"fault\":{\"faultstring\":\"nope\"}}",
    contentType: String? = "application/json"
) -> ScriptedTransport.Step {
    .respond(HTTPResponse(status: status, contentType: contentType, body: Array(body.utf8)))
}

@Suite struct NYTClientTests {
    static let base = "https://api.example.test"
    static let key = "k3y-S3CRET-0123456789"
    static let request = SearchRequest(query: "jury", from: CalendarDay("2020-01-01"), to: CalendarDay("2020-01-31"))
    static var shownURL: String { request.redactedURL(base: base) }

    /// A client over `transport` with fast backoff and no pacing unless asked.
    static func client(
        _ transport: any HTTPTransport, pace: Double = 0, maximumRetries: Int = 5,
        ledger: any RequestLedger = MemoryRequestLedger(),
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) -> NYTClient {
        let configuration = NYTClient.Configuration(
            baseURL: base, apiKey: key, pace: pace, backoff: 0.001,
            maximumRetries: maximumRetries, timeout: 7)
        return NYTClient(configuration: configuration, transport: transport, ledger: ledger, isCancelled: isCancelled)
    }

    /// Expects the message of `error` (a server echoed the key) to show `REDACTED` and never the key.
    static func expectKeyRedacted(from error: ClientError?) {
        let description = error?.errorDescription ?? ""
        #expect(description.contains("REDACTED"), "\(description)")
        #expect(!description.contains(key), "\(description)")
        #expect(!String(describing: error).contains(key))
    }

    /// The error `fetch` ends with (nil when it succeeds), with the events it emitted.
    static func failure(
        of client: NYTClient, _ request: SearchRequest = NYTClientTests.request,
        events: Locked<[NYTClient.Event]> = Locked([])
    ) async -> ClientError? {
        do {
            _ = try await client.fetch(request) { event in events.withLock { $0.append(event) } }
            return nil
        } catch {
            return error
        }
    }

    // MARK: Success

    @Test func successfulAnswerDecodesAndUsesTheKeyedURLOnce() async throws {
        let transport = ScriptedTransport([okStep(count: 3, hits: 42)])
        let events = Locked<[NYTClient.Event]>([])
        let response = try await NYTClientTests.client(transport).fetch(NYTClientTests.request) { event in
            events.withLock { $0.append(event) }
        }
        var generator = ArticleGenerator(seed: 7)
        let expectedIDs = generator.documents(3).map { $0["_id"]?.stringValue }
        #expect(response.hits == 42)
        #expect(response.articles.map(\.id) == expectedIDs.compactMap { $0 })
        #expect(response.documents.count == 3)
        #expect(transport.calls == 1)
        #expect(transport.timeouts == [7])
        let url = try #require(transport.urls.first)
        #expect(url == NYTClientTests.request.url(base: NYTClientTests.base, apiKey: NYTClientTests.key))
        #expect(serverDecodedQuery(url).last?.value == NYTClientTests.key)
        #expect(events.value.isEmpty)
    }

    // MARK: Retries

    @Test func tooManyRequestsIsRetriedOnceThenSucceeds() async throws {
        let fault =
            "{\"fault\":{\"faultstring\":\"Rate limit quota violation.\",\"detail\":{\"errorcode\":\"policies.ratelimit.QuotaViolation\"}}}"
        let transport = ScriptedTransport([statusStep(429, fault), okStep()])
        let events = Locked<[NYTClient.Event]>([])
        let response = try await NYTClientTests.client(transport).fetch(NYTClientTests.request) { event in
            events.withLock { $0.append(event) }
        }
        #expect(response.hits == 42)
        #expect(transport.calls == 2)
        #expect(transport.urls[0] == transport.urls[1])
        let recorded = events.value
        try #require(recorded.count == 1)
        guard case .retrying(let attempt, let reason, let delay) = recorded[0] else {
            Issue.record("expected .retrying, got \(recorded[0])")
            return
        }
        #expect(attempt == 1)
        #expect(reason == "HTTP 429: Rate limit quota violation. (policies.ratelimit.QuotaViolation)")
        #expect(delay >= 0.0005 && delay <= 0.001)
    }

    @Test(arguments: [500, 502, 503, 504, 408, 429])
    func serverErrorsAndTimeoutStatusesAreRetried(status: Int) async throws {
        let transport = ScriptedTransport([
            statusStep(status, "<html><title>Trouble</title></html>", contentType: "text/html"),
            okStep(),
        ])
        let events = Locked<[NYTClient.Event]>([])
        let response = try await NYTClientTests.client(transport).fetch(NYTClientTests.request) { event in
            events.withLock { $0.append(event) }
        }
        #expect(response.hits == 42)
        #expect(transport.calls == 2)
        #expect(events.value.count == 1)
        if case .retrying(1, let reason, _)? = events.value.first {
            #expect(reason == "HTTP \(status): HTML page: Trouble")
        } else {
            Issue.record("expected .retrying for attempt 1, got \(events.value)")
        }
    }

    @Test(arguments: [TransportFailure.timedOut, .connectionLost])
    func transportFailuresAreRetried(failure: TransportFailure) async throws {
        let transport = ScriptedTransport([.fail(failure), .fail(failure), okStep()])
        let events = Locked<[NYTClient.Event]>([])
        let response = try await NYTClientTests.client(transport).fetch(NYTClientTests.request) { event in
            events.withLock { $0.append(event) }
        }
        #expect(response.hits == 42)
        #expect(transport.calls == 3)
        NYTClientTests.expectTwoRetries(for: failure, in: events.value)
    }

    /// Expects `events` to announce retries 1 and 2, each for `failure`.
    static func expectTwoRetries(
        for failure: TransportFailure, in events: [NYTClient.Event],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let retries = events.compactMap { event -> (Int, String)? in
            if case .retrying(let attempt, let reason, _) = event { return (attempt, reason) } else { return nil }
        }
        #expect(retries.map(\.0) == [1, 2], sourceLocation: sourceLocation)
        #expect(retries.map(\.1) == [failure.reason, failure.reason], sourceLocation: sourceLocation)
    }

    static let cannotConnect: [TransportFailure] = [
        .cannotConnect("connection refused"), .cannotConnect("host not found"),
        .cannotConnect("not connected to the internet"),
    ]

    @Test(arguments: cannotConnect)
    func aConnectionThatCannotBeMadeAtFirstContactFailsAtOnceAsOffline(failure: TransportFailure) async {
        let transport = ScriptedTransport([.fail(failure)], fallback: okStep())
        let events = Locked<[NYTClient.Event]>([])
        let error = await NYTClientTests.failure(of: NYTClientTests.client(transport), events: events)
        #expect(transport.calls == 1)
        #expect(error == .unreachable(url: NYTClientTests.shownURL, reason: failure.reason, attempts: 1))
        #expect(error?.meansOffline == true)
        #expect(events.value.allSatisfy { if case .retrying = $0 { false } else { true } }, "\(events.value)")
    }

    @Test(arguments: cannotConnect)
    func aConnectionThatCannotBeMadeAfterTheServerAnsweredIsRetried(failure: TransportFailure) async throws {
        let transport = ScriptedTransport([okStep(), .fail(failure), .fail(failure), okStep()])
        let client = NYTClientTests.client(transport)
        _ = try await client.fetch(NYTClientTests.request)
        let events = Locked<[NYTClient.Event]>([])
        let response = try await client.fetch(NYTClientTests.request) { event in events.withLock { $0.append(event) } }
        #expect(response.hits == 42)
        #expect(transport.calls == 4)
        NYTClientTests.expectTwoRetries(for: failure, in: events.value)
    }

    @Test(arguments: [400, 401, 403, 404])
    func clientErrorsFailAtOnceWithTheirStatusAndFault(status: Int) async {
        let body =
            "{\"fault\":{\"faultstring\":\"Invalid ApiKey for given resource\",\"detail\":{\"errorcode\":\"oauth.v2.InvalidApiKeyForGivenResource\"}}}"
        let transport = ScriptedTransport([statusStep(status, body)], fallback: okStep())
        let events = Locked<[NYTClient.Event]>([])
        let error = await NYTClientTests.failure(of: NYTClientTests.client(transport), events: events)
        #expect(
            error
                == .http(
                    status: status, fault: "Invalid ApiKey for given resource (oauth.v2.InvalidApiKeyForGivenResource)",
                    url: NYTClientTests.shownURL, attempts: 1))
        #expect(transport.calls == 1)
        #expect(events.value.isEmpty)
        #expect(
            error?.errorDescription == "HTTP \(status) from \(NYTClientTests.shownURL): Invalid ApiKey for given resource "
                + "(oauth.v2.InvalidApiKeyForGivenResource)")
        #expect(error?.meansOffline == false)
    }

    @Test func bodyThatIsNotJSONOnA200IsNotRetried() async {
        let transport = ScriptedTransport([statusStep(200, "{\"response\": ")], fallback: okStep())
        let error = await NYTClientTests.failure(of: NYTClientTests.client(transport))
        guard case .invalidJSON(let source, _)? = error else {
            Issue.record("expected .invalidJSON, got \(String(describing: error))")
            return
        }
        #expect(source == "response from \(NYTClientTests.shownURL)")
        #expect(transport.calls == 1)
    }

    @Test(arguments: [0, 1, 3])
    func retriesOfAStatusAreBoundedAndTheErrorCountsTheAttempts(maximumRetries: Int) async {
        let transport = ScriptedTransport([], fallback: statusStep(503, "Service Unavailable", contentType: "text/plain"))
        let events = Locked<[NYTClient.Event]>([])
        let error = await NYTClientTests.failure(of: NYTClientTests.client(transport, maximumRetries: maximumRetries), events: events)
        #expect(transport.calls == maximumRetries + 1)
        #expect(error == .http(status: 503, fault: "Service Unavailable", url: NYTClientTests.shownURL, attempts: maximumRetries + 1))
        #expect(error?.meansOffline == true)
        let attempts = events.value.compactMap { event -> Int? in
            if case .retrying(let attempt, _, _) = event { return attempt } else { return nil }
        }
        #expect(attempts == Array(stride(from: 1, through: maximumRetries, by: 1)))
        if maximumRetries > 0 {
            #expect(error?.errorDescription?.hasSuffix("(after \(maximumRetries + 1) attempts)") == true)
        } else {
            #expect(error?.errorDescription?.contains("attempts") == false)
        }
    }

    @Test func retriesOfATransportFailureAreBoundedAndTheErrorCountsTheAttempts() async {
        let transport = ScriptedTransport([], fallback: .fail(.timedOut))
        let error = await NYTClientTests.failure(of: NYTClientTests.client(transport, maximumRetries: 2))
        #expect(transport.calls == 3)
        #expect(error == .unreachable(url: NYTClientTests.shownURL, reason: "timed out", attempts: 3))
        #expect(error?.errorDescription == "\(NYTClientTests.shownURL): cannot reach the server: timed out (after 3 attempts)")
        #expect(error?.meansOffline == true)
    }

    @Test func backoffDoublesWithJitterOnEachRetry() async throws {
        let transport = ScriptedTransport([], fallback: .fail(.connectionLost))
        let configuration = NYTClient.Configuration(
            baseURL: NYTClientTests.base, apiKey: NYTClientTests.key, pace: 0,
            backoff: 0.004, maximumRetries: 3, timeout: 1)
        let client = NYTClient(configuration: configuration, transport: transport, ledger: MemoryRequestLedger())
        let events = Locked<[NYTClient.Event]>([])
        _ = await NYTClientTests.failure(of: client, events: events)
        let delays = events.value.compactMap { event -> Double? in
            if case .retrying(_, _, let delay) = event { return delay } else { return nil }
        }
        try #require(delays.count == 3)
        for (index, delay) in delays.enumerated() {
            let ceiling = 0.004 * Double(1 << index)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "retry \(index + 1) waited \(delay) s")
        }
    }

    // MARK: The key never leaks

    @Test func keyEchoedInAnErrorBodyIsRedactedFromEveryMessage() async {
        let key = NYTClientTests.key
        let echoes: [ScriptedTransport.Step] = [
            statusStep(401, "{\"fault\":{\"faultstring\":\"Invalid ApiKey \(key)\",\"detail\":{\"errorcode\":\"\(key)\"}}}"),
            statusStep(403, "{\"status\":\"ERROR\",\"errors\":[\"key \(key) is not allowed\"]}"),
            statusStep(404, "no route for /svc?api-key=\(key)", contentType: "text/plain"),
            statusStep(400, "<html><head><title>Bad key \(key)</title></head></html>", contentType: "text/html"),
        ]
        for echo in echoes {
            let transport = ScriptedTransport([echo])
            NYTClientTests.expectKeyRedacted(from: await NYTClientTests.failure(of: NYTClientTests.client(transport)))
        }
    }

    @Test func keyEchoedInRetriedAnswersIsRedactedFromEventsAndTheError() async {
        let key = NYTClientTests.key
        let transport = ScriptedTransport(
            [], fallback: statusStep(500, "internal error handling api-key=\(key)", contentType: "text/plain"))
        let events = Locked<[NYTClient.Event]>([])
        let error = await NYTClientTests.failure(of: NYTClientTests.client(transport, maximumRetries: 2), events: events)
        let description = error?.errorDescription ?? ""
        #expect(!description.contains(key))
        #expect(!String(describing: error).contains(key))
        #expect(!events.value.isEmpty)
        #expect(!String(describing: events.value).contains(key))
    }

    @Test func keyEchoedInAFaultBodyWithStatus200IsRedactedFromTheError() async {
        // Faults can come with a 200 status; SearchResponse quotes them in its error.
        let key = NYTClientTests.key
        let bodies = [
            "{\"fault\":{\"faultstring\":\"Invalid ApiKey \(key)\",\"detail\":{\"errorcode\":\"oauth.v2.InvalidApiKey\"}}}",
            "{\"status\":\"ERROR\",\"errors\":[\"api-key \(key) is not valid\"]}",
            "{\"message\":\"unknown key \(key)\"}",
        ]
        for body in bodies {
            let transport = ScriptedTransport([statusStep(200, body)])
            let error = await NYTClientTests.failure(of: NYTClientTests.client(transport))
            #expect(error != nil)
            NYTClientTests.expectKeyRedacted(from: error)
        }
        let transport = ScriptedTransport([statusStep(200, bodies[0])])
        #expect(
            await NYTClientTests.failure(of: NYTClientTests.client(transport))
                == .unexpectedShape(
                    path: "fault",
                    reason: "the API answered with a fault instead of results: "
                        + "\"Invalid ApiKey REDACTED\" (oauth.v2.InvalidApiKey)"))
    }

    // MARK: describeFault

    @Test(arguments: [
        (
            "{\"fault\":{\"faultstring\":\"Rate limit quota violation.\",\"detail\":{\"errorcode\":\"policies.ratelimit.QuotaViolation\"}}}",
            "application/json" as String?, "Rate limit quota violation. (policies.ratelimit.QuotaViolation)"
        ),
        ("{\"fault\":{\"faultstring\":\"Invalid ApiKey\"}}", "application/json", "Invalid ApiKey"),
        ("{\"fault\":{\"faultstring\":\"Invalid ApiKey\",\"detail\":{}}}", "application/json", "Invalid ApiKey"),
        (
            "{\"status\":\"ERROR\",\"errors\":[\"Invalid value for field: begin_date\",\"Invalid value for field: end_date\"]}",
            "application/json", "Invalid value for field: begin_date; Invalid value for field: end_date"
        ),
        ("{\"errors\":[\"only one\"]}", nil, "only one"),
        ("{\"errors\":[1, \"text among numbers\"]}", nil, "text among numbers"),
        ("{\"status\":\"ERROR\",\"errors\":[]}", nil, "ERROR"),
        ("{\"message\":\"Unauthorized\"}", "application/json", "Unauthorized"),
        ("{\"error\":\"bad request\"}", nil, "bad request"),
        ("{\"status\":\"ERROR\"}", nil, "ERROR"),
        ("{\"other\":1}", "application/json", "{\"other\":1}"),
        ("[1,2]", "application/json", "[1,2]"),
        ("<html><head><title>502 Bad Gateway</title></head><body>...</body></html>", "text/html", "HTML page: 502 Bad Gateway"),
        (
            "<!DOCTYPE html>\n<HTML><HEAD><TITLE lang=\"en\">\n  Service\n  Unavailable  </TITLE></HEAD></HTML>", nil,
            "HTML page: Service Unavailable"
        ),
        ("<html><body><h1>Gateway Timeout</h1></body></html>", "text/html; charset=utf-8", "HTML page: Gateway Timeout"),
        ("<title>Erreur – Café</title>", "TEXT/HTML", "HTML page: Erreur – Café"),
        ("<html><body><p>nothing named</p></body></html>", "text/html", "an HTML page (46 bytes)"),
        ("<html><head><title>   </title></head></html>", "text/html", "an HTML page (44 bytes)"),
        ("Upstream request timeout\nsecond line", "text/plain", "Upstream request timeout"),
        ("  many    spaces\tand tabs  ", nil, "many spaces and tabs"),
        ("   \n", "text/plain", "4 bytes"),
        ("", "application/json", "empty body"),
        ("", nil, "empty body"),
    ])
    func describeFaultSaysWhatTheBodySays(body: String, contentType: String?, expected: String) {
        #expect(NYTClient.describeFault(body: Array(body.utf8), contentType: contentType) == expected)
    }

    @Test func describeFaultCutsLongTextAt120Characters() {
        let long = String(repeating: "abcdefghij", count: 30)
        #expect(NYTClient.describeFault(body: Array(long.utf8), contentType: "text/plain") == String(long.prefix(120)) + "...")
        let exactly = String(repeating: "x", count: 120)
        #expect(NYTClient.describeFault(body: Array(exactly.utf8), contentType: nil) == exactly)
    }

    @Test func describeFaultToleratesInvalidUTF8() {
        let body: [UInt8] = [0xFF, 0xFE, 0x41, 0x42]
        #expect(NYTClient.describeFault(body: body, contentType: nil) == "\u{FFFD}\u{FFFD}AB")
    }

    // MARK: Pacing

    @Test func pacedFetchesWaitThePaceBetweenRequests() async throws {
        let transport = ScriptedTransport([], fallback: okStep())
        let client = NYTClientTests.client(transport, pace: 0.3)
        let events = Locked<[NYTClient.Event]>([])
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<3 {
            _ = try await client.fetch(NYTClientTests.request) { event in events.withLock { $0.append(event) } }
        }
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(600), "three fetches took \(elapsed)")
        #expect(transport.calls == 3)
        let waits = events.value.compactMap { event -> Double? in
            if case .pacing(let seconds) = event { return seconds } else { return nil }
        }
        // One announcement per fetch that had to wait: both later ones, unless a busy machine kept this
        // task from running until the pace had passed (the long-pace cancellation test always waits).
        #expect(waits.count <= 2)
        #expect(waits.allSatisfy { $0 > 0 && $0 <= 0.3 })
    }

    @Test func unpacedFetchesDoNotWait() async throws {
        let transport = ScriptedTransport([], fallback: okStep())
        let client = NYTClientTests.client(transport, pace: 0)
        let events = Locked<[NYTClient.Event]>([])
        for _ in 0..<5 {
            _ = try await client.fetch(NYTClientTests.request) { event in events.withLock { $0.append(event) } }
        }
        #expect(transport.calls == 5)
        #expect(events.value.isEmpty)
    }

    /// A ledger that grants every request and counts from `start`.
    final class CountingLedger: RequestLedger {
        private let count: Mutex<Int>

        init(start: Int) {
            count = Mutex(start)
        }

        func reserve(at now: Date, pace: Double, dailyLimit: Int) throws(ClientError) -> LedgerSlot {
            .granted(
                requestsToday: count.withLock { count in
                    count += 1
                    return count
                })
        }
    }

    @Test(arguments: [
        (448, 5, [450]),  // requests 449 to 453: once when the day crosses 450
        (449, 3, [450]),  // 450 to 452: on the first request only
        (440, 70, [450, 500]),  // 441 to 510: again at 500
        (499, 4, [500]),  // 500 to 503: once, not for 450 too
    ])
    func quotaWarningIsGivenOncePerLevelReached(countBefore: Int, requests: Int, warnings: [Int]) async throws {
        let transport = ScriptedTransport([], fallback: okStep())
        let client = NYTClientTests.client(transport, ledger: CountingLedger(start: countBefore))
        let events = Locked<[NYTClient.Event]>([])
        for _ in 0..<requests {
            _ = try await client.fetch(NYTClientTests.request) { event in events.withLock { $0.append(event) } }
        }
        #expect(events.value == warnings.map { .quotaWarning(requestsToday: $0) })
    }

    @Test func retriesTakeTheirOwnLedgerSlots() async throws {
        let ledger = CountingLedger(start: 0)
        let transport = ScriptedTransport([statusStep(503), statusStep(429), okStep()])
        _ = try await NYTClientTests.client(transport, ledger: ledger).fetch(NYTClientTests.request)
        #expect(try ledger.reserve(at: Date(), pace: 0, dailyLimit: 500) == .granted(requestsToday: 4))
    }

    // MARK: Cancellation

    // The waits below are an hour long and cancellation is set only once the wait has begun, so a
    // test starved of threads (the parallel tests' blocking work can hold every thread of the pool
    // for a minute) cannot see the wait run out first; "promptly" is a bound far below the hour.

    /// Fetches with `client` until it announces a wait, then sets `cancelled`: how the fetch ended,
    /// how long after the cancellation, and the events it announced.
    static func cancelOnceWaiting(
        _ client: NYTClient, _ cancelled: Locked<Bool>, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws -> (error: ClientError?, elapsed: Duration, events: [NYTClient.Event])
    {
        let events = Locked<[NYTClient.Event]>([])
        let waiting = Task { await failure(of: client, events: events) }
        defer { cancelled.value = true }  // also when the check below ends the test early
        for _ in 0..<6_000 where events.value.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try #require(!events.value.isEmpty, "the wait never began", sourceLocation: sourceLocation)
        try await Task.sleep(for: .milliseconds(100))
        let clock = ContinuousClock()
        let cancelledAt = clock.now
        cancelled.value = true
        let error = await waiting.value
        return (error, clock.now - cancelledAt, events.value)
    }

    @Test func cancellationEndsAPaceWaitPromptly() async throws {
        let transport = ScriptedTransport([], fallback: okStep())
        let cancelled = Locked(false)
        let client = NYTClientTests.client(transport, pace: 3600, isCancelled: { cancelled.value })
        let clock = ContinuousClock()
        let slotTaken = clock.now
        _ = try await client.fetch(NYTClientTests.request)  // takes the slot; the next waits ~1 h

        let (error, elapsed, events) = try await NYTClientTests.cancelOnceWaiting(client, cancelled)
        let sinceSlot = (clock.now - slotTaken) / .seconds(1)
        #expect(error == .cancelled)
        // The wait polls every 0.1 s.
        #expect(elapsed < .seconds(600), "cancellation took \(elapsed)")
        #expect(transport.calls == 1)
        if case .pacing(let seconds)? = events.first {
            // The hour less what passed since the slot was taken: a starved run (a CI run announced
            // a wait of under 3,000 s after 650 s of waiting for a thread) still sees the hour.
            #expect(seconds <= 3600 && seconds >= 3600 - sinceSlot - 1, "announced \(seconds) s, \(sinceSlot) s after the slot")
        } else {
            Issue.record("expected a .pacing event, got \(events)")
        }
    }

    @Test func cancellationEndsABackoffWaitPromptly() async throws {
        let transport = ScriptedTransport([], fallback: statusStep(503))
        let cancelled = Locked(false)
        let configuration = NYTClient.Configuration(
            baseURL: NYTClientTests.base, apiKey: NYTClientTests.key, pace: 0,
            backoff: 3600, maximumRetries: 5, timeout: 1)
        let client = NYTClient(
            configuration: configuration, transport: transport, ledger: MemoryRequestLedger(),
            isCancelled: { cancelled.value })
        // Cancelled once the backoff wait has begun.
        let (error, elapsed, _) = try await NYTClientTests.cancelOnceWaiting(client, cancelled)
        #expect(error == .cancelled)
        #expect(elapsed < .seconds(600))
        #expect(transport.calls == 1)
    }

    @Test func cancelledBeforeStartingSendsNothing() async {
        let transport = ScriptedTransport([], fallback: okStep())
        let client = NYTClientTests.client(transport, isCancelled: { true })
        #expect(await NYTClientTests.failure(of: client) == .cancelled)
        #expect(transport.calls == 0)
    }

    // MARK: Validation

    @Test func invalidRequestsAndBasesFailBeforeAnythingIsSent() async {
        let transport = ScriptedTransport([], fallback: okStep())
        let client = NYTClientTests.client(transport)
        #expect(
            await NYTClientTests.failure(of: client, SearchRequest(page: 101))
                == .invalidRequest(parameter: "page", reason: "101 is outside 0...100"))

        let configuration = NYTClient.Configuration(baseURL: "ftp://api.example.test", apiKey: NYTClientTests.key, pace: 0)
        let badBase = NYTClient(configuration: configuration, transport: transport, ledger: MemoryRequestLedger())
        #expect(
            await NYTClientTests.failure(of: badBase)
                == .invalidRequest(parameter: "base URL", reason: "'ftp://api.example.test' is not an http(s) URL"))
        #expect(transport.calls == 0)
    }

    @Test func configurationDefaultsArePoliteToTheAPI() {
        let configuration = NYTClient.Configuration(apiKey: "k")
        #expect(configuration.baseURL == "https://api.nytimes.com")
        #expect(configuration.pace == 12)
        #expect(configuration.backoff == 2)
        #expect(configuration.maximumRetries == 5)
        #expect(configuration.timeout == 30)
    }

    // MARK: Errors

    @Test func errorsUnwrapFromTheirPageAndSayWhetherTheyMeanOffline() {
        let http = ClientError.http(status: 502, fault: "Bad Gateway", url: "u", attempts: 6)
        let wrapped = ClientError.onPage(3, .onPage(4, http))
        #expect(wrapped.underlying == http)
        #expect(wrapped.meansOffline)
        #expect(wrapped.errorDescription == "page 3: page 4: HTTP 502 from u: Bad Gateway (after 6 attempts)")
        #expect(!ClientError.onPage(0, .http(status: 429, fault: "", url: "u", attempts: 6)).meansOffline)
        #expect(ClientError.unreachable(url: "u", reason: "timed out", attempts: 1).meansOffline)
        #expect(!ClientError.cancelled.meansOffline)
        #expect(!ClientError.missingAPIKey.meansOffline)
    }
}
