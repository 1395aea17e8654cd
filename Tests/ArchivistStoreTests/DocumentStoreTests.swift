import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

@Suite struct DocumentStoreTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    func openStore() throws -> DocumentStore {
        try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 1))
    }

    /// The path of the file holding the document with this ID.
    func documentFile(_ id: String) -> String {
        folder.data + "/" + FileNames.documentPath(for: id, in: .nyt)
    }

    // Spelled out, as the README names them, rather than taken from `FileNames`.
    var changeLog: String { folder.data + "/index.jsonl" }
    var metadataFile: String { folder.data + "/archivist.json" }

    func article(_ id: String, headline: String = "Slow to Show", wordCount: JSONValue = .number("879")) -> JSONValue {
        .object(sorting: [
            JSONMember(key: "_id", value: .string(id)),
            JSONMember(
                key: "headline",
                value: .object(sorting: [
                    JSONMember(key: "main", value: .string(headline)),
                    JSONMember(key: "kicker", value: .null),
                ])),
            JSONMember(key: "pub_date", value: .string("2016-08-12T00:00:00Z")),
            JSONMember(key: "section_name", value: .string("Opinion")),
            JSONMember(key: "word_count", value: wordCount),
            JSONMember(
                key: "keywords",
                value: .array([
                    .object(sorting: [
                        JSONMember(key: "value", value: .string("Automobiles")), JSONMember(key: "rank", value: .string("1")),
                    ]),
                    .object(sorting: [JSONMember(key: "value", value: .string("Odessa (Tex)"))]),
                ])),
            JSONMember(key: "byline", value: .array([])),
        ])
    }

    @Test func createsTheFolderWithMetadataAndNoDocuments() throws {
        let store = try openStore()
        #expect(try store.count == 0)
        let metadata = try String(contentsOfFile: metadataFile, encoding: .utf8)
        #expect(metadata.contains("\"format\": \(StoreMetadata.currentFormat)"))
        try expectConsistent(store)
    }

    @Test func putStoresPrettySortedJSONAndGetReturnsItUnchanged() throws {
        let store = try openStore()
        let doc = article("4fd2a0b78eb7c8105d88fd8e")
        #expect(try store.put(doc, id: "4fd2a0b78eb7c8105d88fd8e") == .added)
        let path = documentFile("4fd2a0b78eb7c8105d88fd8e")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == String(decoding: JSONWriter.prettyBytes(doc), as: UTF8.self))
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\"word_count\": 879"))
        #expect(text.contains("\"kicker\": null"))
        #expect(try store.document(withID: "4fd2a0b78eb7c8105d88fd8e") == doc)
        try expectConsistent(store)
    }

    @Test func putSetsTheIDWhenTheDocumentHasNone() throws {
        let store = try openStore()
        try store.put(try json(#"{"a":1}"#), id: "x")
        #expect(try store.document(withID: "x") == (try json(#"{"_id":"x","a":1}"#)))
        try expectConsistent(store)
    }

    @Test func putRefusesAConflictingIDOrANonObject() throws {
        let store = try openStore()
        #expect(throws: StoreError.invalidDocument(source: "ID 'x'", reason: "_id 'y' in the document differs from the ID")) {
            try store.put(try json(#"{"_id":"y"}"#), id: "x")
        }
        #expect(throws: StoreError.invalidDocument(source: "ID 'x'", reason: "a document must be a JSON object, not an array")) {
            try store.put(try json("[1]"), id: "x")
        }
        #expect(throws: StoreError.invalidID(id: "", reason: "must not be empty")) {
            try store.put(try json("{}"), id: "")
        }
        #expect(try store.count == 0)
        try expectConsistent(store)
    }

    @Test func upsertSkipsUnchangedDocument() throws {
        let store = try openStore()
        let doc = article("a")
        #expect(try store.put(doc, id: "a") == .added)
        let path = documentFile("a")
        let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let indexBefore = try Data(contentsOf: URL(fileURLWithPath: changeLog))
        Thread.sleep(forTimeInterval: 0.02)
        #expect(try store.put(doc, id: "a") == .unchanged)
        let after = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        #expect(before == after)
        #expect(try Data(contentsOf: URL(fileURLWithPath: changeLog)) == indexBefore)
        #expect(try store.put(article("a", headline: "New"), id: "a") == .updated)
        #expect(try store.document(withID: "a")?.values(atPath: ["headline", "main"]) == [.string("New")])
        try expectConsistent(store)
    }

    @Test func updateKeepsStoredAtAndMovesUpdatedAt() throws {
        let store = try openStore()
        try store.put(article("a"), id: "a")
        let first = try #require(try store.entry(forID: "a"))
        Thread.sleep(forTimeInterval: 0.01)
        try store.put(article("a", headline: "Changed"), id: "a")
        let second = try #require(try store.entry(forID: "a"))
        #expect(second.storedAt == first.storedAt)
        #expect(second.updatedAt > first.updatedAt)
        try expectConsistent(store)
    }

    @Test func addUsesTheDocumentIDOrAssignsAUUID() throws {
        let store = try openStore()
        let (given, outcome) = try store.add(article("nyt://article/0b1c0a4e-2b43-5d0e-9f47-2a8b7b31f7c9"))
        #expect(given == "nyt://article/0b1c0a4e-2b43-5d0e-9f47-2a8b7b31f7c9")
        #expect(outcome == .added)
        let (assigned, _) = try store.add(try json(#"{"note":"no id"}"#))
        #expect(UUID(uuidString: assigned) != nil)
        #expect(try store.document(withID: assigned)?["_id"] == .string(assigned))
        try expectConsistent(store)
    }

    @Test func batchUpsertReportsEachDocumentAndStoresTheGoodOnes() throws {
        let store = try openStore()
        try store.put(article("b"), id: "b")
        let results = try store.upsert([article("a"), article("b"), article("b", headline: "Twice"), .number("5"), try json(#"{"_id":7}"#)])
        #expect(results.map { try? $0.outcome.get() } == [.added, .unchanged, .updated, nil, nil])
        #expect(try store.count == 2)
        #expect(try store.document(withID: "b")?.values(atPath: ["headline", "main"]) == [.string("Twice")])
        try expectConsistent(store)
    }

    @Test func aPreparedBatchIsStoredLikeAnUpsertAndReportsTheSameResults() throws {
        let store = try openStore()
        try store.put(article("b"), id: "b")
        let batch = store.prepareUpsert([article("a"), article("b"), .number("5")])
        #expect(batch.count == 3)
        // Preparing wrote nothing.
        #expect(try store.count == 1)
        let results = try store.upsert(batch)
        #expect(results.map { try? $0.outcome.get() } == [.added, .unchanged, nil])
        #expect(results.map(\.id) == ["a", "b", nil])
        #expect(try store.count == 2)
        try expectConsistent(store)
    }

    @Test func aBatchPreparedBeforeTheProjectionChangedIsIndexedWithTheNewOne() throws {
        let store = try openStore()
        let batch = store.prepareUpsert([article("a", wordCount: .number("1200"))])
        let other = try openStore()  // as another process would
        try other.changeProjection(to: Projection(paths: store.projection.paths + ["byline"]))
        #expect(try store.upsert(batch).map { try? $0.outcome.get() } == [.added])
        #expect(store.projection.paths.contains("byline"))
        let entry = try #require(try store.entry(forID: "a"))
        let fields = try JSONParser.parse(try store.fieldsBytes(of: entry))
        #expect(fields["byline"] == .array([.array([])]), "the index line has the new projection's fields: \(fields)")
        let reopened = try openStore()
        #expect(try reopened.entry(forID: "a")?.hash == entry.hash)
        try expectConsistent(store)
        try expectConsistent(reopened)
    }

    @Test func removeDeletesFilesAndReportsMissingIDs() throws {
        let store = try openStore()
        try store.put(article("a"), id: "a")
        try store.put(article("b"), id: "b")
        #expect(try store.remove(["a", "zzz"]) == [true, false])
        #expect(try store.document(withID: "a") == nil)
        #expect(!FileManager.default.fileExists(atPath: documentFile("a")))
        #expect(try store.count == 1)
        try expectConsistent(store)
    }

    @Test func indexHoldsTheProjectionReadableWithJQ() throws {
        let store = try openStore()
        try store.put(article("a"), id: "a")
        let line = try String(contentsOfFile: changeLog, encoding: .utf8)
        let value = try JSONParser.parse(line)
        #expect(value["id"] == .string("a"))
        #expect(value["file"] == .string(FileNames.documentPath(for: "a", in: .nyt)))
        #expect(value["fields"]?["headline.main"] == .string("Slow to Show"))
        #expect(value["fields"]?["word_count"] == .number("879"))
        #expect(value["fields"]?["keywords.value"] == .array([.string("Automobiles"), .string("Odessa (Tex)")]))
        #expect(value["fields"]?["byline.original"] == nil)
        #expect(value["size"] != nil && value["hash"] != nil && value["stored_at"] != nil && value["updated_at"] != nil)
    }

    @Test func reopeningLoadsTheSameEntries() throws {
        let store = try openStore()
        for i in 0..<50 { try store.put(article("doc-\(i)", headline: "H \(i)"), id: "doc-\(i)") }
        try store.remove(["doc-3"])
        let reopened = try openStore()
        #expect(try reopened.entries() == (try store.entries()))
        // The removed document's line is dead; the removal line is its tombstone (kept by compact).
        #expect(try reopened.statistics().deadEntries == 1)
        #expect(try reopened.statistics().tombstones == 1)
        try expectConsistent(reopened)
    }

    @Test func aSecondStoreSeesTheFirstOnesCommitsAtItsNextCall() throws {
        let writer = try openStore()
        let reader = try openStore()
        try writer.put(article("a"), id: "a")
        #expect(try reader.document(withID: "a") == article("a"))
        try writer.compact()
        try writer.put(article("b"), id: "b")
        #expect(try reader.count == 2)
        try expectConsistent(reader)
    }

    @Test func compactDropsDeadEntriesAndKeepsTombstonesUntilPurged() throws {
        let store = try openStore()
        for i in 0..<5 { try store.put(article("a", headline: "v\(i)"), id: "a") }
        try store.put(article("b"), id: "b")
        try store.remove(["b"])
        #expect(try store.statistics().deadEntries == 5)
        #expect(try store.compact() == 5)
        var stats = try store.statistics()
        #expect(stats.deadEntries == 0 && stats.indexLines == 2 && stats.documents == 1 && stats.tombstones == 1)
        #expect(try openStore().entries() == (try store.entries()))
        try expectConsistent(store)
        #expect(try store.compact(purgeRemovals: true) == 1)
        stats = try store.statistics()
        #expect(stats.deadEntries == 0 && stats.indexLines == 1 && stats.documents == 1 && stats.tombstones == 0)
        #expect(stats.feedStart == 7)
        try expectConsistent(store)
    }

    @Test func aTornLastIndexLineIsIgnoredAndCutByTheNextWriter() throws {
        let store = try openStore()
        try store.put(article("a"), id: "a")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: changeLog))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"id":"b","hash":"#.utf8))
        handle.closeFile()
        let reader = try openStore()
        #expect(try reader.count == 1)
        try reader.put(article("c"), id: "c")
        let lines = try String(contentsOfFile: changeLog, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(try openStore().count == 2)
        try expectConsistent(reader)
    }

    @Test func anUnreadableIndexIsRebuiltFromTheDocumentsAndKeptInQuarantine() throws {
        let store = try openStore()
        for i in 0..<10 { try store.put(article("doc-\(i)"), id: "doc-\(i)") }
        try "not json at all\n".write(toFile: changeLog, atomically: false, encoding: .utf8)
        let reopened = try openStore()
        #expect(try reopened.count == 10)
        #expect(filesBelow(folder.data + "/quarantine").contains { $0.hasSuffix("index.jsonl") })
        try expectConsistent(reopened)
    }

    @Test(arguments: [#"{"id":"b","fields":"#, #"{"id":"b","hash":"#, #"{"id":"b","stored_at":"#, #"{"id":"b","updated_at":"#])
    func anIndexLineEndingAfterAKeyIsUnreadableNotReadPast(line: String) throws {
        let store = try openStore()
        for i in 0..<3 { try store.put(article("doc-\(i)"), id: "doc-\(i)") }
        // A complete line (newline-terminated) that stops right after a key's colon, in the middle.
        var index = try String(contentsOfFile: changeLog, encoding: .utf8)
        index += line + "\n" + #"{"id":"z","removed_at":"2026-11-29T00:00:00.000Z"}"# + "\n"
        try index.write(toFile: changeLog, atomically: false, encoding: .utf8)
        let reopened = try openStore()
        #expect(try reopened.count == 3)
        #expect(filesBelow(folder.data + "/quarantine").contains { $0.hasSuffix("index.jsonl") })
        try expectConsistent(reopened)
    }

    @Test func aWriterRebuildsAnIndexThatWasCorruptedWhileItWasOpen() throws {
        let store = try openStore()
        for i in 0..<5 { try store.put(article("doc-\(i)"), id: "doc-\(i)") }
        try "garbage\n".write(toFile: changeLog, atomically: true, encoding: .utf8)
        #expect(try store.put(article("doc-5"), id: "doc-5") == .added)
        let lines = try String(contentsOfFile: changeLog, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines.allSatisfy { (try? JSONParser.parse(String($0))) != nil })
        try expectConsistent(store)
    }

    @Test func aMissingIndexIsRebuiltNotTakenForAnEmptyStore() throws {
        let store = try openStore()
        for i in 0..<10 { try store.put(article("doc-\(i)"), id: "doc-\(i)") }
        try FileManager.default.removeItem(atPath: changeLog)
        let reopened = try openStore()
        #expect(try reopened.count == 10)
        try expectConsistent(reopened)
    }

    @Test func checkNamesEachProblemAndRepairFixesThemWithoutDeletingAnything() throws {
        let store = try openStore()
        for i in 0..<6 { try store.put(article("doc-\(i)"), id: "doc-\(i)") }
        // A truncated document, a non-JSON document, one without _id, one whose file went
        // missing, one edited by hand, and one stored under another's name.
        try FileManager.default.removeItem(atPath: documentFile("doc-0"))
        try FileManager.default.copyItem(atPath: fixture("truncated.json"), toPath: documentFile("doc-0"))
        try FileManager.default.removeItem(atPath: documentFile("doc-1"))
        try FileManager.default.copyItem(atPath: fixture("not-json.json"), toPath: documentFile("doc-1"))
        try #"{"headline":"no id"}"#.write(toFile: documentFile("doc-2"), atomically: false, encoding: .utf8)
        try FileManager.default.removeItem(atPath: documentFile("doc-3"))
        try String(decoding: JSONWriter.prettyBytes(article("doc-4", headline: "Edited")), as: UTF8.self)
            .write(toFile: documentFile("doc-4"), atomically: false, encoding: .utf8)
        try FileManager.default.moveItem(
            atPath: documentFile("doc-5"), toPath: folder.data + "/docs/" + FileNames.bucket(for: "doc-5") + "/elsewhere.json")
        let problems = try store.check()
        #expect(Set(problems.map(\.kind)) == [.unreadableDocument, .missingID, .missingDocument, .changedDocument, .misplacedDocument])
        #expect(problems.contains { $0.description.hasPrefix(FileNames.documentPath(for: "doc-0", in: .nyt) + ": invalid JSON at byte") })
        #expect(problems.contains { $0.kind == .missingDocument && $0.id == "doc-3" })
        #expect(problems.filter { $0.kind == .missingDocument }.count == 2)  // doc-3 and the misplaced doc-5

        let report = try store.repair()
        #expect(report.quarantined.count == 3)
        #expect(report.moved.map(\.to) == [FileNames.documentPath(for: "doc-5", in: .nyt)])
        #expect(report.rebuiltIndex)
        #expect(filesBelow(folder.data + "/quarantine").count == 3)
        #expect(Set(try store.entries().map(\.id)) == ["doc-4", "doc-5"])
        #expect(try store.document(withID: "doc-4")?.values(atPath: ["headline", "main"]) == [.string("Edited")])
        try expectConsistent(store)
    }

    @Test func theBrokenFixtureFolderIsReportedAndRepaired() throws {
        // A folder on disk with an index pointing at a missing document, a truncated document and
        // a file the store does not own.
        try FileManager.default.copyItem(atPath: fixture("broken-folder"), toPath: folder.data)
        let store = try openStore()
        let problems = try store.check()
        #expect(problems.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.missingDocument, .unreadableDocument])
        _ = try store.repair()
        #expect(try store.entries().map(\.id) == ["4fd2a0b78eb7c8105d88fd8e"])
        #expect(FileManager.default.fileExists(atPath: folder.data + "/README.md"))
        try expectConsistent(store)
    }

    @Test func aNewerFormatIsRefusedAndTheFolderLeftAlone() throws {
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        try #"{"format": 99}"#.write(toFile: metadataFile, atomically: false, encoding: .utf8)
        #expect(throws: StoreError.newerFormat(path: metadataFile, found: 99, supported: StoreMetadata.currentFormat)) {
            try openStore()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.data) == ["archivist.json"])
    }

    @Test func anUnreadableMetadataFileIsAnErrorNotAReset() throws {
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        try "{format".write(toFile: metadataFile, atomically: false, encoding: .utf8)
        #expect(throws: StoreError.self) { try openStore() }
        #expect(try String(contentsOfFile: metadataFile, encoding: .utf8) == "{format")
    }

    @Test func aWriterWaitsForTheLockThenNamesTheHolder() throws {
        let store = try openStore()
        let token = try POSIXFileSystem().lockExclusively(folder.data + "/archivist.lock", timeout: 0)
        defer { token.release() }
        let other = try DocumentStore(folder: folder.data, schema: .testArticles, options: .init(lockTimeout: 0.2))
        // flock locks belong to the open file description, so a second open in this process conflicts.
        #expect(throws: StoreError.locked(path: folder.data + "/archivist.lock", holder: "pid \(getpid())", waitedSeconds: 0)) {
            do { try other.put(article("a"), id: "a") } catch let error as StoreError {
                if case .locked(let path, let holder, _) = error { throw StoreError.locked(path: path, holder: holder, waitedSeconds: 0) }
                throw error
            }
        }
        token.release()
        #expect(try store.put(article("a"), id: "a") == .added)
    }

    @Test func filesTheStoreDoesNotOwnAreIgnored() throws {
        try FileManager.default.createDirectory(atPath: folder.data + "/docs/zz", withIntermediateDirectories: true)
        try "# notes".write(toFile: folder.data + "/README.md", atomically: false, encoding: .utf8)
        try "x".write(toFile: folder.data + "/docs/zz/notes.txt", atomically: false, encoding: .utf8)
        let store = try openStore()
        try store.put(article("a"), id: "a")
        #expect(try store.check().isEmpty)
        _ = try store.repair()
        #expect(FileManager.default.fileExists(atPath: folder.data + "/README.md"))
        #expect(FileManager.default.fileExists(atPath: folder.data + "/docs/zz/notes.txt"))
    }

    @Test(arguments: [
        "../../etc/passwd", "a/b", "with space", "ünïcödé", String(repeating: "long", count: 75), "ABC", "abc", "e\u{301}", "\u{e9}",
    ])
    func anyIDRoundTripsAndStaysInsideTheFolder(id: String) throws {
        let store = try openStore()
        try store.put(try json(#"{"v":1}"#), id: id)
        #expect(try store.document(withID: id)?["_id"] == .string(id))
        for file in filesBelow(folder.root) {
            #expect(file.hasPrefix("data/"), "\(file) is outside the data folder")
        }
        let reopened = try openStore()
        #expect(try reopened.entries().map(\.id) == [id])
        try expectConsistent(reopened)
    }

    @Test func idsThatAreCanonicallyEquivalentStayDistinct() throws {
        let store = try openStore()
        try store.put(try json(#"{"v":1}"#), id: "e\u{301}")
        try store.put(try json(#"{"v":2}"#), id: "\u{e9}")
        #expect(try store.count == 2)
        #expect(try store.document(withID: "\u{e9}")?["v"] == .number("2"))
        try expectConsistent(store)
    }
}
