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

@Suite("Fake NYT server: keys and faults")
struct FakeNYTFaultTests {
    @Test func wrongKeyIs401WithTheGatewayFaultBody() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2), apiKey: "right")
        let reply = try await fetch(server, key: "wrong")
        #expect(reply.status == 401)
        #expect(
            try reply.json()
                == JSONParser.parse(#"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#))
        #expect(try await fetch(server, key: "right").status == 200)
    }

    @Test func missingKeyIs401FailedToResolve() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let reply = try await fetch(server, key: nil)
        #expect(reply.status == 401)
        #expect(try reply.json()["fault"]?["faultstring"] == .string("Failed to resolve API Key variable request.queryparam.api-key"))
    }

    @Test func rateLimitedIs429WithQuotaBodyAndNoRetryAfter() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.rateLimited])
        let reply = try await fetch(server)
        #expect(reply.status == 429)
        #expect(reply.header("Retry-After") == nil)
        let body = try reply.json()
        #expect(body["fault"]?["detail"]?["errorcode"] == .string("policies.ratelimit.QuotaViolation"))
        let message = body["fault"]?["faultstring"]?.stringValue ?? ""
        #expect(message.hasPrefix("Rate limit quota violation. Quota limit  exceeded. Identifier : "))
        #expect(message.count == "Rate limit quota violation. Quota limit  exceeded. Identifier : ".count + 36)
        #expect(try await fetch(server).status == 200)  // one fault, one request
    }

    @Test func unauthorizedFaultIs401EvenWithTheRightKey() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.unauthorized])
        let reply = try await fetch(server)
        #expect(reply.status == 401)
        #expect(try reply.json()["fault"]?["detail"]?["errorcode"] == .string("oauth.v2.InvalidApiKey"))
    }

    @Test func serverErrorIs500WithJSONBody() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError])
        let reply = try await fetch(server)
        #expect(reply.status == 500)
        #expect(try reply.json()["fault"] != nil)
    }

    @Test func forbiddenHTMLIs403WithAnHTMLPage() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.forbiddenHTML])
        let reply = try await fetch(server)
        #expect(reply.status == 403)
        #expect(reply.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(String(decoding: reply.body, as: UTF8.self).contains("<html>"))
        #expect(throws: JSONSyntaxError.self) { try reply.json() }
    }

    @Test func slowAnswersAfterAtLeastTheGivenTime() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.slow(seconds: 1)])
        let clock = ContinuousClock()
        let start = clock.now
        let reply = try await fetch(server)
        let elapsed = clock.now - start
        #expect(elapsed >= .seconds(1))
        #expect(reply.status == 200)
        #expect(try reply.meta("hits") == 2)
    }

    @Test func truncatedBodyFailsOrComesShortOfContentLength() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12))
        server.enqueue([.truncated])
        do {
            let reply = try await fetch(server)
            let announced = Int(reply.header("Content-Length") ?? "") ?? Int.max
            #expect(reply.body.count < announced)
            #expect(throws: JSONSyntaxError.self) { try reply.json() }
        } catch {
            // URLSession noticed the connection closed early: that is the expected outcome on Linux.
        }
        #expect(server.requests.map(\.fault) == [.truncated])
        #expect(try await fetch(server).status == 200)
    }

    @Test func malformedIsA200WhoseBodyIsNotValidJSON() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12))
        server.enqueue([.malformed])
        let reply = try await fetch(server)
        #expect(reply.status == 200)
        #expect(reply.header("Content-Length") == String(reply.body.count))
        #expect(reply.body.count > 100)
        #expect(throws: JSONSyntaxError.self) { try reply.json() }
    }

    @Test func docsNullIsA200WithNullDocsAndZeroHits() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12))
        server.enqueue([.docsNull])
        let reply = try await fetch(server)
        #expect(reply.status == 200)
        #expect(try reply.json()["response"]?["docs"] == .null)
        #expect(try reply.meta("hits") == 0)
    }

    @Test func dropConnectionMakesTheRequestFail() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.dropConnection])
        let error = await failure(server)
        #expect(error != nil)
        #expect(server.requests.map(\.fault) == [.dropConnection])
        #expect(try await fetch(server).status == 200)
    }

    @Test func faultsApplyInOrderToSearchRequestsOnly() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError, .rateLimited])
        #expect(try await fetch(server, path: "/elsewhere").status == 404)
        #expect(try await fetch(server).status == 500)
        #expect(try await fetch(server, key: "wrong").status == 429)  // the fault comes before the key check
        #expect(try await fetch(server).status == 200)
        #expect(server.requests.map(\.fault) == [.serverError, .rateLimited, nil])
    }

    @Test func requestsAreRecordedWithDecodedQuery() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError])
        _ = try await fetch(server, ["q": "café & crème+brûlée", "fq": #"news_desk:("Sports" "Foreign")"#, "page": "0"])
        _ = try await fetch(server, ["begin_date": "20200101"])
        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.first?.path == FakeNYTServer.searchPath)
        #expect(
            requests.first?.query == [
                "q": "café & crème+brûlée", "fq": #"news_desk:("Sports" "Foreign")"#, "page": "0",
                "api-key": "test-key",
            ])
        #expect(requests.first?.fault == .serverError)
        #expect(requests.last?.query["begin_date"] == "20200101")
        #expect(requests.last?.fault == nil)
    }

    @Test func stopRefusesLaterConnectionsAndIsIdempotent() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        #expect(try await fetch(server).status == 200)
        server.stop()
        server.stop()
        let error = await failure(server)
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test func stopDoesNotWaitForASlowAnswer() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.slow(seconds: 120)])
        let pending = Task { await failure(server) }
        // The request is recorded before the slow wait. Polls are counted rather than timed: while
        // the parallel tests' blocking work holds every thread of the pool, neither this loop nor
        // the fetch runs, and a clock would run out without either having had a turn.
        for _ in 0..<6_000 where server.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        if server.requests.isEmpty {
            server.stop()
            Issue.record("no request arrived after 6,000 polls; the fetch ended with \(String(describing: await pending.value))")
            return
        }
        let clock = ContinuousClock()
        let start = clock.now
        server.stop()
        // Far below the 120 s answer, with room for a busy machine.
        #expect(clock.now - start < .seconds(10))
        let error = await pending.value
        // The server closed the connection ("empty reply"); the client did not give up on its own.
        let code = try #require(error as? URLError, "\(String(describing: error))").code
        #expect(code != .timedOut, "\(String(describing: error))")
    }

    @Test func freeingTheServerStopsIt() async throws {
        var server: FakeNYTServer? = try FakeNYTServer(documents: numberedDocuments(2))
        let url = try #require(server.map { URL(string: $0.baseURL + FakeNYTServer.searchPath + "?api-key=test-key") } ?? nil)
        server = nil
        do {
            _ = try await session.data(for: URLRequest(url: url))
            Issue.record("a freed server still answered")
        } catch {
            #expect((error as? URLError)?.code == .cannotConnectToHost)
        }
    }

    @Test func aTakenPortThrowsStartError() throws {
        let first = try FakeNYTServer(documents: [])
        #expect(throws: FakeNYTServer.StartError.self) {
            _ = try FakeNYTServer(documents: [], port: UInt16(first.port))
        }
    }
}

// MARK: - The archive
