import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The real transport, `URLSessionTransport`, over real HTTP on 127.0.0.1 to the fake NYT server:
/// every request goes through `libArchivistNetwork.so`, which the transport loads with dlopen from
/// the folder of the running test executable (SwiftPM writes it there, next to `archivist`).
@Suite("URLSessionTransport through libArchivistNetwork.so")
struct URLSessionTransportTests {
    static let key = "transport-key-9c2"

    static func corpus() -> [JSONValue] {
        ArticleGenerator.corpus(count: 15, seed: 21, from: "2022-03-01", to: "2022-03-31")
    }

    static func url(_ server: FakeNYTServer, page: Int = 0, key: String = URLSessionTransportTests.key) throws -> URL {
        let request = SearchRequest(from: CalendarDay("2022-03-01"), to: CalendarDay("2022-03-31"), page: page)
        return try #require(request.url(base: server.baseURL, apiKey: key))
    }

    @Test func theLibraryIsFoundNextToTheRunningExecutable() throws {
        let library = try NetworkLibrary.shared.get()
        let folder = try #require(NetworkLibrary.executableFolder())
        #expect(library.path == folder + "/" + NetworkLibrary.fileName, "loaded from \(library.path), not next to \(folder)")
    }

    @Test func anAnswerComesBackWithStatusContentTypeAndTheWholeBody() async throws {
        let corpus = Self.corpus()
        let server = try FakeNYTServer(documents: corpus, apiKey: Self.key)
        let response = try await URLSessionTransport().get(try Self.url(server), timeout: 10)
        #expect(response.status == 200)
        #expect(response.contentType?.hasPrefix("application/json") == true, "\(response.contentType ?? "none")")
        let page = try SearchResponse(body: response.body, source: "test")
        #expect(page.hits == 15)
        #expect(page.documents.count == 10)
        #expect(server.requests.count == 1)
        #expect(server.requests.first?.query["api-key"] == Self.key)
    }

