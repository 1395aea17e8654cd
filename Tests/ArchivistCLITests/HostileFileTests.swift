import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Files that are not what they should be, in a data folder: never waited on, never read.
@Suite("hostile files in a data folder")
struct HostileFileTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    @Test("a FIFO in a document's place: check reports it at once, get fails, repair quarantines it and check is clean")
    func aFIFOInADocumentsPlaceNeverBlocks() throws {
        #expect(try sandbox.run(["put", "a", #"{"x": 1}"#]).status == 0)
        #expect(try sandbox.run(["put", "b", #"{"x": 2}"#]).status == 0)
        let file = sandbox.data + "/" + FileNames.documentPath(for: "a", in: .nyt)
        try FileManager.default.removeItem(atPath: file)
        #expect(mkfifo(file, 0o644) == 0)
        // Each of these would wait for a writer forever if the FIFO were opened to be read.
        let check = try sandbox.run(["check"])
        #expect(check.status == 1, "\(check)")
        #expect(check.stdoutText.contains(#""kind":"unreadable-document""#) && check.stdoutText.contains("not a regular file"), "\(check)")
        let get = try sandbox.run(["get", "a"])
        #expect(get.status == 1 && get.stderrText.contains("is not a regular file"), "\(get)")
        #expect(try sandbox.run(["count"]).stdoutLines == ["2"])
        let repair = try sandbox.run(["repair"])
        #expect(repair.status == 0 && repair.stdoutText.contains("quarantined"), "\(repair)")
        let after = try sandbox.run(["check"])
        #expect(after.status == 0 && after.stdoutText.contains(#""problems":0"#), "\(after)")
        #expect(try sandbox.run(["get", "b"]).status == 0)
    }

    @Test("an index line longer than 64 MiB is refused, not read whole: the index is quarantined and rebuilt from the documents")
    func aHugeIndexLineIsRefused() throws {
        #expect(try sandbox.run(["put", "a", #"{"x": 1}"#]).status == 0)
        let index = sandbox.data + "/" + FileNames.index
        let valid = try Data(contentsOf: URL(fileURLWithPath: index))
        var hostile = valid
        hostile.append(Data(#"{"id":""#.utf8))
        hostile.append(Data(repeating: UInt8(ascii: "x"), count: 70 << 20))
        hostile.append(Data("\n".utf8))
        hostile.append(valid)  // a line after it: not a torn tail
        try hostile.write(to: URL(fileURLWithPath: index))
        try? FileManager.default.removeItem(atPath: sandbox.data + "/" + FileNames.segments)
        let count = try sandbox.run(["count"])
        #expect(count.status == 0 && count.stdoutLines == ["1"], "\(count)")
        let quarantined = try FileManager.default.subpathsOfDirectory(atPath: sandbox.data + "/quarantine")
        #expect(quarantined.contains { $0.hasSuffix(FileNames.index) }, "the unreadable index is kept: \(quarantined)")
        #expect(try sandbox.run(["check"]).status == 0)
    }

    @Test(arguments: [
        (FileNames.index, true, "is not a regular file"), (FileNames.index, false, "is a folder"),
        (FileNames.metadata, true, "is not a regular file"), (FileNames.metadata, false, "is a folder"),
    ])
    func aFolderFileReplacedByAFIFOOrAFolderIsAnErrorNamingIt(name: String, fifo: Bool, reason: String) throws {
        #expect(try sandbox.run(["put", "a", #"{"x": 1}"#]).status == 0)
        let path = sandbox.data + "/" + name
        try FileManager.default.removeItem(atPath: path)
        if fifo {
            #expect(mkfifo(path, 0o644) == 0)
        } else {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let result = try sandbox.run(["count"])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderrLines == ["error: \(path): cannot read: \(reason)" + (fifo ? " (a FIFO, a device or a socket)" : "")], "\(result)")
    }

    @Test func aFileGivenAsTheDataFolderIsRefused() throws {
        try sandbox.write("not a folder", to: sandbox.root + "/file")
        let result = try sandbox.run(["--data", sandbox.root + "/file", "count"], dataOption: false)
        #expect(result.status == 1 && result.stderrText == "error: \(sandbox.root)/file: not a folder\n", "\(result)")
        #expect(try String(contentsOfFile: sandbox.root + "/file", encoding: .utf8) == "not a folder")
    }

    @Test("a filter nested 100,000 levels deep is an error line, not a crash")
    func aDeepFilterIsAnError() throws {
        let result = try sandbox.run([], stdin: Array(("count " + String(repeating: "not ", count: 100_000) + "a = 1\ncount\n").utf8))
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderrText.contains("nested deeper than 512 levels"), "\(result)")
        #expect(result.stdoutLines == ["0"], "the next line still ran: \(result)")
    }

    @Test(
        "a docs/ or tmp/ that is a symbolic link out of the folder is refused with one line naming it, and nothing is written through it",
        arguments: ["docs", "tmp"])
    func symlinkedStoreFolderIsRefused(_ name: String) throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "a", #"{"n": 1}"#])
        let outside = sandbox.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let inside = sandbox.path(name)
        if name == "docs" { try FileManager.default.moveItem(atPath: inside, toPath: outside + "/docs") }
        try? FileManager.default.removeItem(atPath: inside)
        try FileManager.default.createSymbolicLink(atPath: inside, withDestinationPath: outside)
        let before = snapshot(outside)
        for arguments in [["count"], ["put", "b", #"{"n": 2}"#], ["repair"]] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderrText.contains("\(name): is a symbolic link"), "\(arguments): \(result)")
        }
        #expect(sameSnapshot(before, snapshot(outside)), "something was written through the link")
    }

    @Test("a document file of 300 MiB is refused, not read whole: get fails naming it, check reports it, repair quarantines it")
    func hugeDocumentIsRefused() throws {
        let sandbox = try TemporaryFolder()
        try sandbox.run(["put", "big", #"{"n": 1}"#])
        try sandbox.run(["put", "small", #"{"n": 2}"#])
        // Sparse: the file says 300 MiB and takes no room.
        let file = sandbox.documentFile("big")
        #expect(truncate(file, 300 << 20) == 0)
        let get = try sandbox.run(["get", "big"])
        #expect(get.status == 1 && get.stderrLines.count == 1, "\(get)")
        #expect(get.stderrText.contains("is 300 MiB, larger than the 256 MiB a document may be"), "\(get)")
        let check = try sandbox.run(["--format", "jsonl", "check"])
        #expect(check.status == 1 && check.stdoutText.contains("unreadable-document") && check.stdoutText.contains("300 MiB"), "\(check)")
        #expect(check.seconds < 10)
        let repair = try sandbox.run(["repair"])
        #expect(repair.status == 0, "\(repair)")
        let after = try sandbox.run(["check"])
        #expect(after.status == 0, "\(after)")
        #expect(try sandbox.run(["get", "small"]).status == 0)
    }

    @Test(
        "a document file nested 100,000 levels deep is refused at 512 levels: get fails naming it, check reports it, repair quarantines it")
    func deeplyNestedDocumentIsRefused() throws {
        try sandbox.run(["put", "deep", #"{"n": 1}"#])
        try sandbox.run(["put", "small", #"{"n": 2}"#])
        let depth = 100_000
        try sandbox.write(
            #"{"n":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}",
            to: sandbox.documentFile("deep"))
        let get = try sandbox.run(["get", "deep"])
        #expect(get.status == 1 && get.stderrLines.count == 1, "\(get)")
        #expect(get.stderrText.contains("deep.json") && get.stderrText.contains("nested deeper than 512 levels"), "\(get)")
        let check = try sandbox.run(["--format", "jsonl", "check"])
        #expect(check.status == 1 && check.stdoutText.contains("unreadable-document"), "\(check)")
        #expect(try sandbox.run(["repair"]).status == 0)
        #expect(try sandbox.run(["check"]).status == 0)
        #expect(try sandbox.run(["get", "small"]).status == 0)
    }

    @Test(
        "an index line whose fields nest 100,000 levels deep: a query on them fails with one line naming the index, check reports it, repair rebuilds it"
    )
    func deeplyNestedIndexFieldsAreRefused() throws {
        #expect(try sandbox.run(["index", "add", "x"]).status == 0)
        #expect(try sandbox.run(["put", "a", #"{"x": 1}"#]).status == 0)
        let index = sandbox.data + "/" + FileNames.index
        let lines = try String(contentsOfFile: index, encoding: .utf8).split(separator: "\n")
        let last = String(try #require(lines.last))
        let sequence = try #require(last.firstMatch(of: /"seq":(\d+),/).flatMap { Int($0.1) })
        #expect(last.hasSuffix(#""fields":{"x":1}}"#), "\(last)")
        // The fields are read lazily (open does not parse them): the next version of "a", well
        // formed but for its depth.
        let depth = 100_000
        let hostile = last.replacingOccurrences(of: #""seq":\#(sequence),"#, with: #""seq":\#(sequence + 1),"#)
            .replacingOccurrences(
                of: #""fields":{"x":1}"#,
                with: #""fields":{"x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}")
        try sandbox.write(lines.joined(separator: "\n") + "\n" + hostile + "\n", to: index)
        try? FileManager.default.removeItem(atPath: sandbox.data + "/" + FileNames.segments)
        let query = try sandbox.run(["count", "x", "=", "1"])
        #expect(query.status == 1 && query.stderrLines.count == 1, "\(query)")
        #expect(query.stderrText.contains(FileNames.index) && query.stderrText.contains("nested deeper than 512 levels"), "\(query)")
        let check = try sandbox.run(["--format", "jsonl", "check"])
        #expect(check.status == 1 && check.stdoutText.contains("projected fields in the index are stale"), "\(check)")
        #expect(try sandbox.run(["repair"]).status == 0)
        #expect(try sandbox.run(["check"]).status == 0)
        #expect(try sandbox.run(["count", "x", "=", "1"]).stdoutLines == ["1"])
    }

    @Test("an error quoting hostile text is one line without control characters: an escape sequence is shown, not sent")
    func errorsShowControlCharactersInsteadOfSendingThem() throws {
        let result = try sandbox.run(["get", "a\u{1B}[2Jb\nc\u{7}"])
        #expect(result.status == 1)
        #expect(result.stderrLines == [#"error: ID 'a\u{1B}[2Jb c\u{7}': no such document"#], "\(result)")
        #expect(!result.stderr.contains(0x1B) && !result.stderr.contains(0x07))
    }

    @Test(
        "an import whose line never ends (a sparse 300 MiB file, like /dev/zero) stops at 256 MiB naming the line; earlier lines are kept")
    func anEndlessLineStopsAnImport() throws {
        let path = sandbox.root + "/endless.jsonl"
        try sandbox.write(#"{"_id":"a","n":1}"# + "\n", to: path)
        #expect(truncate(path, off_t(300 << 20)) == 0)
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderrLines == ["error: import: \(path): cannot read: line 2 is longer than 256 MiB, the largest document"], "\(result)")
        #expect(try sandbox.run(["count"]).stdoutText == "1\n")
        #expect(try sandbox.run(["check"]).status == 0)
    }
}
