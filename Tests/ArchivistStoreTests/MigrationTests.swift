import ArchivistClient
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Opening a folder of format 1 (a real one, made by archivist before the snapshot: see
/// `Fixtures/SOURCES.md`) migrates it to the current format (3), keeps every document and the log byte for byte,
/// and survives a crash at any point of the migration.
@Suite("Migration")
struct MigrationTests {
    let folder = TemporaryFolder()

    /// The format-1 fixture's documents: 41 live (NYT samples of 2016-2025 and one hand-made),
    /// with an update, a removal and an unchanged re-import in its log.
    static let documentCount = 41

    /// The fixture's files (relative path to bytes), as they were made.
    static func fixtureFiles() throws -> [String: [UInt8]] {
        let root = fixture("format-1")
        var files: [String: [UInt8]] = [:]
        for relative in filesBelow(root) {
            files[relative] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative)))
        }
        return files
    }

    /// A copy of the fixture in this test's folder.
    func copyFixture() throws -> String {
        try FileManager.default.copyItem(atPath: fixture("format-1"), toPath: folder.data)
        return folder.data
    }

    /// The format written in a folder's `archivist.json`.
    static func format(in folder: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> Int? {
        guard let bytes = try fileSystem.contents(of: folder + "/" + FileNames.metadata) else { return nil }
        return try StoreMetadata.decode(bytes, path: folder, schema: .nyt).format
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

    @Test("a format-1 folder is migrated when opened: a snapshot built, the current format recorded, every document and the log kept")
    func formatOneIsMigrated() throws {
        let before = try Self.fixtureFiles()
        #expect(before[FileNames.metadata] != nil && before[FileNames.snapshot] == nil, "the fixture is not a format-1 folder")
        let data = try copyFixture()
        #expect(try Self.format(in: data) == 1)

        let store = try DocumentStore(folder: data, schema: .nyt)
        #expect(
            store.migration == FormatMigration(from: 1, to: StoreMetadata.currentFormat, documents: Self.documentCount, builtSnapshot: true)
        )
        #expect(try Self.format(in: data) == StoreMetadata.currentFormat)
        let statistics = try store.statistics()
        #expect(statistics.formatVersion == StoreMetadata.currentFormat)
        #expect(statistics.snapshotDocuments == Self.documentCount && statistics.changesAfterSnapshot == 0)
        #expect(try store.count == Self.documentCount)

        // Every document and the log, byte for byte; only the metadata changed, and the snapshot is new.
        let after = try Dictionary(
            uniqueKeysWithValues: filesBelow(data).map { ($0, [UInt8](try Data(contentsOf: URL(fileURLWithPath: data + "/" + $0)))) })
        for (relative, bytes) in before where relative != FileNames.metadata {
            #expect(after[relative] == bytes, "\(relative) changed in the migration")
        }
        #expect(Set(after.keys).subtracting(before.keys) == [FileNames.snapshot, FileNames.lock])
        var metadata = try StoreMetadata.decode(try #require(before[FileNames.metadata]), path: "fixture", schema: .nyt)
        metadata.format = StoreMetadata.currentFormat
        #expect(after[FileNames.metadata] == metadata.encoded(), "the metadata changed beyond its format")

        // The same answers from the snapshot as from the log alone.
        let fromLog = try DocumentStore(folder: data, schema: .nyt, options: .init(usesSnapshot: false))
        #expect(try fromLog.entries() == store.entries())
        #expect(try Self.answers(store) == Self.answers(fromLog))
        try expectConsistent(store)

        // Said once: the next open finds the current format.
        let again = try DocumentStore(folder: data, schema: .nyt)
        #expect(again.migration == nil)
        #expect(try again.count == Self.documentCount)
    }

    @Test("a format-1 folder whose snapshot already covers the whole log keeps it")
    func formatOneWithCurrentSnapshotKeepsIt() throws {
        let data = try copyFixture()
        let first = try DocumentStore(folder: data, schema: .nyt)
        #expect(first.migration?.builtSnapshot == true)
        let snapshot = try #require(FileManager.default.contents(atPath: data + "/" + FileNames.snapshot))
        // A folder of this round's code before the format was raised: format 1 with a snapshot.
        var metadata = try StoreMetadata.decode(
            try #require(try POSIXFileSystem().contents(of: data + "/" + FileNames.metadata)), path: data, schema: .nyt)
        metadata.format = 1
        try Data(metadata.encoded()).write(to: URL(fileURLWithPath: data + "/" + FileNames.metadata))

        let store = try DocumentStore(folder: data, schema: .nyt)
        #expect(
            store.migration
                == FormatMigration(from: 1, to: StoreMetadata.currentFormat, documents: Self.documentCount, builtSnapshot: false))
        #expect(FileManager.default.contents(atPath: data + "/" + FileNames.snapshot) == snapshot)
        #expect(try Self.format(in: data) == StoreMetadata.currentFormat)
        try expectConsistent(store)
    }

    @Test("a format-1 folder with changes after its snapshot gets a new snapshot covering them")
    func formatOneWithStaleSnapshotGetsANewOne() throws {
        let data = try copyFixture()
        let first = try DocumentStore(folder: data, schema: .nyt)
        try first.put(try json(#"{"section_name": "Late", "pub_date": "2026-12-01"}"#), id: "after-the-snapshot")
        var metadata = try StoreMetadata.decode(
            try #require(try POSIXFileSystem().contents(of: data + "/" + FileNames.metadata)), path: data, schema: .nyt)
        metadata.format = 1
        try Data(metadata.encoded()).write(to: URL(fileURLWithPath: data + "/" + FileNames.metadata))

        let store = try DocumentStore(folder: data, schema: .nyt)
        #expect(
            store.migration
                == FormatMigration(from: 1, to: StoreMetadata.currentFormat, documents: Self.documentCount + 1, builtSnapshot: true))
        #expect(try store.statistics().changesAfterSnapshot == 0)
        #expect(try store.count(matching: try FilterParser.parseAny("section_name = Late")).count == 1)
        try expectConsistent(store)
    }

    // MARK: A crash during the migration

    /// The model file system holding the fixture at `PowerLossTests.dataFolder`, all of it durable.
    static func modelWithFixture() throws -> FaultInjectingFileSystem {
        let model = FaultInjectingFileSystem()
        let data = PowerLossTests.dataFolder
        try model.createFolder(data)
        for (relative, bytes) in try fixtureFiles() {
            let path = data + "/" + relative
            try model.createFolder(URL(fileURLWithPath: path).deletingLastPathComponent().path)
            try model.write(bytes, to: path)
        }
        try model.synchronizeAll(containing: data)
        return model
    }

    @Test("a crash at any point of the migration leaves a folder that opens with every document, migrated then or at the next open")
    func crashDuringMigration() throws {
        let start = try Self.modelWithFixture()
        let expected = try Self.fixtureFiles().filter { $0.key.hasPrefix(FileNames.documents + "/") }
        let reference = try DocumentStore(folder: PowerLossTests.dataFolder, schema: .nyt, fileSystem: start.copy())
        let referenceAnswers = try Self.answers(reference)
        #expect(reference.migration != nil)

        let clean = start.copy()
        let before = clean.mutatingOperationCount
        _ = try DocumentStore(folder: PowerLossTests.dataFolder, schema: .nyt, fileSystem: clean)
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
                    try DocumentStore(folder: PowerLossTests.dataFolder, schema: .nyt, fileSystem: model)
                }
                if aftermath == "power loss" { model.simulatePowerLoss() } else { model.clearFault() }
                let formatAfterCrash = try Self.format(in: PowerLossTests.dataFolder, fileSystem: model)
                #expect(
                    formatAfterCrash == 1 || formatAfterCrash == StoreMetadata.currentFormat,
                    "\(context): format \(String(describing: formatAfterCrash))")
                let store = try DocumentStore(folder: PowerLossTests.dataFolder, schema: .nyt, fileSystem: model)
                if formatAfterCrash == 1 {
                    #expect(store.migration != nil, "\(context): a format-1 folder was not migrated")
                    migratedLater += 1
                } else {
                    #expect(store.migration == nil, "\(context): a format-2 folder was migrated again")
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
            "Migration: \(operations) crash points, each with a power loss and a kill: \(migratedLater) folders migrated at the next open, \(migratedThen) already migrated"
        )
    }
}