    @Test func anErrorStatusIsAnAnswerNotAFailure() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        let response = try await URLSessionTransport().get(try Self.url(server, key: "wrong"), timeout: 10)
        #expect(response.status == 401)
        #expect(NYTClient.describeFault(body: response.body, contentType: response.contentType).contains("Invalid ApiKey"))
    }

    @Test func aBodyLargerThanTheLimitIsCutShortAndFails() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        let whole = try await URLSessionTransport().get(try Self.url(server), timeout: 10)
        let limit = whole.body.count / 2  // the meta's `time` may change the length by a digit or two
        await #expect(throws: TransportFailure.other("the body is larger than \(limit) bytes, the most accepted")) {
            _ = try await URLSessionTransport(maximumBodyBytes: limit).get(try Self.url(server), timeout: 10)
        }
        let roomy = try await URLSessionTransport(maximumBodyBytes: whole.body.count + 64).get(try Self.url(server), timeout: 10)
        #expect(roomy.status == 200)
    }

    @Test func aBodyShorterThanItsContentLengthIsAConnectionLost() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        server.enqueue([.truncated])
        await #expect(throws: TransportFailure.connectionLost) {
            _ = try await URLSessionTransport().get(try Self.url(server), timeout: 10)
        }
    }

    @Test func aConnectionClosedWithoutAnAnswerIsAConnectionLost() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        server.enqueue([.dropConnection])
        await #expect(throws: TransportFailure.connectionLost) {
            _ = try await URLSessionTransport().get(try Self.url(server), timeout: 10)
        }
    }

    @Test func aSlowAnswerTimesOutAfterTheWholeSecondTimeout() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        server.enqueue([.slow(seconds: 60)])
        let started = Date()
        await #expect(throws: TransportFailure.timedOut) {
            _ = try await URLSessionTransport().get(try Self.url(server), timeout: 0.2)  // rounded up to 1 s
        }
        // A timeout rather than the answer, which comes after 60 s, and not before the rounded-up
        // second. No upper bound: in the whole suite the test resumes only when a thread of the
        // cooperative pool is free, and the blocking command-line tests can hold them for minutes.
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.9, "waited \(waited) s")
    }

    @Test func aStoppedServerRefusesTheConnectionAndTheReasonHasNoURL() async throws {
        let server = try FakeNYTServer(documents: [], apiKey: Self.key)
        let url = try Self.url(server)
        server.stop()
        do {
            _ = try await URLSessionTransport().get(url, timeout: 10)
            Issue.record("a stopped server answered")
        } catch {
            #expect(error == .cannotConnect("connection refused"))
            #expect(!error.reason.contains(Self.key))
        }
    }

    @Test func theDefaultClientFetchesThroughTheLibrary() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        let configuration = NYTClient.Configuration(baseURL: server.baseURL, apiKey: Self.key, pace: 0, backoff: 0.001, timeout: 10)
        let client = NYTClient(configuration: configuration)
        var request = SearchRequest(from: CalendarDay("2022-03-01"), to: CalendarDay("2022-03-31"))
        request.page = 1
        let page = try await client.fetch(request)
        #expect(page.hits == 15)
        #expect(page.documents.count == 5)
    }

    @Test func concurrentRequestsShareTheSessionAndEachGetsItsOwnAnswer() async throws {
        let server = try FakeNYTServer(documents: Self.corpus(), apiKey: Self.key)
        let transport = URLSessionTransport()
        let urls = try (0..<8).map { try Self.url(server, page: $0 % 2) }
        let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    let response = try await transport.get(url, timeout: 10)
                    return (index, try SearchResponse(body: response.body, source: "test").documents.count)
                }
            }
            var counts = [Int](repeating: -1, count: urls.count)
            for try await (index, count) in group { counts[index] = count }
            return counts
        }
        #expect(counts == [10, 5, 10, 5, 10, 5, 10, 5])
    }

    // MARK: Loading

    @Test func aFolderWithoutTheLibraryNamesTheLibraryAndTheFolder() throws {
        let result = NetworkLibrary.load(nextTo: "/nonexistent/bin", searchPath: false)
        #expect(throws: TransportFailure.unavailable("network library libArchivistNetwork.so not found next to /nonexistent/bin")) {
            try result.get()
        }
    }

    @Test func aFileThatIsNotALibraryIsNamedWithTheLoadersReason() throws {
        let temporary = try TemporaryFolder()
        defer { temporary.remove() }
        let folder = temporary.root
        let path = folder + "/" + NetworkLibrary.fileName
        try Data("not an ELF file".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try NetworkLibrary.load(nextTo: folder, searchPath: false).get()
            Issue.record("a text file loaded as the library")
        } catch {
            guard case .unavailable(let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.hasPrefix("network library \(path) cannot be loaded: "), "\(reason)")
            #expect(!reason.contains("\n"))
        }
    }

    @Test func aLibraryWithoutTheFunctionsIsRefused() throws {
        let zlib = URL(fileURLWithPath: "/lib/x86_64-linux-gnu/libz.so.1").resolvingSymlinksInPath().path
        try #require(FileManager.default.fileExists(atPath: zlib), "no \(zlib) to stand in for a foreign library")
        let temporary = try TemporaryFolder()
        defer { temporary.remove() }
        let folder = temporary.root
        let path = folder + "/" + NetworkLibrary.fileName
        try FileManager.default.copyItem(atPath: zlib, toPath: path)
        #expect(throws: TransportFailure.unavailable("network library \(path) is not archivist's: it lacks archivist_network_get")) {
            try NetworkLibrary.load(nextTo: folder, searchPath: false).get()
        }
    }

    @Test func aTransportThatCannotSendFailsTheFetchAtOnceWithoutCountingARequest() async throws {
        struct Unavailable: HTTPTransport {
            func prepare() throws(TransportFailure) { throw .unavailable("network library gone") }
            func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
                Issue.record("get was called")
                throw .unavailable("network library gone")
            }
        }
        let ledger = CountingLedger()
        let configuration = NYTClient.Configuration(baseURL: "http://127.0.0.1:9", apiKey: Self.key, pace: 0, backoff: 0.001)
        let client = NYTClient(configuration: configuration, transport: Unavailable(), ledger: ledger)
        await #expect(throws: ClientError.networkUnavailable(reason: "network library gone")) {
            _ = try await client.fetch(SearchRequest(query: "x"))
        }
        #expect(ledger.reservations.value == 0)
        #expect(ClientError.networkUnavailable(reason: "r").meansOffline == false)
    }
}

/// A ledger that grants every slot and counts them.
final class CountingLedger: RequestLedger {
    let reservations = Locked(0)

    func reserve(at now: Date, pace: Double, dailyLimit: Int) throws(ClientError) -> LedgerSlot {
        let count = reservations.withLock { value -> Int in
            value += 1
            return value
        }
        return .granted(requestsToday: count)
    }
}
