import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// How often `repair` reads each document: once for a folder whose index is gone (the rebuild at
/// open is the read the repair trusts), never more than the work needs, and every time when the
/// log moved on after that read.
@Suite struct RepairReadTests {
    static let data = "/data"
    static let options = DocumentStore.Options(flushThreshold: 4, bulkFlushThreshold: 8, mergeFactor: 3)

    let fileSystem = FaultInjectingFileSystem()
    let ids = (0..<20).map { String(format: "doc%02d", $0) }

    /// A folder of 20 documents whose index and segments were then deleted.
    func folderWithoutIndex() throws {
        let store = try DocumentStore(folder: Self.data, schema: .testArticles, options: Self.options, fileSystem: fileSystem)
        for (i, id) in ids.enumerated() {
            try store.put(try JSONParser.parse(Array(#"{"headline": {"main": "Story \#(i)"}, "section_name": "S\#(i % 3)"}"#.utf8)), id: id)
        }
        #expect(try fileSystem.removeFile(Self.data + "/" + FileNames.index))
        for name in try fileSystem.entries(ofFolder: Self.data + "/" + FileNames.segments) ?? [] {
            _ = try fileSystem.removeFile(Self.data + "/" + FileNames.segments + "/" + name)
        }
    }

    func documentReads() -> [String: Int] {
        fileSystem.readCounts.filter { $0.key.hasPrefix(Self.data + "/" + FileNames.documents + "/") && $0.key.hasSuffix(".json") }
    }

    func open() throws -> DocumentStore {
        try DocumentStore(folder: Self.data, schema: .testArticles, options: Self.options, fileSystem: fileSystem)
    }

    @Test("repair of a folder whose index was deleted reads each document once and leaves nothing to fix")
    func missingIndexIsReadOnce() throws {
        try folderWithoutIndex()
        let before = documentReads()
        let store = try open()  // rebuilds the log and the segments from the documents
        let report = try store.repair()
        #expect(report.rebuiltIndex && report.renumbered)
        #expect(report.problems.isEmpty && report.remaining.isEmpty)
        let reads = documentReads()
        #expect(reads.count == ids.count)
        for (file, count) in reads { #expect(count - (before[file] ?? 0) == 1, "\(file) read \(count - (before[file] ?? 0)) times") }
        #expect(try store.count(matching: .field("section_name", [.eq(.string("S1"))])).count == 7)
        try expectConsistent(store)
    }

    @Test("a broken file found by the rebuild at open is quarantined; the documents are read once more, for the rebuild after it")
    func brokenFileIsQuarantinedWithOneMoreRead() throws {
        try folderWithoutIndex()
        let broken = FileNames.documentPath(for: "doc99", in: .testArticles)
        try fileSystem.createFolder(Self.data + "/" + (broken as NSString).deletingLastPathComponent)
        try fileSystem.write(Array(#"{"_id": "doc99", "headline": "#.utf8), to: Self.data + "/" + broken)
        let before = documentReads()
        let store = try open()
        let report = try store.repair()
        #expect(report.problems.map(\.kind) == [.unreadableDocument])
        #expect(report.quarantined.map(\.from) == [broken])
        #expect(report.remaining.isEmpty)
        for id in ids {
            let file = Self.data + "/" + FileNames.documentPath(for: id, in: .testArticles)
            #expect((documentReads()[file] ?? 0) - (before[file] ?? 0) == 2, "\(id)")
        }
        #expect(try store.entries().map(\.id) == ids)
        try expectConsistent(store)
    }

    @Test("after another writer appends to the rebuilt log, repair reads every document again")
    func movedLogIsNotTrusted() throws {
        try folderWithoutIndex()
        let store = try open()
        let other = try open()
        try other.put(try JSONParser.parse(Array(#"{"headline": {"main": "Late"}}"#.utf8)), id: "doc20")
        let before = documentReads()
        let report = try store.repair()
        #expect(report.problems.isEmpty && report.remaining.isEmpty)
        for id in ids {
            let file = Self.data + "/" + FileNames.documentPath(for: id, in: .testArticles)
            #expect((documentReads()[file] ?? 0) - (before[file] ?? 0) == 1, "\(id)")
        }
        try expectConsistent(store)
    }

    @Test("a file changed by hand after the rebuild at open is found by repair, which then reads every document")
    func handEditAfterOpenIsSeen() throws {
        try folderWithoutIndex()
        let store = try open()
        // doc03's file now holds doc04 (one byte longer): misplaced, and its own place is taken.
        let misplaced = FileNames.documentPath(for: "doc03", in: .testArticles)
        let takenBy = FileNames.documentPath(for: "doc04", in: .testArticles)
        let copy = try #require(try fileSystem.contents(of: Self.data + "/" + takenBy))
        try fileSystem.write(copy + Array(" ".utf8), to: Self.data + "/" + misplaced)
        let before = documentReads()
        let report = try store.repair()
        let first = Self.data + "/" + FileNames.documentPath(for: ids[0], in: .testArticles)
        #expect((documentReads()[first] ?? 0) > (before[first] ?? 0))
        #expect(report.problems.contains { $0.kind == .misplacedDocument && $0.file == misplaced })
        #expect(report.quarantined.map(\.from) == [misplaced])
        #expect(report.remaining.isEmpty)
        #expect(try store.document(withID: "doc03") == nil)
        try expectConsistent(store)
    }
}
