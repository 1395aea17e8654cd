import ArchivistBase
import ArchivistClient
import Foundation
import Testing

@testable import ArchivistStore

/// Side files (saved searches, the API request counter) are written whole under the lock, checked
/// by `check`, and never touched by `repair`.
@Suite("side files")
struct SideFileTests {
    @Test func updateWritesAtomicallyAndNilLeavesTheFileAlone() throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .nyt)
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == nil)
        try store.updateSideFile(named: ClientFiles.savedSearches) { current in
            #expect(current == nil)
            return Array(#"{"searches": {}}"#.utf8)
        }
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == Array(#"{"searches": {}}"#.utf8))
        try store.updateSideFile(named: ClientFiles.savedSearches) { _ in nil }
        #expect(try store.sideFile(named: ClientFiles.savedSearches) == Array(#"{"searches": {}}"#.utf8))
        #expect(filesBelow(folder.data + "/" + FileNames.temporary).isEmpty, "no temporary file left")
        try expectConsistent(store)
    }

    @Test func aThrowingUpdateChangesNothing() throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .nyt)
        try store.updateSideFile(named: ClientFiles.apiUsage) { _ in Array("{}".utf8) }
        #expect(throws: StoreError.self) {
            try store.updateSideFile(named: ClientFiles.apiUsage) { _ throws(StoreError) in
                throw .invalidFile(path: "api-usage.json", reason: "test")
            }
        }
        #expect(try store.sideFile(named: ClientFiles.apiUsage) == Array("{}".utf8))
    }

    @Test func checkReportsAnUnreadableSideFileAndRepairLeavesIt() throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .nyt)
        _ = try store.put(try json(#"{"a": 1}"#), id: "a")
        let broken = Array(#"{"searches": {"x": "#.utf8)
        try Data(broken).write(to: URL(fileURLWithPath: folder.data + "/" + ClientFiles.savedSearches))
        let problems = try store.check()
        #expect(problems.count == 1)
        #expect(problems.first?.kind == .unreadableSideFile)
        #expect(problems.first?.file == ClientFiles.savedSearches)
        #expect(problems.first?.description.hasPrefix("searches.json: invalid JSON at byte") == true, "\(problems)")
        _ = try store.repair()
        #expect(FileManager.default.contents(atPath: folder.data + "/" + ClientFiles.savedSearches).map { Array($0) } == broken)
        #expect(try store.count == 1)
    }
}
