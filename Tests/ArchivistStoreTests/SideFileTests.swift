import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Side files (saved searches, the API request counter) are written whole under the lock, checked
/// by `check`, and never touched by `repair`.
@Suite("side files")
struct SideFileTests {
    @Test func updateWritesAtomicallyAndNilLeavesTheFileAlone() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles)
        #expect(try store.sideFile(named: TestSideFile.searches) == nil)
        try store.updateSideFile(named: TestSideFile.searches) { current in
            #expect(current == nil)
            return Array(#"{"searches": {}}"#.utf8)
        }
        #expect(try store.sideFile(named: TestSideFile.searches) == Array(#"{"searches": {}}"#.utf8))
        try store.updateSideFile(named: TestSideFile.searches) { _ in nil }
        #expect(try store.sideFile(named: TestSideFile.searches) == Array(#"{"searches": {}}"#.utf8))
        #expect(filesBelow(folder.data + "/" + FileNames.temporary).isEmpty, "no temporary file left")
        try expectConsistent(store)
    }

    @Test func aThrowingUpdateChangesNothing() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles)
        try store.updateSideFile(named: TestSideFile.usage) { _ in Array("{}".utf8) }
        #expect(throws: StoreError.self) {
            try store.updateSideFile(named: TestSideFile.usage) { _ throws(StoreError) in
                throw .invalidFile(path: "api-usage.json", reason: "test")
            }
        }
        #expect(try store.sideFile(named: TestSideFile.usage) == Array("{}".utf8))
    }

    @Test func checkReportsAnUnreadableSideFileAndRepairLeavesIt() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .testArticles)
        _ = try store.put(try json(#"{"a": 1}"#), id: "a")
        let broken = Array(#"{"searches": {"x": "#.utf8)
        try Data(broken).write(to: URL(fileURLWithPath: folder.data + "/" + TestSideFile.searches))
        let problems = try store.check()
        #expect(problems.count == 1)
        #expect(problems.first?.kind == .unreadableSideFile)
        #expect(problems.first?.file == TestSideFile.searches)
        #expect(problems.first?.description.hasPrefix("searches.json: invalid JSON at byte") == true, "\(problems)")
        _ = try store.repair()
        #expect(FileManager.default.contents(atPath: folder.data + "/" + TestSideFile.searches).map { Array($0) } == broken)
        #expect(try store.count == 1)
    }
}
