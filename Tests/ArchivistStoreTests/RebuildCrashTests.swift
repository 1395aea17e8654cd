import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// A power loss at each write of a rebuild that builds the segments while the new log waits aside.
@Suite struct RebuildCrashTests {
    @Test("a power loss at any write of the rebuild of a missing index leaves a folder that opens to every document, check-clean")
    func powerLossDuringRebuild() throws {
        let data = RepairReadTests.data
        let options = RepairReadTests.options
        let base = FaultInjectingFileSystem()
        let ids = (0..<20).map { String(format: "doc%02d", $0) }
        let writer = try DocumentStore(folder: data, schema: .testArticles, options: options, fileSystem: base)
        for (i, id) in ids.enumerated() {
            try writer.put(try JSONParser.parse(Array(#"{"headline": {"main": "Story \#(i)"}}"#.utf8)), id: id)
        }
        #expect(try base.removeFile(data + "/" + FileNames.index))
        for name in try base.entries(ofFolder: data + "/" + FileNames.segments) ?? [] {
            _ = try base.removeFile(data + "/" + FileNames.segments + "/" + name)
        }
        try base.synchronizeAll(containing: "/")
        // How many writes a whole rebuild makes.
        let counting = base.copy()
        let before = counting.mutatingOperationCount
        _ = try DocumentStore(folder: data, schema: .testArticles, options: options, fileSystem: counting)
        let writes = counting.mutatingOperationCount - before
        #expect(writes > 20)
        for crashPoint in 1...writes {
            let model = base.copy()
            model.failAfter(operations: crashPoint)
            _ = try? DocumentStore(folder: data, schema: .testArticles, options: options, fileSystem: model)
            model.simulatePowerLoss()
            let store = try DocumentStore(folder: data, schema: .testArticles, options: options, fileSystem: model)
            #expect(try store.entries().map(\.id) == ids, "crash point \(crashPoint)")
            #expect(try store.count(matching: .field("headline.main", [.eq(.string("Story 7"))])).count == 1, "crash point \(crashPoint)")
            let problems = try store.check()
            #expect(problems.isEmpty, "crash point \(crashPoint): \(problems.map(\.description))")
        }
    }
}
