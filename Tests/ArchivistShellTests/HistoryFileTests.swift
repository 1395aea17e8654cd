import ArchivistBase
import ArchivistTestSupport
import CEditLine
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The history file's format, read and written by Archivist (libedit's reader overruns a buffer).
@Suite struct HistoryFileTests {
    static let entries = [
        "plain", "a b\tc", "multi\nline", #"back\slash"#, "café — ünïcode", "ctl\u{1}\u{1B}[31m", "del\u{7F}", #"quote"'"#,
        "\u{85}next line", "",
    ]

    @Test func entriesWrittenReadBackTheSame() {
        #expect(HistoryFile.decode(HistoryFile.encode(Self.entries)) == Self.entries)
        // Text stays readable: only the backslash, white space and control characters are escaped.
        let text = String(decoding: HistoryFile.encode(["café — x y"]), as: UTF8.self)
        #expect(text == "_HiStOrY_V2_\ncafé\\040—\\040x\\040y\n")
    }

    @Test("a history written by libedit itself reads back the same")
    func libeditsFilesAreRead() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let path = sandbox.root + "/libedit-history"
        let list = try #require(archivist_history_init(100))
        defer { history_end(list) }
        for entry in Self.entries { archivist_history_enter(list, entry) }
        #expect(archivist_history_save(list, path) >= 0)
        #expect(HistoryFile.load(path) == .entries(Self.entries))
    }

    @Test(arguments: [
        (#"\040\11\012"#, " \t\n"),
        (#"\^A\^?\M-C\M-)\M^@"#, "\u{1}\u{7F}é\u{FFFD}"),
        (#"\M-C\M-)"#, "é"),
        (#"\s\E\\\q"#, " \u{1B}\\\\q"),
        (#"trailing\"#, #"trailing\"#),
        (#"\M-"#, #"\M-"#),
        (#"\7777"#, "\u{FFFD}7"),
    ])
    func escapesDecodeAsStrunvisDecodesThem(line: String, expected: String) {
        #expect(String(decoding: HistoryFile.decodeLine(ArraySlice(line.utf8)), as: UTF8.self) == expected)
    }

    @Test("a history path that is a FIFO, a folder, too large or not a history file is neither read nor written over")
    func aHostileHistoryPathIsLeftAlone() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let fifo = sandbox.root + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(HistoryFile.load(fifo) == .refused("not a regular file"))
        #expect(HistoryFile.load(sandbox.root) == .refused("not a regular file"))
        #expect(HistoryFile.load(sandbox.root + "/none") == .missing)
        let bashHistory = sandbox.root + "/bash_history"
        try Data("ls -la\ncd /tmp\n".utf8).write(to: URL(fileURLWithPath: bashHistory))
        #expect(HistoryFile.load(bashHistory) == .refused("not a history file (its first line is not _HiStOrY_V2_)"))
        let big = sandbox.root + "/big"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, off_t(HistoryFile.maximumBytes + 1)) == 0)
        #expect(HistoryFile.load(big) == .refused("larger than 64 MiB"))
        // The reader then keeps its history in memory only: the file is not written over.
        let reader = EditLineReader(historyPath: bashHistory)
        reader.addToHistory("count")
        #expect(reader.historyEntries == ["count"])
        #expect(FileManager.default.contents(atPath: bashHistory) == Data("ls -la\ncd /tmp\n".utf8))
        let onFIFO = EditLineReader(historyPath: fifo)
        onFIFO.addToHistory("count")
        #expect(onFIFO.historyEntries == ["count"])
    }

    @Test("the history file that overran libedit's reader (found by fuzzing) loads, and a session over it works")
    func theFileThatOverranLibeditLoads() throws {
        let path = fixture("fuzz/history-libedit-overflow")
        guard case .entries(let entries) = HistoryFile.load(path) else {
            Issue.record("the fixture did not load")
            return
        }
        #expect(entries.count == 5 && entries[0].unicodeScalars.filter { $0 == "\\" }.count > 20)
        #expect(HistoryFile.decode(HistoryFile.encode(entries)) == entries)
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let copy = sandbox.root + "/history"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let reader = EditLineReader(historyPath: copy)
        reader.addToHistory("count")
        let expected = EditLineReader.collapsingDuplicates(entries + ["count"], keeping: 1000)
        #expect(reader.historyEntries == expected)
        #expect(HistoryFile.load(copy) == .entries(expected))
    }

    @Test func theFileIsReplacedWholeWithMode0600() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let path = sandbox.root + "/state/history"
        #expect(HistoryFile.save(["one", "two"], to: path))
        #expect(HistoryFile.save(["three"], to: path))
        #expect(HistoryFile.load(path) == .entries(["three"]))
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.root + "/state") == ["history"])
    }
}
