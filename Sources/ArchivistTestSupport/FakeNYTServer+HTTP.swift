import ArchivistBase
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// The HTTP side of the fake server: reading a request from a socket, routing it, applying the
// scripted fault and writing the response.

extension FakeNYTServer {
    /// A parsed HTTP request head.
    struct Request: Sendable {
        var method: String
        /// The path, without the query string.
        var path: String
        /// The query parameters, percent-decoded; a repeated name keeps its last value.
        var query: [String: String]
    }

    /// A response to write.
    struct Response: Sendable {
        var status: Int
        var contentType: String
        var body: [UInt8]

        /// A JSON response.
        static func json(_ status: Int, _ body: [UInt8]) -> Response {
            Response(status: status, contentType: "application/json; charset=utf-8", body: body)
        }

        /// The status line and headers, announcing `contentLength` body bytes.
        func head(contentLength: Int) -> [UInt8] {
            var text = "HTTP/1.1 \(status) \(Response.reason(status))\r\n"
            text += "Server: fake-nyt\r\n"
            text += "Content-Type: \(contentType)\r\n"
            text += "Content-Length: \(contentLength)\r\n"
            text += "Connection: close\r\n\r\n"
            return Array(text.utf8)
        }

        static func reason(_ status: Int) -> String {
            switch status {
            case 200: return "OK"
            case 400: return "Bad Request"
            case 401: return "Unauthorized"
            case 403: return "Forbidden"
            case 404: return "Not Found"
            case 405: return "Method Not Allowed"
            case 429: return "Too Many Requests"
            case 500: return "Internal Server Error"
            default: return "Status \(status)"
            }
        }
    }
}

extension FakeNYTServer.Core {
    /// The largest request head read; a longer one is answered with a 400.
    static let maximumHeadBytes = 64 * 1024

    /// Serves one connection: one request, one response, then close.
    func serve(_ connection: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(connection) }
            close(connection)
        }
        setTimeout(connection, seconds: 5)
        guard let request = readRequest(connection) else {
            send(FakeNYTServer.Response.json(400, FakeNYTServer.errorsBody("Malformed HTTP request")), on: connection)
            return
        }
        if let refusal = FakeNYTServer.refusal(of: request) {
            send(refusal, on: connection)
            return
        }
        guard let fault = takeFault(recording: request) else {
            send(answer(to: request), on: connection)
            return
        }
        respond(to: request, with: fault, on: connection)
    }

    /// Takes the next scripted fault, if any, and records the request with it.
    private func takeFault(recording request: FakeNYTServer.Request) -> FakeNYTServer.Fault? {
        state.withLock { state -> FakeNYTServer.Fault? in
            let fault = state.faults.isEmpty ? nil : state.faults.removeFirst()
            state.requests.append(FakeNYTServer.RecordedRequest(path: request.path, query: request.query, fault: fault))
            return fault
        }
    }

    /// The answer to a search or archive request that got no fault (or a fault that still answers).
    private func answer(to request: FakeNYTServer.Request) -> FakeNYTServer.Response {
        guard let month = FakeNYTServer.archiveMonth(ofPath: request.path) else { return answer(request.query) }
        return archiveAnswer(month, request.query)
    }

    /// Answers a search or archive request as `fault` scripts: an error body, a late, cut or
    /// malformed answer, or no answer at all.
    private func respond(to request: FakeNYTServer.Request, with fault: FakeNYTServer.Fault, on connection: Int32) {
        switch fault {
        case .rateLimited:
            let identifier = UUID().uuidString.lowercased()
            send(
                FakeNYTServer.Response.json(
                    429,
                    FakeNYTServer.faultBody(
                        "Rate limit quota violation. Quota limit  exceeded. Identifier : \(identifier)",
                        code: "policies.ratelimit.QuotaViolation")),
                on: connection)
        case .unauthorized:
            send(
                FakeNYTServer.Response.json(401, FakeNYTServer.faultBody("Invalid ApiKey", code: "oauth.v2.InvalidApiKey")), on: connection)
        case .serverError:
            send(
                FakeNYTServer.Response.json(
                    500, FakeNYTServer.faultBody("Internal Server Error", code: "messaging.adaptors.http.flow.ServiceUnavailable")),
                on: connection)
        case .forbiddenHTML:
            let page =
                "<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n"
                + "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            send(FakeNYTServer.Response(status: 403, contentType: "text/html", body: Array(page.utf8)), on: connection)
        case .slow(let seconds):
            guard pause(seconds) else { return }
            send(answer(to: request), on: connection)
        case .truncated:
            let response = answer(to: request)
            let half = Array(response.body.prefix(response.body.count / 2))
            _ = sendAll(response.head(contentLength: response.body.count) + half, on: connection)
            finish(connection)
        case .malformed:
            var response = answer(to: request)
            response.status = 200
            response.contentType = "application/json; charset=utf-8"
            response.body = Array(response.body.prefix(response.body.count / 2))
            send(response, on: connection)
        case .docsNull:
            let null = Array("null".utf8)
            let isArchive = FakeNYTServer.archiveMonth(ofPath: request.path) != nil
            send(
                FakeNYTServer.Response.json(
                    200, isArchive ? archiveBody(docs: null, hits: 0) : body(docs: null, hits: 0, offset: 0, time: 1)),
                on: connection)
        case .dropConnection:
            finish(connection)
        }
    }

    /// Sleeps `seconds` in short steps; false when the server was stopped meanwhile.
    private func pause(_ seconds: Double) -> Bool {
        guard seconds.isFinite, seconds > 0 else { return !isStopped }
        let deadline = DispatchTime.now().uptimeNanoseconds &+ UInt64(min(seconds, 86_400) * 1e9)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if isStopped { return false }
            let left = deadline - min(deadline, DispatchTime.now().uptimeNanoseconds)
            usleep(UInt32(min(left / 1000, 20_000)))
        }
        return !isStopped
    }

    /// Sets the receive and send timeouts of a socket.
    private func setTimeout(_ connection: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads up to the end of the request head and parses it; nil when the peer closes early, the
    /// head is too long or it is not HTTP.
    private func readRequest(_ connection: Int32) -> FakeNYTServer.Request? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            let searchStart = max(0, bytes.count - 3)
            bytes.append(contentsOf: chunk[0..<count])
            if let end = FakeNYTServer.firstIndex(of: terminator, in: bytes, from: searchStart) {
                return FakeNYTServer.parseHead(bytes[0..<end])
            }
            if bytes.count > Self.maximumHeadBytes { return nil }
        }
    }

    /// Writes a whole response, then closes gracefully.
    private func send(_ response: FakeNYTServer.Response, on connection: Int32) {
        _ = sendAll(response.head(contentLength: response.body.count) + response.body, on: connection)
        finish(connection)
    }

    /// Sends every byte (MSG_NOSIGNAL: a closed peer gives EPIPE, not SIGPIPE); false on failure.
    private func sendAll(_ bytes: [UInt8], on connection: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.send(connection, base + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Ends the connection gracefully: no more writes, then read until the peer closes (at most a
    /// second), so the peer sees an orderly end of stream rather than a reset.
    private func finish(_ connection: Int32) {
        _ = shutdown(connection, Int32(SHUT_WR))
        setTimeout(connection, seconds: 1)
        var sink = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = sink.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }
        }
    }
}

