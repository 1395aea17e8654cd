import ArchivistBase
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for the NYT Article Search API v2 (`GET /svc/search/v2/articlesearch.json`) and
/// Archive API v1 (`GET /svc/archive/v1/{year}/{month}.json`) that serves a fixed corpus over real
/// HTTP/1.1 on 127.0.0.1, for tests and for trying the tool offline.
///
/// It answers like the real API: `api-key` checked (401 with the gateway's fault body), `q` (every
/// word, case-insensitive, in headline, abstract, snippet or lead paragraph), a small `fq` subset
/// (`field:("A" "B")`, `field:"A"`, `field:A`, joined by ` AND `, on `section_name`, `news_desk`,
/// `type_of_material`, `document_type` and `source`), `begin_date`/`end_date` (`YYYYMMDD`, inclusive,
/// on the UTC day of `pub_date`), `sort` (`newest`, `oldest`, `relevance`), `page` (0...100, ten
/// documents a page), and 400 with an `errors` body for what it does not accept. Documents are
/// written exactly as given (compact, all keys, nulls kept).
///
/// The archive answers a month (`2019/1.json`, the month without a leading zero) with every document
/// whose `pub_date` falls in it (UTC), oldest first, in one body:
/// `{"copyright":...,"response":{"docs":[...],"meta":{"hits":N}}}`. The key is checked as for search;
/// a month outside 1...12, a year before 1851 or a month still to come is a 400 with an `errors`
/// body, and a path that does not name a month that way a 404. September and October 1978 (the
/// newspaper strike) are answered with the real API's bytes for them, `hits` 0 and `docs: []`,
/// whatever the corpus holds (`strikeMonthBody`). The corpus is indexed by month as it is added, so a
/// month is answered without going through the whole corpus.
///
/// Misbehaviour is scripted with `enqueue(_:)`: each of the next API requests (search or archive, in
/// order of arrival) takes one `Fault` (429, 401, 500, an HTML 403, a slow answer, a truncated or
/// malformed body, `docs: null`, a dropped connection). Every API request is recorded in `requests`.
///
/// One thread accepts connections and one thread serves each connection; every response closes its
/// connection (`Connection: close`). `stop()` (also run when the server is freed) shuts every socket
/// down, so later connections are refused and no thread is left blocked.
public final class FakeNYTServer: Sendable {
    /// How the response envelope is shaped.
    public enum Envelope: Sendable {
        /// 2013–2024: `response.meta` holds `hits`, `offset` and `time`.
        case meta
        /// 2025: `response.metadata` holds them.
        case metadata
    }

    /// A misbehaviour for one request.
    public enum Fault: Sendable, Equatable {
        /// 429 with the Apigee quota-violation body and no `Retry-After` header.
        case rateLimited
        /// 401 with the gateway's `Invalid ApiKey` body, whatever key was sent.
        case unauthorized
        /// 500 with a short JSON body.
        case serverError
        /// 403 with `Content-Type: text/html` and an HTML page (a proxy's error page).
        case forbiddenHTML
        /// Waits this many seconds before sending anything, then answers normally.
        case slow(seconds: Double)
        /// Sends the headers with the full `Content-Length`, then half the body, then closes.
        case truncated
        /// A complete 200 response whose JSON body is cut in half (`Content-Length` matches what is sent).
        case malformed
        /// A 200 whose `response.docs` is `null` (hits 0).
        case docsNull
        /// Reads the request, then closes the connection without answering.
        case dropConnection
    }

    /// One request received on the search or archive endpoint.
    public struct RecordedRequest: Sendable {
        /// The path, without the query string (`/svc/archive/v1/2019/1.json` for an archive request).
        public var path: String
        /// The query parameters, percent-decoded (`+` read as a space); a repeated name keeps its last value.
        public var query: [String: String]
        /// The fault this request was answered with, if any.
        public var fault: Fault?

        /// Creates a record.
        public init(path: String, query: [String: String], fault: Fault?) {
            self.path = path
            self.query = query
            self.fault = fault
        }
    }

    /// Why the server could not start listening.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// The system call that failed (`socket`, `bind`, `listen`, `getsockname`).
        public var operation: String
        /// The `errno` it left.
        public var code: Int32

        /// Creates an error.
        public init(operation: String, code: Int32) {
            self.operation = operation
            self.code = code
        }

