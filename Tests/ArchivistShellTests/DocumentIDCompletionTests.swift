import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

/// Tab completion of document IDs.
@Suite("completion of document IDs")
struct DocumentIDCompletionTests {
    @Test func anyIDCanBeCompletedHoweverManyThereAre() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let store = try DocumentStore(folder: sandbox.data, schema: .nyt)
        let documents: [JSONValue] = (0...10_000).map { .object([JSONMember(key: "_id", value: .string(String(format: "id%05d", $0)))]) }
        #expect(try store.upsert(documents).count == 10_001)
        let shell = Shell(dataFolder: sandbox.data, output: TextSink(), errors: TextSink())
        // The last in ID order is past the first 10,000.
        #expect(shell.completions(for: "get id1000") == ["id10000"])
        #expect(shell.completions(for: "get id0000").count == 10)
        #expect(shell.completions(for: "get ").count == 10_000, "at most 10,000 offered at once")
    }

    @Test func theShellsOwnCommandsCompleteTheirWordsAndTheWordsForLeaving() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let shell = Shell(dataFolder: sandbox.data, output: TextSink(), errors: TextSink())
        #expect(shell.completions(for: ".mode ") == ["table", "json", "jsonl", "csv"])
        #expect(shell.completions(for: ".pager ") == ["on", "off"])
        #expect(shell.completions(for: ".timer ") == ["on", "off"])
        let first = Set(shell.completions(for: ""))
        #expect(first.isSuperset(of: ["quit", "exit", ".quit", ".exit", ".pager", "find"]))
    }
}
