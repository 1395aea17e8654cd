/// The lines of one command, gathered as they are read (by a script or at the prompt): blank
/// lines and `#` comments between commands are skipped, and an unfinished quote, JSON argument or
/// trailing `\` waits for the next line. Each line is scanned once, when it is added, and a
/// command may not grow past ``maximumBytes``.
struct PendingCommand {
    /// The most bytes a command may have, over all its lines (a quote left open by mistake stops
    /// here, not at the end of memory).
    static let maximumBytes = 64 << 20

    /// The lines read so far of an unfinished command.
    private(set) var lines: [String] = []
    private var scanner = CommandLineSplitter.LineScanner()
    private var byteCount = 0

    /// What adding a line came to.
    enum Step: Equatable {
        /// A blank or comment line between commands.
        case skipped
        /// The command goes on on the next line.
        case unfinished
        /// A whole command: its text (lines joined with newlines) and its words.
        case command(text: String, words: [ShellWord])
        /// The command would pass ``PendingCommand/maximumBytes``: it is dropped.
        case tooLong
    }

    /// Whether no command has been started.
    var isEmpty: Bool { lines.isEmpty }

    /// Adds the next line read.
    mutating func add(_ line: String) -> Step {
        if lines.isEmpty {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return .skipped }
        }
        byteCount += line.utf8.count + 1
        guard byteCount <= Self.maximumBytes else {
            clear()
            return .tooLong
        }
        lines.append(line)
        scanner.add(line)
        guard case .words(let words) = scanner.outcome else { return .unfinished }
        let text = lines.joined(separator: "\n")
        clear()
        return .command(text: text, words: words)
    }

    /// Abandons the command begun (Ctrl-C at the prompt).
    mutating func clear() {
        lines = []
        scanner = CommandLineSplitter.LineScanner()
        byteCount = 0
    }
}
