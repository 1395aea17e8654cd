/// Where the interactive shell gets its lines: libedit at a terminal (`EditLineReader`), or
/// anything else a test puts in its place.
public protocol LineReader: AnyObject {
    /// Shows `prompt` and returns the line typed (without its newline), `.interrupted` when Ctrl-C
    /// abandoned it, or `.end` at the end of input (Ctrl-D on an empty line).
    func readLine(prompt: String) -> ReadOutcome
    /// Records a whole command in the history (and saves the history).
    func addToHistory(_ command: String)
}

/// What reading a line gave.
public enum ReadOutcome: Equatable, Sendable {
    /// A line.
    case line(String)
    /// The line being typed was abandoned (Ctrl-C).
    case interrupted
    /// The input ended (Ctrl-D).
    case end
}

/// A line reader without line editing, for `--interactive` when standard input is not a terminal
/// (libedit needs one): prints the prompt, reads a line, keeps no history.
public final class PlainLineReader: LineReader {
    private let output: TextSink

    /// A reader that prints its prompts on `output`.
    public init(output: TextSink) {
        self.output = output
    }

    /// Prints the prompt and reads a line of standard input.
    public func readLine(prompt: String) -> ReadOutcome {
        output.write(prompt)
        output.flush()
        guard let line = Swift.readLine(strippingNewline: true) else { return .end }
        return .line(line)
    }

    /// Keeps no history.
    public func addToHistory(_ command: String) {}
}
