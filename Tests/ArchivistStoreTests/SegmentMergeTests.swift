import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The k-way merge: segments merged are the segment a build of their live documents writes.
@Suite("segment merges")
struct SegmentMergeTests {
    /// A segment's bytes with its creation time and the footer's checksum (which covers it) zeroed.
    static func comparable(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        guard bytes.count >= SegmentFooter.size else { return bytes }
        let footer = bytes.count - SegmentFooter.size
        for offset in (footer + 88)..<(footer + 96) { bytes[offset] = 0 }
        for offset in (bytes.count - 8)..<bytes.count { bytes[offset] = 0 }
        return bytes
    }

    /// A segment's bytes as `comparable` gives them, with each field's flags and the block
    /// checksums (which cover the flags) zeroed too.
    static func comparableButFlags(_ bytes: [UInt8]) throws -> [UInt8] {
        let reader = try SegmentReader(FileBytes(bytes))
        var bytes = comparable(bytes)
        for section in reader.sections where section.kind == SegmentFile.SectionKind.dictionary.rawValue {
            let trailer = section.offset + section.length - 32
            for offset in trailer..<(trailer + 8) { bytes[offset] = 0 }
        }
        let footer = bytes.count - SegmentFooter.size
        let hashesOffset = bytes.withUnsafeBytes { Int(BinaryReader(buffer: $0).uint64(at: footer + 24) ?? 0) }
        for offset in hashesOffset..<footer { bytes[offset] = 0 }
        return bytes
    }

    /// The live tombstones of a store's segments, in ID order.
    static func liveTombstones(_ store: DocumentStore) throws -> [MappedSegment.Tombstone] {
        let segments = store.state.withLock { $0.entries.segments }
        var tombstones: [MappedSegment.Tombstone] = []
        for segment in segments {
            for index in 0..<segment.mapped.tombstoneCount where !segment.isDeleted(segment.mapped.count + index) {
                tombstones.append(try segment.mapped.tombstone(at: index))
            }
        }
        return tombstones.sorted { UTF8Bytes.precedes($0.id, $1.id) }
    }