extension FakeNYTServer {
    /// The response to a request that is neither a search nor an archive month (another path, or
    /// not a GET), or nil.
    static func refusal(of request: Request) -> Response? {
        guard request.path == searchPath || archiveMonth(ofPath: request.path) != nil else {
            return notFound(request.path)
        }
        guard request.method == "GET" else {
            return Response.json(405, faultBody("Method not allowed", code: "messaging.adaptors.http.flow.MethodNotAllowed"))
        }
        return nil
    }

    /// Where `needle` first occurs in `haystack` at or after `start`.
    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    /// Parses a request head (without its final blank line); only the request line is read.
    static func parseHead(_ head: ArraySlice<UInt8>) -> Request? {
        let text = String(decoding: head, as: UTF8.self)
        guard let firstLine = text.components(separatedBy: "\r\n").first else { return nil }
        let requestLine = firstLine.split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/") else { return nil }
        let target = String(requestLine[1])
        let path: String
        var query: [String: String] = [:]
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = parseQuery(String(target[target.index(after: mark)...]))
        } else {
            path = target
        }
        return Request(method: String(requestLine[0]), path: path, query: query)
    }

    /// Splits a query string into decoded names and values (`+` is a space; the last repeat wins).
    static func parseQuery(_ text: String) -> [String: String] {
        var query: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: "=") {
                query[percentDecoded(pair[..<equals])] = percentDecoded(pair[pair.index(after: equals)...])
            } else {
                query[percentDecoded(pair)] = ""
            }
        }
        return query
    }

    /// Decodes `%XX` escapes and `+`; a malformed escape is kept as it is.
    static func percentDecoded(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "%"), i + 2 < bytes.count, let high = Hex.digit(bytes[i + 1]), let low = Hex.digit(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An Apigee-style fault body: `{"fault":{"faultstring":...,"detail":{"errorcode":...}}}`.
    static func faultBody(_ message: String, code: String) -> [UInt8] {
        Array("{\"fault\":{\"faultstring\":".utf8) + JSONWriter.compactBytes(.string(message))
            + Array(",\"detail\":{\"errorcode\":".utf8) + JSONWriter.compactBytes(.string(code)) + Array("}}}".utf8)
    }

    /// The API's 400 body: `{"status":"ERROR","copyright":...,"errors":[message]}`.
    static func errorsBody(_ message: String) -> [UInt8] {
        Array("{\"status\":\"ERROR\",\"copyright\":".utf8) + JSONWriter.compactBytes(.string(copyright))
            + Array(",\"errors\":[".utf8) + JSONWriter.compactBytes(.string(message)) + Array("]}".utf8)
    }

    /// 404 for any path but the search endpoint and the archive's months.
    static func notFound(_ path: String) -> Response {
        .json(404, faultBody("Resource not found: \(path)", code: "messaging.adaptors.http.flow.ApplicationNotFound"))
    }
}