        /// `bind failed: Address already in use`.
        public var description: String {
            "\(operation) failed: \(String(cString: strerror(code)))"
        }
    }

    /// The path of the Article Search endpoint (for the archive's, see `archivePath(year:month:)`).
    public static let searchPath = "/svc/search/v2/articlesearch.json"
    /// The copyright line every search body carries (archive bodies carry `archiveCopyright`).
    public static let copyright = "Copyright (c) 2019 The New York Times Company. All Rights Reserved."

    /// The engine, shared with the threads (which must not keep the server itself alive).
    let core: Core

    /// Starts listening on 127.0.0.1 on an ephemeral port (port 0) or the given port, serving `documents`.
    ///
    /// Throws `StartError` when the socket cannot be made or bound (the port is taken, for instance).
    public init(documents: [JSONValue], apiKey: String = "test-key", envelope: Envelope = .meta, port: UInt16 = 0) throws {
        core = try Core(apiKey: apiKey, envelope: envelope, port: port)
        core.add(documents)
        core.start()
    }

    deinit {
        core.stop()
    }

    /// The port the server listens on.
    public var port: Int { core.port }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(core.port)" }

    /// Adds documents to the corpus (and to the month index of the archive); later requests see them.
    public func add(_ documents: [JSONValue]) {
        core.add(documents)
    }

    /// Queues faults: each of the next requests to the search or archive endpoint takes one, in order.
    public func enqueue(_ faults: [Fault]) {
        core.state.withLock { $0.faults.append(contentsOf: faults) }
    }

    /// Every search and archive request received so far, in order of arrival (not those answered 404 or 405).
    public var requests: [RecordedRequest] {
        core.state.withLock { $0.requests }
    }

    /// Closes the listening socket and every open connection. Later connections are refused.
    /// Safe to call more than once and from any thread; does not wait for slow answers.
    public func stop() {
        core.stop()
    }
}

extension FakeNYTServer {
    /// The listening socket, the corpus and the scripted faults, shared by the server's threads.
    final class Core: Sendable {
        /// What changes while the server runs.
        struct State: Sendable {
            var entries: [Entry] = []
            /// The positions in `entries` of the documents of each UTC month (months since 1970).
            var months: [Int64: MonthIndex] = [:]
            var faults: [Fault] = []
            var requests: [RecordedRequest] = []
            /// Sockets of connections being served (shut down by `stop`).
            var connections: Set<Int32> = []
            var stopped = false
        }

        let apiKey: String
        let envelope: Envelope
        let listener: Int32
        let port: Int
        let state = Mutex(State())
        /// Signalled when the accept thread has left its loop.
        let acceptDone = DispatchSemaphore(value: 0)

        init(apiKey: String, envelope: Envelope, port requested: UInt16) throws {
            self.apiKey = apiKey
            self.envelope = envelope
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw StartError(operation: "socket", code: errno) }
            var yes: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = requested.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let code = errno
                close(fd)
                throw StartError(operation: "bind", code: code)
            }
            guard listen(fd, 128) == 0 else {
                let code = errno
                close(fd)
                throw StartError(operation: "listen", code: code)
            }
            var actual = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else {
                let code = errno
                close(fd)
                throw StartError(operation: "getsockname", code: code)
            }
            listener = fd
            port = Int(UInt16(bigEndian: actual.sin_port))
        }

        /// Starts the accept thread.
        func start() {
            Thread.detachNewThread { [self] in
                acceptLoop()
                acceptDone.signal()
            }
        }

        /// Adds documents to the corpus and files them in the month index.
        func add(_ documents: [JSONValue]) {
            let entries = documents.map(Entry.init)
            state.withLock { state in
                let start = state.entries.count
                state.entries.append(contentsOf: entries)
                Core.indexMonths(entries, from: start, in: &state)
            }
        }

        /// Whether `stop()` has run.
        var isStopped: Bool { state.withLock { $0.stopped } }

        /// Shuts every socket down, waits (briefly) for the accept thread to leave, closes the listener.
        func stop() {
            let first = state.withLock { state -> Bool in
                if state.stopped { return false }
                state.stopped = true
                // Under the lock: a connection thread removes its socket here before closing it, so
                // no number in the set can have been reused for another file.
                for connection in state.connections { _ = shutdown(connection, Int32(SHUT_RDWR)) }
                return true
            }
            guard first else { return }
            // On Linux, shutting a listening socket down wakes `accept` (EINVAL) and refuses new connections.
            _ = shutdown(listener, Int32(SHUT_RDWR))
            _ = acceptDone.wait(timeout: .now() + 2)
            close(listener)
        }

        /// Accepts connections until stopped, one thread per connection.
        private func acceptLoop() {
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    let code = errno
                    if isStopped { return }
                    if code == EINTR || code == ECONNABORTED || code == EAGAIN { continue }
                    if code == EBADF || code == EINVAL || code == ENOTSOCK { return }
                    usleep(10_000)  // EMFILE and the like: wait for connections to finish
                    continue
                }
                // Not inherited by child processes (accept4 is not in the Glibc module), so a test that
                // spawns a program cannot keep a connection open after `stop`.
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                let accepted = state.withLock { state -> Bool in
                    if state.stopped { return false }
                    state.connections.insert(connection)
                    return true
                }
                guard accepted else {
                    close(connection)
                    return
                }
                Thread.detachNewThread { [self] in
                    serve(connection)
                }
            }
        }
    }
}
