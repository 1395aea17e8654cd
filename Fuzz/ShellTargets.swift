// libFuzzer targets for the shell's parsers, compiled into the ArchivistShell module itself, and
// the fuzzer's entry point for every target of the three modules (`scripts/fuzz` builds the store
// and the client as libraries with their own targets, then this module and this file as the
// program). ARCHIVIST_FUZZ_TARGET names the target a process runs.

import ArchivistBase
import ArchivistClient
import ArchivistStore
import CEditLine
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The shell's targets, by name.
nonisolated(unsafe) let shellFuzzTargets: [String: ([UInt8]) -> Void] = [
    "command-line": fuzzCommandLine,
    "history": fuzzHistory,
    "import": fuzzImport,
]

/// The target this process runs, read once.
nonisolated(unsafe) let fuzzTarget: ([UInt8]) -> Void = {
    let targets = storeFuzzTargets.merging(clientFuzzTargets) { first, _ in first }.merging(shellFuzzTargets) { first, _ in first }
    let name = getenv("ARCHIVIST_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = targets[name] else {
        say("ARCHIVIST_FUZZ_TARGET must be one of \(targets.keys.sorted().joined(separator: ", ")), not '\(name)'")
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func archivistFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    fuzzTarget(bytes)
    return 0
}

/// Writes a line on standard error.
func say(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// A script's text: read line by line as a script is (each line scanned once) it gives the commands
/// the whole text's split gives; each command's words, quoted again, split back to themselves;
/// their filter text parses or fails, and the command table parses them or refuses them.
func fuzzCommandLine(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var pending = PendingCommand()
    var commandLines: [String] = []
    for line in lines {
        if !pending.isEmpty || !line.trimmingCharacters(in: .whitespaces).isEmpty { commandLines.append(line) }
        switch pending.add(line) {
        case .skipped:
            commandLines = []
        case .unfinished:
            break
        case .tooLong:
            agree(false, "a command under a megabyte is too long")
        case .command(let command, let words):
            agree(command == commandLines.joined(separator: "\n"), "the command's text is not its lines")
            agree(CommandLineSplitter.splitWords(command) == .words(words), "a line at a time and the whole text disagree")
            commandLines = []
            check(words)
        }
    }
    if !pending.isEmpty {
        agree(CommandLineSplitter.splitWords(commandLines.joined(separator: "\n")) == .incomplete, "an unfinished command splits whole")
    }
}

/// The checks of one command's words.
func check(_ words: [ShellWord]) {
    // Quoted again as a POSIX shell would (a word with a newline may hold a continuation).
    if words.allSatisfy({ !$0.text.contains("\n") && !$0.text.contains("\r") }) {
        let quoted = words.map { word in
            var text = "'"
            for scalar in word.text.unicodeScalars {
                text += scalar == "'" ? #"'\''"# : String(scalar)
            }
            return text + "'"
        }.joined(separator: " ")
        agree(CommandLineSplitter.split(quoted) == .words(words.map(\.text)), "words quoted again split differently: \(quoted)")
    }
    guard let name = words.first?.text else { return }
    let arguments = Array(words.dropFirst())
    _ = try? FilterParser.parseAny(FilterWords.text(arguments))
    if let command = CommandTable.standard.command(named: name) {
        _ = try? command.parse(words: arguments)
    }
}

/// A history file of any bytes: Archivist's reader decodes it or refuses it; what it decodes,
/// written by Archivist's writer, reads back the same; and written by libedit's own writer
/// (vis(3)), it reads back the same too.
func fuzzHistory(_ bytes: [UInt8]) {
    guard let entries = HistoryFile.decode(bytes) else { return }
    agree(HistoryFile.decode(HistoryFile.encode(entries)) == entries, "a history written and read again differs")
    let unique = EditLineReader.collapsingDuplicates(entries, keeping: 1000)
    agree(Set(unique).count == unique.count && Set(unique).isSubset(of: Set(entries)), "dropping repeats kept a repeat or made a command up")
    agree(unique.count == min(Set(entries).count, 1000), "dropping repeats lost a command")
    // libedit's writer: entries are C strings to it (cut at a NUL), consecutive repeats dropped.
    var expected: [String] = []
    for entry in unique.map({ String($0.unicodeScalars.prefix { $0 != "\0" }) }) where expected.last != entry {
        expected.append(entry)
    }
    let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = folder + "/archivist-fuzz-history-\(getpid())"
    defer { unlink(path) }
    let list = archivist_history_init(1000)!
    defer { history_end(list) }
    for entry in expected { archivist_history_enter(list, entry) }
    _ = archivist_history_save(list, path)
    guard let saved = FileManager.default.contents(atPath: path) else { return }
    let read = HistoryFile.decode([UInt8](saved))
    agree(read == expected, "a history libedit wrote reads back as \(read ?? []), not \(expected)")
}

/// An import's input of any bytes: its shape is found or it is refused with a one-line message,
/// and every item reads as a document or an error naming where it is.
func fuzzImport(_ bytes: [UInt8]) {
    let reader: ImportReader
    do throws(ImportReader.ImportFailure) {
        reader = try ImportReader(bytes: bytes)
    } catch {
        let shown = Shell.oneLine(error.message)
        agree(!shown.isEmpty && !shown.unicodeScalars.contains { $0.value < 0x20 }, "an import error shown as \(shown)")
        return
    }
    if reader.shape == .jsonLines {
        let lines = JSONLinesReader(bytes: bytes)
        while let items = lines.nextItems(maxCount: 3) {
            agree(!items.isEmpty, "an empty batch before the end")
            for item in items { agree(item.location.hasPrefix("line "), "a line's item named \(item.location)") }
        }
    } else {
        for item in reader.items(0..<reader.count) { agree(!item.location.isEmpty, "an item without a place") }
    }
}
