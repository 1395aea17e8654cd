import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct ArchiveRecordsTests {
    @Test func recordsRoundTripAndAFailureDoesNotReplaceACompleteMonth() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let records = ArchiveRecords(store: try folder.store())
        let month = try #require(ArchiveMonth("1978-09"))
        var complete = ArchiveRecord(month: month, status: .complete, hits: 0, at: Date(timeIntervalSince1970: 1_700_000_000))
        complete.received = 0
        try records.save(complete)
        try records.save(ArchiveRecord(month: month, status: .failed, at: Date(), error: "HTTP 500"))
        #expect(try records.all() == [complete])
        var other = ArchiveRecord(
            month: ArchiveMonth("1851-09")!, status: .partial, hits: 12, at: Date(timeIntervalSince1970: 1_600_000_000.5))
        (other.received, other.stored, other.added, other.updated, other.unchanged, other.rejected) = (12, 5, 3, 1, 1, 0)
        try records.save(other)
        #expect(try records.all() == [other, complete], "oldest first")
        let text = String(decoding: try #require(fileBytes(try folder.store().sideFilePath(named: ClientFiles.archive))), as: UTF8.self)
        #expect(text.contains(#""1978-09""#) && text.contains(#""status": "complete""#), "\(text)")
    }

    @Test(arguments: [
        "not json", "[]", #"{"months": []}"#, #"{"months": {"2019-13": {"status": "complete", "at": "2026-01-01T00:00:00.000Z"}}}"#,
        #"{"months": {"2019-01": {"status": "done", "at": "2026-01-01T00:00:00.000Z"}}}"#,
        #"{"months": {"2019-01": {"status": "complete", "at": "yesterday"}}}"#,
        #"{"months": {"2019-01": {"status": "complete", "at": "2026-01-01T00:00:00.000Z", "stored": -1}}}"#,
    ])
    func anUnreadableFileIsAnErrorNamingItAndIsNotReplaced(contents text: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try folder.store()
        let path = store.sideFilePath(named: ClientFiles.archive)
        try writeFile(path, text)
        let records = ArchiveRecords(store: store)
        #expect { try records.all() } throws: { error in (error as? ClientError)?.errorDescription?.hasPrefix(path) == true }
        #expect { try records.save(ArchiveRecord(month: ArchiveMonth("2019-01")!, status: .complete, at: Date())) } throws: { _ in true }
        #expect(fileBytes(path) == Array(text.utf8))
    }
}
