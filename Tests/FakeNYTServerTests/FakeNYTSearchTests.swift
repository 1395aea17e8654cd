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

@Suite("Fake NYT server: searching")
struct FakeNYTSearchTests {
    @Test func pagesHoldTenDocumentsWithTotalHitsAndOffset() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(25))
        let first = try await fetch(server)
        #expect(first.status == 200)
        #expect(first.header("Content-Type") == "application/json; charset=utf-8")
        #expect(try first.docs().count == 10)
        #expect(try first.meta("hits") == 25)
        #expect(try first.meta("offset") == 0)
        #expect(try first.meta("time") != nil)
        #expect(try first.json()["status"] == .string("OK"))
        #expect(try first.json()["copyright"] == .string(FakeNYTServer.copyright))
        let second = try await fetch(server, ["page": "1"])
        let third = try await fetch(server, ["page": "2"])
        #expect(try second.meta("offset") == 10)
        #expect(try third.docs().count == 5)
        #expect(try third.meta("offset") == 20)
        let all = try first.ids() + second.ids() + third.ids()
        #expect(Set(all).count == 25)
        #expect(all == all.sorted())  // relevance: a fixed order, by _id
    }

    @Test func pagePastTheEndIsEmptyButKeepsHits() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(25))
        let past = try await fetch(server, ["page": "3"])
        #expect(past.status == 200)
        #expect(try past.docs().isEmpty)
        #expect(try past.meta("hits") == 25)
        #expect(try past.meta("offset") == 30)
        let last = try await fetch(server, ["page": "100"])
        #expect(last.status == 200)
        #expect(try last.meta("offset") == 1000)
    }

    @Test(arguments: ["101", "-1", "abc", "1.5", ""])
    func pageOutsideZeroToHundredIsRejectedWith400(page: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(3))
        let reply = try await fetch(server, ["page": page])
        #expect(reply.status == 400)
        let body = try reply.json()
        #expect(body["status"] == .string("ERROR"))
        #expect(body["copyright"] == .string(FakeNYTServer.copyright))
        guard case .array(let errors)? = body["errors"] else {
            Issue.record("no errors array")
            return
        }
        #expect(errors.count == 1)
    }

    @Test func queryMatchesEveryWordCaseInsensitivelyAcrossTextFields() async throws {
        let server = try FakeNYTServer(documents: [
            document("a", "2020-01-01T00:00:00Z", headline: "Jury Weighs the Verdict"),
            document("b", "2020-01-01T00:00:00Z", headline: "Other", abstract: "the JURY was out", snippet: "a long verdict"),
            document("c", "2020-01-01T00:00:00Z", headline: "Other", lead: "Jurywork and verdicts"),
            document("d", "2020-01-01T00:00:00Z", headline: "Jury only"),
            document("e", "2020-01-01T00:00:00Z", headline: "Café Society in Zürich"),
        ])
        #expect(try await fetch(server, ["q": "jury verdict"]).ids() == ["a", "b", "c"])
        #expect(try await fetch(server, ["q": "VERDICT"]).meta("hits") == 3)
        #expect(try await fetch(server, ["q": "zürich café"]).ids() == ["e"])
        #expect(try await fetch(server, ["q": "nowhere"]).meta("hits") == 0)
        #expect(try await fetch(server, ["q": ""]).meta("hits") == 5)
        #expect(try await fetch(server, ["q": "  jury   only "]).ids() == ["d"])
    }

    @Test func filterQueryMatchesAnyOfTheListedValues() async throws {
        let server = try FakeNYTServer(documents: [
            document("a", "2020-01-01T00:00:00Z", section: "World", desk: "Foreign"),
            document("b", "2020-01-01T00:00:00Z", section: "Sports", desk: "Sports"),
            document("c", "2020-01-01T00:00:00Z", section: "Arts", desk: nil, material: "Review"),
            document("d", "2020-01-01T00:00:00Z", section: "U.S.", desk: "National", type: "multimedia", source: "AP"),
        ])
        #expect(try await fetch(server, ["fq": #"news_desk:("Sports" "Foreign")"#]).ids() == ["a", "b"])
        #expect(try await fetch(server, ["fq": #"section_name:"U.S.""#]).ids() == ["d"])
        #expect(try await fetch(server, ["fq": "type_of_material:Review"]).ids() == ["c"])
        #expect(try await fetch(server, ["fq": #"document_type:"multimedia" AND source:("AP")"#]).ids() == ["d"])
        #expect(try await fetch(server, ["fq": #"section_name:("World" "Sports") AND news_desk:"Sports""#]).ids() == ["b"])
        #expect(try await fetch(server, ["fq": #"section_name:"world""#]).ids() == [])  // exact, case-sensitive
        #expect(try await fetch(server, ["fq": "news_desk:Foreign", "q": "plain"]).ids() == ["a"])
    }

    @Test(arguments: [
        #"headline.main:"Jury""#, "section_name:(World)", #"section_name:"World" OR news_desk:"Foreign""#,
        #"section_name:"World"AND news_desk:"Foreign""#, "section_name:", #"pub_year:"2020""#, #"section_name:("World""#,
    ])
    func unsupportedFilterSyntaxIsRejectedWith400(fq: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let reply = try await fetch(server, ["fq": fq])
        #expect(reply.status == 400)
        #expect(try reply.json()["errors"] == .array([.string("Invalid fq: \(fq)")]))
    }

    @Test func dateRangeIsInclusiveAtBothEndsOnTheUTCDay() async throws {
        let server = try FakeNYTServer(documents: [
            document("before", "2019-12-31T23:59:59Z"),
            document("first", "2020-01-01T00:00:00Z"),
            document("firstOffset", "2020-01-01T23:59:59+0000"),
            document("last", "2020-01-02T23:59:59.999Z"),
            document("after", "2020-01-03T00:00:00+0000"),
        ])
        #expect(try await fetch(server, ["begin_date": "20200101", "end_date": "20200102"]).ids() == ["first", "firstOffset", "last"])
        #expect(try await fetch(server, ["begin_date": "20200102"]).ids() == ["after", "last"])
        #expect(try await fetch(server, ["end_date": "20191231"]).ids() == ["before"])
        #expect(try await fetch(server, ["begin_date": "20200103", "end_date": "20200103"]).ids() == ["after"])
    }

    @Test(arguments: ["2020-01-01", "20201301", "20200230", "2020011", "abcdefgh"])
    func invalidDateIsRejectedWith400(date: String) async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        #expect(try await fetch(server, ["begin_date": date]).status == 400)
        let reply = try await fetch(server, ["end_date": date])
        #expect(reply.status == 400)
        #expect(try reply.json()["status"] == .string("ERROR"))
    }

    @Test func sortNewestAndOldestOrderByPublicationDateThenId() async throws {
        let server = try FakeNYTServer(documents: [
            document("m", "2020-03-01T00:00:00Z"),
            document("b", "2020-01-01T10:00:00+0000"),
            document("a", "2020-01-01T10:00:00Z"),
            document("z", "2021-07-04T00:00:00Z"),
            document("c", "2019-05-05T05:05:05+0000"),
        ])
        #expect(try await fetch(server, ["sort": "newest"]).ids() == ["z", "m", "a", "b", "c"])
        #expect(try await fetch(server, ["sort": "oldest"]).ids() == ["c", "a", "b", "m", "z"])
        #expect(try await fetch(server, ["sort": "relevance"]).ids() == ["a", "b", "c", "m", "z"])
        #expect(try await fetch(server).ids() == ["a", "b", "c", "m", "z"])
        #expect(try await fetch(server, ["sort": "random"]).status == 400)
    }

    @Test func paginationUnderNewestIsStableAndComplete() async throws {
        // Many documents share a date: ties are broken by _id, so pages neither repeat nor skip.
        let documents = (0..<35).map {
            document(String(format: "t%02d", $0), $0 % 2 == 0 ? "2020-01-01T00:00:00Z" : "2020-01-02T00:00:00Z")
        }
        let server = try FakeNYTServer(documents: documents)
        var seen: [String] = []
        for page in 0..<4 { seen += try await fetch(server, ["sort": "newest", "page": String(page)]).ids() }
        #expect(seen.count == 35)
        #expect(Set(seen).count == 35)
        #expect(Array(seen.prefix(3)) == ["t01", "t03", "t05"])
    }

    @Test func metadataEnvelopeNamesTheCountsMetadata() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(12), envelope: .metadata)
        let reply = try await fetch(server, ["page": "1"])
        #expect(try reply.json()["response"]?["meta"] == nil)
        #expect(try reply.meta("hits", envelope: "metadata") == 12)
        #expect(try reply.meta("offset", envelope: "metadata") == 10)
        #expect(try reply.docs().count == 2)
    }

    @Test func documentsAreServedExactlyAsGiven() async throws {
        let corpus = ArticleGenerator.corpus(count: 30, seed: 7, from: "2019-01-01", to: "2019-12-31")
        let server = try FakeNYTServer(documents: corpus)
        let reply = try await fetch(server, ["sort": "oldest"])
        let served = try reply.docs()
        #expect(served == Array(corpus.prefix(10)))  // the corpus is in ascending date order
        let body = [UInt8](reply.body)
        for document in corpus.prefix(10) {
            let bytes = JSONWriter.compactBytes(document)
            #expect(body.firstRange(of: bytes) != nil)
        }
    }

    @Test func addGrowsTheResults() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(5, prefix: "a"))
        #expect(try await fetch(server).meta("hits") == 5)
        server.add(numberedDocuments(8, prefix: "b"))
        let reply = try await fetch(server, ["page": "1"])
        #expect(try reply.meta("hits") == 13)
        #expect(try reply.ids() == ["b05", "b06", "b07"])
    }

    @Test func unknownPathIsA404FaultAndNotRecorded() async throws {
        let server = try FakeNYTServer(documents: numberedDocuments(2))
        let reply = try await fetch(server, path: "/svc/search/v2/nothing.json")
        #expect(reply.status == 404)
        guard case .string(let message)? = try reply.json()["fault"]?["faultstring"] else {
            Issue.record("no faultstring")
            return
        }
        #expect(message.hasPrefix("Resource not found"))
        #expect(server.requests.isEmpty)
    }
}

// MARK: - Keys and faults
