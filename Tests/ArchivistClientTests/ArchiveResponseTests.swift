import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct ArchiveResponseTests {
    @Test func theRealFebruary1963MonthDecodesEveryDocumentLosslessly() throws {
        let body = try NYTSamples.bytes("14_archive_1963_02_strike_era_3012docs_reserialized.json")
        let response = try ArchiveResponse(body: body, source: "sample 14")
        #expect(response.hits == 3012)
        #expect(response.documentCount == 3012)
        let expected = try responseDocs(body)
        let decoded = response.documents(0..<response.documentCount).compactMap { try? $0.get() }
        #expect(decoded.count == 3012)
        #expect(decoded == expected, "every document as a parse of the whole body gives it")
        #expect(decoded.allSatisfy { $0["news_desk"] == .string("None") || $0["news_desk"] == .string("") })
    }

    @Test func theRealStrikeMonthIsCompleteAndEmpty() throws {
        let response = try ArchiveResponse(
            body: try NYTSamples.bytes("10_archive_1978_09_strike_hits0_verbatim_from_issue.json"), source: "sample 10")
        #expect(response.hits == 0)
        #expect(response.documentCount == 0)
    }

    @Test func aCutOffBodyIsInvalidJSONNamingItsSource() throws {
        var generator = ArticleGenerator(seed: 3)
        let body = archiveBody(generator.documents(5))
        for length in [1, body.count / 3, body.count / 2, body.count - 1] {
            #expect {
                try ArchiveResponse(body: Array(body[..<length]), source: "response from X")
            } throws: { error in
                guard case ClientError.invalidJSON(let source, _) = error else { return false }
                return source == "response from X"
            }
        }
    }

    @Test func aFaultBodyIsRefusedWithTheAPIsMessage() throws {
        let body = Array(#"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#.utf8)
        #expect {
            try ArchiveResponse(body: body, source: "x")
        } throws: { error in
            (error as? ClientError)?.errorDescription?.contains("Invalid ApiKey") == true
        }
    }

    @Test func documentsThatCannotBeStoredAreErrorsNamingTheirPlace() throws {
        let body = Array(#"{"response":{"docs":[{"_id":"a"},7,{"headline":{}},{"_id":""}],"meta":{"hits":4}}}"#.utf8)
        let results = try ArchiveResponse(body: body, source: "x").documents(0..<4)
        #expect((try? results[0].get())?["_id"] == .string("a"))
        #expect(results[1].failureMessage?.hasPrefix("response.docs[1]: expected a document") == true)
        #expect(results[2] == .failure(.missingID(path: "response.docs[2]")))
        #expect(results[3] == .failure(.missingID(path: "response.docs[3]")))
    }

    @Test func batchesEndAtTheirDocumentCountOrBeforeTheirBytesRunOver() throws {
        // Documents of 11, 11, 37, 11 and 11 bytes.
        let docs = [#"{"_id":"a"}"#, #"{"_id":"b"}"#, #"{"_id":"c","x":"0123456789abcdefghi"}"#, #"{"_id":"d"}"#, #"{"_id":"e"}"#]
        let body = Array((#"{"response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":5}}}"#).utf8)
        let response = try ArchiveResponse(body: body, source: "x")
        #expect(docs.map(\.utf8.count) == [11, 11, 37, 11, 11])
        #expect(response.batchEnd(from: 0, documents: 2, bytes: 1_000) == 2)  // the count
        #expect(response.batchEnd(from: 0, documents: 10, bytes: 1_000) == 5)  // the end of the month
        #expect(response.batchEnd(from: 0, documents: 10, bytes: 30) == 2)  // the bytes: c would pass 30
        #expect(response.batchEnd(from: 2, documents: 10, bytes: 30) == 3)  // one document at least
        #expect(response.batchEnd(from: 3, documents: 10, bytes: 22) == 5)  // exactly the bytes
        #expect(response.batchEnd(from: 5, documents: 10, bytes: 30) == 5)
    }
}
