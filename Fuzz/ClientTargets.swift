// libFuzzer targets for the client's parsers, compiled into the ArchivistClient module itself
// (`scripts/fuzz`), so that they reach the internal decoders of its files in the data folder.

import ArchivistBase

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The client's targets, by name.
nonisolated(unsafe) public let clientFuzzTargets: [String: ([UInt8]) -> Void] = [
    "response": fuzzResponse,
    "side-files": fuzzSideFiles,
]

/// A response body read as an Article Search page and as an Archive month: the two readers agree
/// on whether it is JSON, on the hit count and on every document, and each error has a message.
/// (Messages may quote the body; the shell makes each one line when it prints it.)
func fuzzResponse(_ bytes: [UInt8]) {
    let source = "response from fuzz"
    let page: Result<SearchResponse, ClientError>
    do throws(ClientError) { page = .success(try SearchResponse(body: bytes, source: source)) } catch { page = .failure(error) }
    let month: Result<ArchiveResponse, ClientError>
    do throws(ClientError) { month = .success(try ArchiveResponse(body: bytes, source: source)) } catch { month = .failure(error) }
    for case .failure(let error) in [page.map { _ in () }, month.map { _ in () }] {
        agree(!"\(error)".isEmpty, "an empty error message")
    }
    if case .failure(.invalidJSON) = page {
        if case .success = month { agree(false, "the Archive reader accepted a body that is not JSON") }
    }
    if case .failure(.invalidJSON) = month {
        if case .success = page { agree(false, "the search reader accepted a body the Archive reader found not JSON") }
    }
    guard case .success(let search) = page else { return }
    guard case .success(let archive) = month else {
        agree(false, "a search page the Archive reader refuses")
        return
    }
    agree(search.hits == archive.hits, "hits \(search.hits) and \(archive.hits)")
    agree(search.documents.count == archive.documentCount, "\(search.documents.count) and \(archive.documentCount) documents")
    agree(search.articles.count == search.documents.count, "an article for each document")
    var start = 0
    while start < archive.documentCount {
        let end = archive.batchEnd(from: start, documents: 3, bytes: 64)
        agree(end > start && end <= archive.documentCount, "a batch from \(start) ends at \(end)")
        for (offset, result) in archive.documents(start..<end).enumerated() {
            guard case .success(let document) = result else {
                agree(false, "document \(start + offset) of a page read whole is refused by the Archive reader")
                return
            }
            agree(document == search.documents[start + offset], "document \(start + offset) differs")
        }
        start = end
    }
}

/// The files the client keeps in a data folder (archive records, saved searches): any bytes
/// decode or fail with a one-line message naming the file, and what decodes writes back to bytes
/// that decode to the same thing.
func fuzzSideFiles(_ bytes: [UInt8]) {
    func check(_ error: StoreError) {
        let message = "\(error)"
        agree(message.contains("fuzz.json"), "a side file's error does not name it: \(message)")
    }
    do throws(StoreError) {
        let records = try ArchiveRecords.decode(bytes, path: "fuzz.json")
        let written = ArchiveRecords.encode(records)
        let again = try ArchiveRecords.decode(written, path: "fuzz.json")
        agree(ArchiveRecords.encode(again) == written, "archive records written, read and written again differ")
    } catch {
        check(error)
    }
    do throws(StoreError) {
        let searches = try SavedSearches.decode(bytes, path: "fuzz.json")
        let written = SavedSearches.encode(searches)
        let again = try SavedSearches.decode(written, path: "fuzz.json")
        agree(SavedSearches.encode(again) == written, "saved searches written, read and written again differ")
    } catch {
        check(error)
    }
}