    /// Merges every segment and requires the merged file to be what a build of the live entries
    /// and tombstones writes; with `flagsMayStay`, but for the fields' flags (a merge keeps a
    /// field's "arrays somewhere" flags after the documents that set them are gone, which only
    /// sends queries on the field to the slower exact path).
    static func expectMergeEqualsBuild(
        _ store: DocumentStore, folder: TemporaryFolder, _ context: String, flagsMayStay: Bool = false
    ) throws {
        let number = try #require(store.state.withLock { $0.manifest?.nextNumber })
        let built = try store.segmentBytes(number: number, tombstones: try liveTombstones(store))
        try store.mergeSegments()
        let merged = try #require(
            FileManager.default.contents(atPath: folder.data + "/" + FileNames.segments + "/" + Manifest.fileName(number: number))
                .map { [UInt8]($0) })
        #expect(try store.statistics().segments?.count == 1, "\(context)")
        #expect(merged.count == built.count, "\(context): merged \(merged.count) bytes, built \(built.count)")
        let (a, b) =
            flagsMayStay ? (try comparableButFlags(merged), try comparableButFlags(built)) : (comparable(merged), comparable(built))
        if a != b {
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            let (x, y) = (try MappedSegment(SegmentReader(FileBytes(merged))), try MappedSegment(SegmentReader(FileBytes(built))))
            let section = x.reader.sections.first { $0.offset <= first && first < $0.offset + $0.length }
            var entry = ""
            for ordinal in 0..<min(x.count, y.count) where try x.entry(at: ordinal) != y.entry(at: ordinal) {
                entry = "; entry \(ordinal): merged \(try x.entry(at: ordinal)), built \(try y.entry(at: ordinal))"
                break
            }
            Issue.record(
                "\(context): the merged segment differs from the built one from byte \(first) of \(b.count) (section kind \(section?.kind ?? 0))\(entry)"
            )
        }
        try expectConsistent(store)
    }

    @Test(
        "a merge of segments with additions, changes (new spellings, arrays, missing fields) and removals across them writes what a build writes",
        arguments: [UInt64(3), 17, 2024])
    func mergeEqualsBuild(seed: UInt64) throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(
            folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 5, flushThreshold: 0, mergeFactor: 1_000))
        var generator = ArticleGenerator(seed: seed)
        let generated = generator.documents(600)
        let ids = generated.compactMap { $0["_id"]?.stringValue }
        for result in try store.upsert(Array(generated[..<300])) { _ = try result.outcome.get() }
        try store.merge()
        for result in try store.upsert(Array(generated[300...])) { _ = try result.outcome.get() }
        try store.merge()

        // A third segment: awkward new documents, changed ones, removed ones, and a value whose
        // every document goes (its dictionary row must go too).
        for result in try store.upsert(QueryEdgeDocuments.edgeDocuments) { _ = try result.outcome.get() }
        let changed = stride(from: 0, to: ids.count, by: 7).map { index in
            generated[index].setting("section_name", to: .string(index % 2 == 0 ? "Changed After" : "Sports"))
                .setting("word_count", to: index % 3 == 0 ? .number("879.0") : .string("879"))
                .setting("abstract", to: .string("merged text \(index) zyzzyva"))
        }
        for result in try store.upsert(changed) { _ = try result.outcome.get() }
        _ = try store.remove(stride(from: 3, to: ids.count, by: 11).map { ids[$0] })
        let sections = Dictionary(grouping: generated, by: { $0["section_name"]?.stringValue ?? "" })
        if let (_, members) = sections.min(by: { $0.value.count < $1.value.count }) {
            _ = try store.remove(members.compactMap { $0["_id"]?.stringValue })
        }
        try store.merge()
        #expect(try store.statistics().segments?.count == 3)
        try Self.expectMergeEqualsBuild(store, folder: folder, "seed \(seed), first merge", flagsMayStay: true)

        // A second merge on top of a merged segment, with edge documents changed and removed.
        let edgeIDs = QueryEdgeDocuments.edgeDocuments.compactMap { $0["_id"]?.stringValue }
        _ = try store.remove(Array(edgeIDs.prefix(5)))
        let again = QueryEdgeDocuments.edgeDocuments.suffix(6).map { $0.setting("news_desk", to: .string("Late Desk")) }
        for result in try store.upsert(again) { _ = try result.outcome.get() }
        try store.put(try json(#"{"section_name": "Zzz Last", "abstract": "aardvark zyzzyva"}"#), id: "zzz-last")
        try store.put(try json(#"{"section_name": "   ", "pub_date": "1851-09-18"}"#), id: "!first")
        try store.merge()
        try Self.expectMergeEqualsBuild(store, folder: folder, "seed \(seed), second merge", flagsMayStay: true)

        // Everything removed: the merge keeps only the tombstones.
        _ = try store.remove(try store.entries().map(\.id))
        try store.merge()
        try Self.expectMergeEqualsBuild(store, folder: folder, "seed \(seed), all removed", flagsMayStay: true)
        #expect(try store.count == 0)
    }

    @Test("a segment built with its text index on another thread is the one a build on one thread writes")
    func buildOnTwoThreadsEqualsBuildOnOne() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 5, flushThreshold: 0))
        var generator = ArticleGenerator(seed: 5)
        // A flush of 4,096 documents or more builds its text index on a second thread.
        for result in try store.upsert(generator.documents(4_200) + QueryEdgeDocuments.edgeDocuments) { _ = try result.outcome.get() }
        let onOneThread = try store.segmentBytes(number: 1)
        try store.merge()
        let written = try #require(
            FileManager.default.contents(atPath: folder.data + "/" + FileNames.segments + "/" + Manifest.fileName(number: 1))
                .map { [UInt8]($0) })
        #expect(Self.comparable(written) == Self.comparable(onOneThread))
        try expectConsistent(store)
    }

    @Test("a merge that finds a segment damaged builds the segments again from the log, and the writes that follow merge again")
    func mergeOverADamagedSegmentBuildsFromTheLog() throws {
        let folder = try TemporaryFolder()
        // Two segments of one size class (below 200 documents), merged by the second merge().
        let options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 100, mergeFactor: 2)
        let store = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        for n in 0..<40 {
            try store.put(try json(#"{"section_name": "S\#(n % 5)", "abstract": "word\#(n) common"}"#), id: "d\(n)")
        }
        try store.merge()
        // Flip a byte of the text postings, which opening and writing never read but a merge does.
        let path = folder.data + "/" + FileNames.segments + "/" + Manifest.fileName(number: 1)
        var bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let reader = try SegmentReader(FileBytes(bytes))
        let postings = try #require(reader.section(.textPostings))
        bytes[postings.offset + postings.length / 2] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let writer = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        for n in 40..<44 { try writer.put(try json(#"{"section_name": "Late", "abstract": "late\#(n)"}"#), id: "d\(n)") }
        try writer.merge()
        #expect(try writer.statistics().documents == 44)
        #expect(try writer.statistics().changesAfterSegments == 0)
        try expectConsistent(writer)
        for n in 44..<48 { try writer.put(try json(#"{"section_name": "Later"}"#), id: "d\(n)") }
        try writer.merge()
        let fresh = try DocumentStore(folder: folder.data, schema: .testArticles, options: options)
        #expect(try fresh.count(matching: try FilterParser.parseAny("\"common\"")).count == 40)
        #expect(try fresh.count(matching: try FilterParser.parseAny("section_name = Late")).count == 4)
        try expectConsistent(fresh)
    }
}
