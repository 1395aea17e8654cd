import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Opening a folder of format 1 (a real one, made by archivist before the snapshot) or 3 (a real
/// one with `index.snapshot`, made by the last build before segments: see `Fixtures/SOURCES.md`)
/// migrates it to the current format (4, segments), keeps every document and the log byte for
/// byte, and survives a crash at any point of the migration.
@Suite("Migration")
struct MigrationTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// The format-1 fixture's documents: 41 live (NYT samples of 2016-2025 and one hand-made),
    /// with an update, a removal and an unchanged re-import in its log.
    static let documentCount = 41

    /// The fixture's files (relative path to bytes), as they were made.
    static func fixtureFiles(_ name: String = "format-1") throws -> [String: [UInt8]] {
        let root = fixture(name)
        var files: [String: [UInt8]] = [:]
        for relative in filesBelow(root) {
            files[relative] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative)))
        }
        return files
    }

    /// A copy of the fixture in this test's folder.
    func copyFixture(_ name: String = "format-1") throws -> String {
        try FileManager.default.copyItem(atPath: fixture(name), toPath: folder.data)
        return folder.data
    }

    /// What an entry says of its document, whichever structure it was read from.
    static func content(_ entries: [IndexEntry]) -> [String] {
        entries.map(PowerLossTests.content)
    }

    /// The live documents a store's segments hold (nil: it read the whole log).
    static func segmentDocuments(_ store: DocumentStore) throws -> Int? {
        try store.statistics().segments.map { $0.reduce(0) { $0 + $1.documents - $1.deletedDocuments } }
    }

    /// The format written in a folder's `archivist.json`.
    static func format(in folder: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> Int? {
        guard let bytes = try fileSystem.contents(of: folder + "/" + FileNames.metadata) else { return nil }
        return try StoreMetadata.decode(bytes, path: folder, schema: .testArticles).format
    }

    /// Filters whose answers must not change with the migration.
    static let filters = [
        "section_name = \"Business Day\"", "pub_date >= 2019-01-01", "word_count > 800", "\"bailout\"", "note exists",
    ]

    /// The answers of `filters` (IDs in the order found, sorted by date then ID) and a facet.
    static func answers(_ store: DocumentStore) throws -> [String] {
        var answers: [String] = []
        for text in filters {
            let result = try store.find(Query(filter: try FilterParser.parseAny(text), sort: [SortKey("pub_date")]))
            answers.append(text + ": " + result.ids.joined(separator: ","))
        }
        let facet = try store.facet("section_name", matching: .all, limit: nil)
        answers.append("facet: " + facet.values.map { "\($0.value)=\($0.count)" }.joined(separator: ","))
        return answers
    }

    @Test("a format-1 folder is migrated when opened: segments built, the current format recorded, every document and the log kept")
    func formatOneIsMigrated() throws {
        let before = try Self.fixtureFiles()
        #expect(before[FileNames.metadata] != nil && before[FileNames.snapshot] == nil, "the fixture is not a format-1 folder")
        let data = try copyFixture()
        #expect(try Self.format(in: data) == 1)

        let store = try DocumentStore(folder: data, schema: .testArticles)
        #expect(
            store.migration == FormatMigration(from: 1, to: StoreMetadata.currentFormat, documents: Self.documentCount, builtSnapshot: true)
        )
        #expect(try Self.format(in: data) == StoreMetadata.currentFormat)
        let statistics = try store.statistics()
        #expect(statistics.formatVersion == StoreMetadata.currentFormat)
        #expect(try Self.segmentDocuments(store) == Self.documentCount && statistics.changesAfterSegments == 0)
        #expect(try store.count == Self.documentCount)

        // Every document and the log, byte for byte; only the metadata changed, and the segments are new.
        let after = try Dictionary(
            uniqueKeysWithValues: filesBelow(data).map { ($0, [UInt8](try Data(contentsOf: URL(fileURLWithPath: data + "/" + $0)))) })
        for (relative, bytes) in before where relative != FileNames.metadata {
            #expect(after[relative] == bytes, "\(relative) changed in the migration")
        }
        #expect(Set(after.keys).subtracting(before.keys) == [FileNames.segments + "/000001.seg", FileNames.manifest, FileNames.lock])
        var metadata = try StoreMetadata.decode(try #require(before[FileNames.metadata]), path: "fixture", schema: .testArticles)
        metadata.format = StoreMetadata.currentFormat
        #expect(after[FileNames.metadata] == metadata.encoded(), "the metadata changed beyond its format")

        // The same answers from the segments as from the log alone.
        let fromLog = try DocumentStore(folder: data, schema: .testArticles, options: .init(usesSegments: false))
        #expect(Self.content(try fromLog.entries()) == Self.content(try store.entries()))
        #expect(try Self.answers(store) == Self.answers(fromLog))
        try expectConsistent(store)

        // Said once: the next open finds the current format.
        let again = try DocumentStore(folder: data, schema: .testArticles)
        #expect(again.migration == nil)
        #expect(try again.count == Self.documentCount)
    }

    @Test("a folder of an older format whose segments already cover the whole log keeps them")
    func formatOneWithCurrentSegmentsKeepsThem() throws {
        let data = try copyFixture()
        let first = try DocumentStore(folder: data, schema: .testArticles)
        #expect(first.migration?.builtSnapshot == true)
        let segment = try #require(FileManager.default.contents(atPath: data + "/" + FileNames.segments + "/000001.seg"))
        // A folder whose format was not raised after its segments were written.
        var metadata = try StoreMetadata.decode(
            try #require(try POSIXFileSystem().contents(of: data + "/" + FileNames.metadata)), path: data, schema: .testArticles)
        metadata.format = 1
        try Data(metadata.encoded()).write(to: URL(fileURLWithPath: data + "/" + FileNames.metadata))

        let store = try DocumentStore(folder: data, schema: .testArticles)
        #expect(
            store.migration
                == FormatMigration(from: 1, to: StoreMetadata.currentFormat, documents: Self.documentCount, builtSnapshot: false))
        #expect(FileManager.default.contents(atPath: data + "/" + FileNames.segments + "/000001.seg") == segment)
        #expect(try Self.format(in: data) == StoreMetadata.currentFormat)
        try expectConsistent(store)
    }

    @Test("a folder of an older format with changes after its segments gets them flushed into a segment")
    func formatOneWithChangesAfterTheSegments() throws {
        let data = try copyFixture()
        let first = try DocumentStore(folder: data, schema: .testArticles)
        try first.put(try json(#"{"section_name": "Late", "pub_date": "2026-12-01"}"#), id: "after-the-segments")
        var metadata = try StoreMetadata.decode(
            try #require(try POSIXFileSystem().contents(of: data + "/" + FileNames.metadata)), path: data, schema: .testArticles)
        metadata.format = 1
        try Data(metadata.encoded()).write(to: URL(fileURLWithPath: data + "/" + FileNames.metadata))

        let store = try DocumentStore(folder: data, schema: .testArticles)
        #expect(
            store.migration
                == FormatMigration(from: 1, to: StoreMetadata.currentFormat, documents: Self.documentCount + 1, builtSnapshot: true))
        #expect(try store.statistics().changesAfterSegments == 0)
        #expect(try store.count(matching: try FilterParser.parseAny("section_name = Late")).count == 1)
        try expectConsistent(store)
    }

    @Test(
        "the real format-3 folder (index.snapshot and a tail after it) is migrated: segments built, the snapshot removed, the same answers")
    func formatThreeIsMigrated() throws {
        let before = try Self.fixtureFiles("format-3")
        #expect(before[FileNames.snapshot] != nil, "the fixture has no index.snapshot")
        let data = try copyFixture("format-3")
        #expect(try Self.format(in: data) == 3)
        // Its answers from the log alone, in a copy of it (opening migrates a folder).
        let copy = folder.root + "/copy"
        try FileManager.default.copyItem(atPath: fixture("format-3"), toPath: copy)
        let expected = try Self.answers(try DocumentStore(folder: copy, schema: .testArticles, options: .init(usesSegments: false)))
        let store = try DocumentStore(folder: data, schema: .testArticles)
        #expect(store.migration == FormatMigration(from: 3, to: 4, documents: Self.documentCount, builtSnapshot: true))
        #expect(try Self.format(in: data) == 4)
        #expect(!FileManager.default.fileExists(atPath: data + "/" + FileNames.snapshot))
        #expect(try Self.segmentDocuments(store) == Self.documentCount)
        #expect(try Self.answers(store) == expected)
        #expect(try store.lastSequence == 44)
        let after = try Dictionary(
            uniqueKeysWithValues: filesBelow(data).map { ($0, [UInt8](try Data(contentsOf: URL(fileURLWithPath: data + "/" + $0)))) })
        for (relative, bytes) in before where relative != FileNames.metadata && relative != FileNames.snapshot {
            #expect(after[relative] == bytes, "\(relative) changed in the migration")
        }
        try expectConsistent(store)
    }

    // MARK: A crash during the migration

    /// The model file system holding a fixture at `PowerLossTests.dataFolder`, all of it durable.
    static func modelWithFixture(_ name: String) throws -> FaultInjectingFileSystem {
        let model = FaultInjectingFileSystem()
        let data = PowerLossTests.dataFolder
        try model.createFolder(data)
        for (relative, bytes) in try fixtureFiles(name) {
            let path = data + "/" + relative
            try model.createFolder(URL(fileURLWithPath: path).deletingLastPathComponent().path)
            try model.write(bytes, to: path)
        }
        try model.synchronizeAll(containing: data)
        return model
    }

    @Test(
        "a crash at any point of the migration leaves a folder that opens with every document, migrated then or at the next open",
        arguments: [("format-1", 1), ("format-3", 3)])
    func crashDuringMigration(name: String, format: Int) throws {
        let start = try Self.modelWithFixture(name)
        let expected = try Self.fixtureFiles(name).filter { $0.key.hasPrefix(FileNames.documents + "/") }
        let reference = try DocumentStore(folder: PowerLossTests.dataFolder, schema: .testArticles, fileSystem: start.copy())
        let referenceAnswers = try Self.answers(reference)
        #expect(reference.migration != nil)

        let clean = start.copy()
        let before = clean.mutatingOperationCount
        _ = try DocumentStore(folder: PowerLossTests.dataFolder, schema: .testArticles, fileSystem: clean)
        let operations = clean.mutatingOperationCount - before
        #expect(operations >= 6, "the migration wrote too little (\(operations) operations)")

        var migratedThen = 0
        var migratedLater = 0
        for crashPoint in 1...operations {
            for aftermath in ["power loss", "killed"] {
                let context = "crash at operation \(crashPoint) of \(operations), then \(aftermath)"
                let model = start.copy()
                model.failAfter(operations: crashPoint)
                #expect(throws: StoreError.self, "\(context): the crash was not reported") {
                    try DocumentStore(folder: PowerLossTests.dataFolder, schema: .testArticles, fileSystem: model)
                }
                if aftermath == "power loss" { model.simulatePowerLoss() } else { model.clearFault() }
                let formatAfterCrash = try Self.format(in: PowerLossTests.dataFolder, fileSystem: model)
                #expect(
                    formatAfterCrash == format || formatAfterCrash == StoreMetadata.currentFormat,
                    "\(context): format \(String(describing: formatAfterCrash))")
                let store = try DocumentStore(folder: PowerLossTests.dataFolder, schema: .testArticles, fileSystem: model)
                if formatAfterCrash == format {
                    #expect(store.migration != nil, "\(context): a format-\(format) folder was not migrated")
                    migratedLater += 1
                } else {
                    #expect(store.migration == nil, "\(context): a migrated folder was migrated again")
                    migratedThen += 1
                }
                #expect(try Self.format(in: PowerLossTests.dataFolder, fileSystem: model) == StoreMetadata.currentFormat, "\(context)")
                for (relative, bytes) in expected {
                    #expect(
                        try model.contents(of: PowerLossTests.dataFolder + "/" + relative) == bytes, "\(context): \(relative) changed")
                }
                #expect(try store.count == Self.documentCount, "\(context)")
                #expect(try store.check().isEmpty, "\(context): check found problems")
                #expect(try Self.answers(store) == referenceAnswers, "\(context): different answers")
            }
        }
        #expect(migratedLater > 0 && migratedThen > 0)
        print(
            "Migration of \(name): \(operations) crash points, each with a power loss and a kill: \(migratedLater) folders migrated at the next open, \(migratedThen) already migrated"
        )
    }
}
