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

/// The Archive API body the fake server should send for `docs` (in this order): compact, `docs`
/// before `meta`, the archive's copyright.
func archiveBody(_ docs: [JSONValue], meta: String = "meta") -> [UInt8] {
    var out = Array(#"{"copyright":"Copyright (c) 2020 The New York Times Company. All Rights Reserved.","response":{"docs":["#.utf8)
    for (number, document) in docs.enumerated() {
        if number > 0 { out.append(UInt8(ascii: ",")) }
        JSONWriter.writeCompact(document, into: &out)
    }
    out.append(contentsOf: #"],"\#(meta)":{"hits":\#(docs.count)}}}"#.utf8)
    return out
}

/// Where a served body first differs from the expected bytes, or nil when they are equal (a
/// short message: comparing megabytes with `==` inside `#expect` would describe every byte).
func firstDifference(_ served: Data, _ expected: [UInt8]) -> String? {
    let bytes = [UInt8](served)
    guard bytes != expected else { return nil }
    let at = (0..<min(bytes.count, expected.count)).first { bytes[$0] != expected[$0] } ?? min(bytes.count, expected.count)
    func around(_ data: [UInt8]) -> String { String(decoding: data[max(0, at - 60)..<min(data.count, at + 60)], as: UTF8.self) }
    return "\(bytes.count) bytes served, \(expected.count) expected, first difference at byte \(at): "
        + "served …\(around(bytes))… expected …\(around(expected))…"
}

/// Documents in the archive's order: by `pub_date` instant, then by `_id` (UTF-8 bytes); undated ones dropped.
func inMonthOrder(_ docs: [JSONValue]) -> [JSONValue] {
    let dated = docs.compactMap { document -> (Int64, [UInt8], JSONValue)? in
        guard let instant = ISODate.instant(of: document["pub_date"]?.stringValue ?? "") else { return nil }
        return (instant, Array((document["_id"]?.stringValue ?? "").utf8), document)
    }
    return dated.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1.lexicographicallyPrecedes($1.1) }.map(\.2)
}

/// GETs the archive's answer for a month.
func fetchMonth(_ server: FakeNYTServer, _ year: Int, _ month: Int, key: String? = "test-key") async throws -> Reply {
    try await fetch(server, key: key, path: FakeNYTServer.archivePath(year: year, month: month))
}

/// The real answer for September and October 1978, as quoted in nytimes/public_api_specs#42
/// (nyt-samples/10_archive_1978_09_strike_hits0_verbatim_from_issue.json, 125 bytes).
let strikeBody =
    #"{"copyright":"Copyright (c) 2013 The New York Times Company.  All Rights Reserved.","response":{"meta":{"hits":0},"docs":[]}}"#

/// The current UTC year and month.
func currentMonth() -> (year: Int, month: Int) {
    let now = Timestamp.now().milliseconds
    let (year, month, _) = ISODate.civilFromDays(now / 86_400_000)
    return (Int(year), Int(month))
}

@Suite("Fake NYT server: the archive")
struct FakeNYTArchiveTests {
    @Test func fullCropSetsGoToTheChosenShareOfTheDocumentsWithCropsAndLeaveTheRestAlone() throws {
        let corpus = ArticleGenerator.corpus(count: 2_000, seed: 37, from: "2019-01-01", to: "2019-01-31")
        #expect(ArticleGenerator.withFullCropSets(corpus, percent: 0, seed: 37) == corpus)
        let cropped = ArticleGenerator.withFullCropSets(corpus, percent: 25, seed: 37)
        #expect(cropped == ArticleGenerator.withFullCropSets(corpus, percent: 25, seed: 37))  // depends only on the seed
        var withCrops = 0
        var changed = 0
        for (before, after) in zip(corpus, cropped) {
            guard case .array(let listed)? = before["multimedia"], listed.first?["crop_name"] != nil else {
                #expect(after == before)
                continue
            }
            withCrops += 1
            if after == before { continue }
            changed += 1
            guard case .array(let crops)? = after["multimedia"] else {
                Issue.record("multimedia is no longer an array")
                continue
            }
            #expect(crops.count == 68)
            // The crops listed before keep their URLs, in the same places; every crop is an image.
            for (index, crop) in listed.enumerated() { #expect(crops[index]["url"] == crop["url"]) }
            #expect(crops.allSatisfy { $0["type"] == .string("image") && $0["legacy"]?.isObject == true })
            // Nothing else of the document changes.
            #expect(after.setting("multimedia", to: .array(listed)) == before)
        }
        #expect(withCrops > 300)
        // About a quarter of them (binomial: well inside 15%-35%).
        #expect(Double(changed) > 0.15 * Double(withCrops) && Double(changed) < 0.35 * Double(withCrops), "\(changed) of \(withCrops)")
        // The bench's month: 10% take it past 20 MB at 8,000 documents; here the bytes grow accordingly.
        let before = corpus.reduce(0) { $0 + JSONWriter.compactBytes($1).count }
        let after = cropped.reduce(0) { $0 + JSONWriter.compactBytes($1).count }
        #expect(after > before + changed * 15_000)
    }

    @Test func archivePathHasNoLeadingZero() {
        #expect(FakeNYTServer.archivePath(year: 2019, month: 1) == "/svc/archive/v1/2019/1.json")
        #expect(FakeNYTServer.archivePath(year: 1851, month: 12) == "/svc/archive/v1/1851/12.json")
    }

    @Test func aMonthAnswersEachOfItsDocumentsOnceInDateOrder() async throws {
        let corpus = ArticleGenerator.corpus(count: 300, seed: 31, from: "2019-01-15", to: "2019-03-15")
        let server = try FakeNYTServer(documents: corpus)
        // Added out of order, with ties, and one whose local date is January but UTC date February.
        let added = [
            document("zz", "2019-02-10T00:00:00Z"), document("aa", "2019-02-10T00:00:00+0000"),
            document("tz", "2019-01-31T22:00:00-0500"), document("early", "2019-02-01T00:00:00Z"),
            document("march", "2019-02-28T23:30:00-0100"), document("undated", "someday"),
        ]
        server.add(added)
        let all = (corpus + added).filter { ISODate.instant(of: $0["pub_date"]?.stringValue ?? "") != nil }
        func inMonth(_ month: String) -> [JSONValue] {
            let first = ISODate.instant(of: month + "-01") ?? 0
            let next = ISODate.instant(of: month == "2019-02" ? "2019-03-01" : "2019-02-01") ?? 0
            return inMonthOrder(
                all.filter {
                    let instant = ISODate.instant(of: $0["pub_date"]?.stringValue ?? "") ?? -1
                    return instant >= first && instant < next
                })
        }
        let february = inMonth("2019-02")
        #expect(february.count > 100)
        let reply = try await fetchMonth(server, 2019, 2)
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
        #expect(firstDifference(reply.body, archiveBody(february)) == nil)
        let ids = try reply.ids()
        #expect(ids.count == Set(ids).count)
        #expect(try reply.meta("hits") == ids.count)
        #expect(ids.contains("tz") && ids.contains("early") && !ids.contains("march") && !ids.contains("undated"))
        #expect((ids.firstIndex(of: "aa") ?? Int.max) < (ids.firstIndex(of: "zz") ?? -1))  // a tie: by _id
        // January: the corpus's own documents, from the 15th on (and "tz" is not among them).
        let january = try await fetchMonth(server, 2019, 1)
        #expect(firstDifference(january.body, archiveBody(inMonth("2019-01"))) == nil)
        #expect(server.requests.map(\.path) == ["/svc/archive/v1/2019/2.json", "/svc/archive/v1/2019/1.json"])
        #expect(server.requests.first?.query["api-key"] == "test-key")
    }

    @Test func aMonthWithoutDocumentsAnswersHitsZeroAndNoDocs() async throws {
        let server = try FakeNYTServer(documents: ArticleGenerator.corpus(count: 50, seed: 32, from: "2019-01-01", to: "2019-01-31"))
        for (year, month) in [(2019, 2), (1851, 1), (1851, 9), (2000, 12)] {
            let reply = try await fetchMonth(server, year, month)
            #expect(reply.status == 200)
            #expect(firstDifference(reply.body, archiveBody([])) == nil)
            #expect(try reply.meta("hits") == 0)
            #expect(try reply.docs().isEmpty)
        }
        let now = currentMonth()
        #expect(try await fetchMonth(server, now.year, now.month).status == 200)  // a month that has begun
    }

    @Test func theMetadataEnvelopeNamesTheCountMetadata() async throws {
        let corpus = ArticleGenerator.corpus(count: 20, seed: 33, from: "2025-03-01", to: "2025-03-31")
        let server = try FakeNYTServer(documents: corpus, envelope: .metadata)
        let reply = try await fetchMonth(server, 2025, 3)
        #expect(firstDifference(reply.body, archiveBody(inMonthOrder(corpus), meta: "metadata")) == nil)
        #expect(try reply.meta("hits", envelope: "metadata") == 20)
    }

    @Test func theStrikeMonthsOf1978AnswerTheRealBodyWhateverTheCorpusHolds() async throws {
        // The generated corpus has documents in every month from August to November 1978.
        let corpus = ArticleGenerator.corpus(count: 400, seed: 34, from: "1978-08-01", to: "1978-11-30")
        let server = try FakeNYTServer(documents: corpus)
        #expect(corpus.contains { ($0["pub_date"]?.stringValue ?? "").hasPrefix("1978-09-") })
        #expect(FakeNYTServer.strikeMonthBody == Array(strikeBody.utf8))
        #expect(strikeBody.utf8.count == 125)
        for month in [9, 10] {
            let reply = try await fetchMonth(server, 1978, month)
            #expect(reply.status == 200)
            #expect(String(decoding: reply.body, as: UTF8.self) == strikeBody)
        }
        #expect((try await fetchMonth(server, 1978, 8).meta("hits") ?? 0) > 50)
        #expect((try await fetchMonth(server, 1978, 11).meta("hits") ?? 0) > 50)
        #expect(try await fetchMonth(server, 1978, 9, key: "wrong").status == 401)  // the key is still checked
    }

    @Test(arguments: [
        "/svc/archive/v1/2019/01.json", "/svc/archive/v1/2019/00.json", "/svc/archive/v1/19/1.json", "/svc/archive/v1/2019/1",
        "/svc/archive/v1/2019/1.json/more", "/svc/archive/v1/2019/-1.json", "/svc/archive/v1/2019.json", "/svc/archive/v1/2019/.json",
        "/svc/archive/v2/2019/1.json", "/svc/archive/v1/2019/100.json", "/svc/archive/v1/20190/1.json", "/svc/archive/v1/2019/1.JSON",
        "/svc/archive/v1/2019/1x.json", "/svc/archive/v1/+201/1.json", "/svc/archive/v1//2019/1.json",
    ])
    func aPathThatNamesNoMonthIsA404AndIsNotRecorded(path: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        server.enqueue([.serverError])
        let reply = try await fetch(server, path: path)
        #expect(reply.status == 404)
        #expect((try reply.json()["fault"]?["faultstring"]?.stringValue ?? "").hasPrefix("Resource not found"))
        #expect(server.requests.isEmpty)
        #expect(try await fetchMonth(server, 2020, 1).status == 500)  // the fault was left for the next real request
    }

    @Test func aMonthTheAPIRefusesIsA400WithTheErrorsBody() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let now = currentMonth()
        let refused =
            [(2019, 13), (2019, 0), (2019, 99), (1850, 12), (1000, 1), (now.year + 1, 1)]
            + [now.month == 12 ? (now.year + 1, 1) : (now.year, now.month + 1)]
        for (year, month) in refused {
            let reply = try await fetchMonth(server, year, month)
            #expect(reply.status == 400, "\(year)/\(month)")
            let body = try reply.json()
            #expect(body["status"] == .string("ERROR"))
            guard case .array(let errors)? = body["errors"], errors.count == 1 else {
                Issue.record("no errors array for \(year)/\(month)")
                continue
            }
        }
        #expect(
            try await fetchMonth(server, 2019, 13).json()["errors"]
                == .array([.string("Invalid month: 13. month must be an integer from 1 to 12")]))
        #expect(server.requests.count == refused.count + 1)  // recorded: they are API requests
    }

    @Test func aMissingOrWrongKeyIs401WithTheGatewaysBodies() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2), apiKey: "right")
        let missing = try await fetchMonth(server, 2020, 1, key: nil)
        #expect(missing.status == 401)
        #expect(try missing.json()["fault"]?["faultstring"] == .string("Failed to resolve API Key variable request.queryparam.api-key"))
        let wrong = try await fetchMonth(server, 2020, 1, key: "wrong")
        #expect(wrong.status == 401)
        #expect(
            try wrong.json()
                == JSONParser.parse(#"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#))
        #expect(try await fetchMonth(server, 2019, 13, key: "wrong").status == 401)  // the key comes before the month
        #expect(try await fetchMonth(server, 2020, 1, key: "right").meta("hits") == 2)
    }

    @Test func faultsApplyToArchiveRequestsInTheSameQueueAsSearches() async throws {
        let corpus = ArticleGenerator.corpus(count: 40, seed: 35, from: "2019-05-01", to: "2019-05-31")
        let server = try FakeNYTServer(documents: corpus)
        server.enqueue([.malformed, .rateLimited, .serverError, .forbiddenHTML, .unauthorized, .docsNull, .slow(seconds: 0.2)])
        let full = archiveBody(inMonthOrder(corpus))

        let malformed = try await fetchMonth(server, 2019, 5)
        #expect(malformed.status == 200)
        #expect(malformed.header("Content-Length") == String(malformed.body.count))
        #expect(firstDifference(malformed.body, Array(full.prefix(full.count / 2))) == nil)  // the first half of the real answer
        #expect(throws: JSONSyntaxError.self) { try malformed.json() }

        #expect(try await fetchMonth(server, 2019, 5).status == 429)
        #expect(try await fetch(server).status == 500)  // a search takes the next fault
        #expect(try await fetchMonth(server, 2019, 5).status == 403)
        #expect(try await fetchMonth(server, 2019, 5).status == 401)
        let null = try await fetchMonth(server, 2019, 5)
        #expect(null.status == 200)
        #expect(try null.json()["response"]?["docs"] == .null)
        #expect(try null.json()["copyright"] == .string(FakeNYTServer.archiveCopyright))
        #expect(try null.meta("hits") == 0)
        let slow = try await fetchMonth(server, 2019, 5)
        #expect(firstDifference(slow.body, full) == nil)
        #expect(firstDifference(try await fetchMonth(server, 2019, 5).body, full) == nil)
        #expect(
            server.requests.map(\.fault) == [
                .malformed, .rateLimited, .serverError, .forbiddenHTML, .unauthorized, .docsNull, .slow(seconds: 0.2), nil,
            ])
        #expect(server.requests.map(\.path).filter { $0 == FakeNYTServer.searchPath }.count == 1)
    }

    @Test func aTruncatedOrDroppedArchiveAnswerFails() async throws {
        let corpus = ArticleGenerator.corpus(count: 200, seed: 36, from: "2019-05-01", to: "2019-05-31")
        let server = try FakeNYTServer(documents: corpus)
        server.enqueue([.truncated, .dropConnection])
        do {
            let reply = try await fetchMonth(server, 2019, 5)
            #expect(reply.body.count < Int(reply.header("Content-Length") ?? "") ?? Int.max)
        } catch {
            // URLSession noticed the connection closed early: the expected outcome on Linux.
        }
        do {
            _ = try await fetchMonth(server, 2019, 5)
            Issue.record("a dropped connection gave an answer")
        } catch {}
        #expect(firstDifference(try await fetchMonth(server, 2019, 5).body, archiveBody(inMonthOrder(corpus))) == nil)
        #expect(server.requests.map(\.fault) == [.truncated, .dropConnection, nil])
    }

    @Test func aModernMonthOf8000DocumentsIsAtLeast16MB() async throws {
        let corpus = ArticleGenerator.corpus(count: 8000, seed: 5, from: "2019-01-01", to: "2019-01-31")
        let server = try FakeNYTServer(documents: corpus)
        let reply = try await fetchMonth(server, 2019, 1)
        #expect(reply.status == 200)
        #expect(reply.body.count >= 16_000_000, "\(reply.body.count) bytes")
        #expect(firstDifference(reply.body, archiveBody(inMonthOrder(corpus))) == nil)  // every document, once, in order, hits 8000
    }
}

// MARK: - The corpus generator
