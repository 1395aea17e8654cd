@preconcurrency import CEditLine
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The line reader at a terminal: libedit with Emacs keys and a history kept in a file (mode
/// 0600, capped, duplicates collapsed). The only file of the shell that talks to libedit.
public final class EditLineReader: LineReader {
    private let editLine: OpaquePointer
    private let history: OpaquePointer
    private let historyPath: String?
    private let historySize: Int
    /// The history, oldest first, each command once (a mirror of libedit's list).
    private(set) var historyEntries: [String] = []

    /// The prompt libedit shows (read by the C callback, which cannot capture).
    nonisolated(unsafe) static var currentPrompt: [CChar] = [0]
    /// Set by the SIGINT handler.
    nonisolated(unsafe) static var interrupted: sig_atomic_t = 0
    /// Gives the words that may complete the text before the cursor (read by the Tab callback,
    /// which cannot capture).
    nonisolated(unsafe) static var completer: ((String) -> [String])?

    /// A reader keeping its history in `historyPath` (none when nil).
    public init(historyPath: String?, historySize: Int32 = 1000) {
        editLine = archivist_el_init(CommandLine.arguments.first ?? "archivist")
        history = archivist_history_init(historySize)
        self.historySize = Int(historySize)
        archivist_el_use_emacs(editLine)
        archivist_el_set_history(editLine, history)
        archivist_el_set_prompt(editLine) { _ in
            EditLineReader.currentPrompt.withUnsafeMutableBufferPointer { $0.baseAddress! }
        }
        var savedPath = historyPath
        if let historyPath {
            switch HistoryFile.load(historyPath) {
            case .missing: break
            case .entries(let loaded):
                historyEntries = EditLineReader.collapsingDuplicates(loaded, keeping: self.historySize)
            case .refused(let reason):
                // Neither read nor written over: it may be someone's file, or not a file at all.
                fputs("warning: history \(historyPath): \(reason); this session's history is not kept\n", stderr)
                savedPath = nil
            }
        }
        self.historyPath = savedPath
        rebuildHistory()
        archivist_el_bind_tab(editLine) { editLine, _ in
            guard let editLine, let info = el_line(editLine) else { return UInt8(CC_ERROR) }
            let start = UnsafeRawPointer(info.pointee.buffer!)
            let length = UnsafeRawPointer(info.pointee.cursor!) - start
            let text = String(decoding: UnsafeRawBufferPointer(start: start, count: length), as: UTF8.self)
            return EditLineReader.complete(text) { insertion in _ = el_insertstr(editLine, insertion) }
        }
    }

    deinit {
        el_end(editLine)
        history_end(history)
    }

    /// Reads one line with libedit.
    public func readLine(prompt: String) -> ReadOutcome {
        EditLineReader.currentPrompt = Array(prompt.utf8CString)
        EditLineReader.interrupted = 0
        // While a line is typed, Ctrl-C abandons it (the handler only notes it) instead of ending
        // the process; while a command runs, Ctrl-C is the command's (see `Interruption`).
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in EditLineReader.interrupted = 1 }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGINT, &action, &previous)
        defer { sigaction(SIGINT, &previous, nil) }
        var count: Int32 = 0
        guard let line = el_gets(editLine, &count) else {
            if EditLineReader.interrupted != 0 || errno == EINTR {
                fputs("\n", stdout)
                fflush(stdout)
                return .interrupted
            }
            return .end
        }
        if EditLineReader.interrupted != 0 {
            return .interrupted
        }
        var text = String(cString: line)
        if text.hasSuffix("\n") { text.removeLast() }
        return .line(text)
    }

    /// Completes the word before the cursor: one match is inserted whole (with a space), several
    /// are listed and their common start inserted.
    static func complete(_ text: String, insert: (String) -> Void) -> UInt8 {
        let word = String(text.split(separator: " ", omittingEmptySubsequences: false).last ?? "")
        let matches = Array(Set((completer?(text) ?? []).filter { $0.hasPrefix(word) })).sorted()
        guard let first = matches.first else { return UInt8(CC_REFRESH_BEEP) }
        if matches.count == 1 {
            insert(String(first.dropFirst(word.count)) + " ")
            return UInt8(CC_REFRESH)
        }
        var common = first
        for match in matches.dropFirst() {
            while !match.hasPrefix(common) { common.removeLast() }
        }
        if common.count > word.count { insert(String(common.dropFirst(word.count))) }
        fputs("\n" + matches.joined(separator: "  ") + "\n", stdout)
        fflush(stdout)
        return UInt8(CC_REDISPLAY)
    }

    /// Adds a command to the history (dropping an older copy of it, so each command appears once,
    /// at its latest use) and saves the file, unless it carries a secret.
    public func addToHistory(_ command: String) {
        guard !EditLineReader.carriesSecret(command) else { return }
        historyEntries = EditLineReader.collapsingDuplicates(historyEntries + [command], keeping: historySize)
        rebuildHistory()
        guard let historyPath else { return }
        HistoryFile.save(historyEntries, to: historyPath)
    }

    /// Refills libedit's list from `historyEntries`.
    private func rebuildHistory() {
        archivist_history_clear(history)
        for entry in historyEntries { archivist_history_enter(history, entry) }
    }

    /// `entries` with each command kept only at its last use, and at most the `limit` newest.
    static func collapsingDuplicates(_ entries: [String], keeping limit: Int) -> [String] {
        var seen: Set<String> = []
        var result: [String] = []
        for entry in entries.reversed() where result.count < limit && seen.insert(entry).inserted {
            result.append(entry)
        }
        return result.reversed()
    }

    /// Whether a line looks like it holds a credential (never written to the history).
    static func carriesSecret(_ line: String) -> Bool {
        let lowered = line.lowercased()
        return ["api-key", "api_key", "apikey", "nyt_api_key", "password", "secret", "token"].contains { lowered.contains($0) }
    }

    /// The history file: `$ARCHIVIST_HISTORY` (an error when empty), else
    /// `$XDG_STATE_HOME/archivist/history`, else `~/.local/state/archivist/history`.
    public static func defaultHistoryPath(
        environment: Environment = .process
    )
        throws(ShellError) -> String?
    {
        if let path = try EnvironmentVariable.history.path(in: environment) { return path }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/archivist/history" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.local/state/archivist/history"
    }
}
