import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The history file keeps each command once, at its latest use, across sessions.
@Suite("history duplicates", .serialized)
struct HistoryTests {
    @Test func repeatedCommandsAreKeptOnceAtTheirLatestUse() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let path = sandbox.root + "/state/history"
        do {
            let reader = EditLineReader(historyPath: path)
            for command in ["count", "find section_name = Sports", "count", "stats", "find section_name = Sports"] {
                reader.addToHistory(command)
            }
            #expect(reader.historyEntries == ["count", "stats", "find section_name = Sports"])
        }
        // A new session reads the file back the same, and a repeat moves to the end.
        let again = EditLineReader(historyPath: path)
        #expect(again.historyEntries == ["count", "stats", "find section_name = Sports"])
        again.addToHistory("count")
        #expect(again.historyEntries == ["stats", "find section_name = Sports", "count"])
        let reread = EditLineReader(historyPath: path)
        #expect(reread.historyEntries == ["stats", "find section_name = Sports", "count"])
    }

    @Test("opening the line reader leaves Ctrl-C alone: it catches it only while a line is typed")
    func openingTheReaderLeavesCtrlCAlone() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        func currentHandler() -> UInt {
            var action = sigaction()
            sigaction(SIGINT, nil, &action)
            return action.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: UInt.self) } ?? 0
        }
        let before = currentHandler()
        let reader = EditLineReader(historyPath: sandbox.root + "/history")
        reader.addToHistory("count")
        // A command run at the prompt meets the disposition there was (the default ends a command
        // that cannot be interrupted), not a handler that would swallow the press.
        #expect(currentHandler() == before)
    }

    @Test func historyIsCappedToTheNewestEntries() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let reader = EditLineReader(historyPath: sandbox.root + "/history", historySize: 3)
        for number in 1...5 { reader.addToHistory("get \(number)") }
        #expect(reader.historyEntries == ["get 3", "get 4", "get 5"])
    }

    @Test(arguments: [
        ([String](), [String]()),
        (["a", "b", "a"], ["b", "a"]),
        (["a", "a", "a"], ["a"]),
        (["put x {\n}", "count", "put x {\n}"], ["count", "put x {\n}"]),
    ])
    func collapsingKeepsTheLastOfEach(entries: [String], expected: [String]) {
        #expect(EditLineReader.collapsingDuplicates(entries, keeping: 100) == expected)
    }
}
