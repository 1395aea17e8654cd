import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The scan of `docs/` that `check`, `repair` and the rebuilds share: whole buckets, or pieces of
/// them with a small read-ahead.
@Suite("document scans")
struct ScanDocumentsTests {
    @Test(
        "a scan in pieces hands on every file once, each piece sorted and bounded, each bucket ending with its last piece",
        arguments: [1, 3, 7, 1_000])
    func piecesCoverTheBuckets(piece: Int) throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles)
        var generator = ArticleGenerator(seed: 31)
        for result in try store.upsert(generator.documents(300)) { _ = try result.outcome.get() }
        let projection = Projection(paths: ["section_name"])
        var whole: [String: [String]] = [:]
        try store.scanDocuments(projection: projection, known: nil) { (bucket, files) throws(StoreError) in
            whole[bucket] = files.map(\.file)
        }
        var pieces: [String: [String]] = [:]
        var order: [String] = []
        var ended: Set<String> = []
        try store.scanDocuments(projection: projection, known: nil, piece: piece, ahead: piece) {
            (bucket, files, isLast) throws(StoreError) in
            #expect(files.count <= piece && !ended.contains(bucket))
            #expect(files.map(\.file) == files.map(\.file).sorted { UTF8Bytes.precedes($0, $1) })
            if order.last != bucket { order.append(bucket) }
            pieces[bucket, default: []] += files.map(\.file)
            if isLast { ended.insert(bucket) }
        }
        #expect(order == whole.keys.sorted() && ended == Set(whole.keys))
        #expect(whole.values.reduce(0) { $0 + $1.count } == 300)
        for (bucket, files) in whole { #expect(Set(pieces[bucket] ?? []) == Set(files) && pieces[bucket]?.count == files.count) }
        #expect(try store.check().isEmpty)
    }
}
