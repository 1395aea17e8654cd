/// The lines of one command, gathered as they are read (by a script or at the prompt): blank
/// lines and `#` comments between commands are skipped, and an unfinished quote, JSON argument or
/// trailing `\` waits for the next line.
struct PendingCommand {
    /// The lines read so far of an unfinished command.
    private(set) var lines: [String] = []

    /// What adding a line came to.
    enum Step: Equatable {
        /// A blank or comment line between commands.
        case skipped
        /// The command goes on on the next line.
        case unfinished
        /// A whole command: its text (lines joined with newlines) and its words.
        case command(text: String, words: [ShellWord])
    }

    /// Whether no command has been started.
    var isEmpty: Bool { lines.isEmpty }

    /// Adds the next line read.
    mutating func add(_ line: String) -> Step {
        if lines.isEmpty {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return .skipped }
        }
        lines.append(line)
        let text = lines.joined(separator: "\n")
        guard case .words(let words) = CommandLineSplitter.splitWords(text) else { return .unfinished }
        lines = []
        return .command(text: text, words: words)
    }

    /// Abandons the command begun (Ctrl-C at the prompt).
    mutating func clear() {
        lines = []
    }
}
