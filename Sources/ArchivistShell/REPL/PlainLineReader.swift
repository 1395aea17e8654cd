/// A line reader without line editing, for `--interactive` when standard input is not a terminal
/// (libedit needs one): prints the prompt, reads a line, keeps no history. A line over
/// ``PendingCommand/maximumBytes`` is dropped with an error, as a script's would stop.
public final class PlainLineReader: LineReader {
    private let output: TextSink
    private let errors: TextSink
    private let lines = ScriptLineReader()

    /// A reader that prints its prompts on `output` and its errors on `errors`.
    public init(output: TextSink, errors: TextSink) {
        self.output = output
        self.errors = errors
    }

    /// Prints the prompt and reads a line of standard input.
    public func readLine(prompt: String) -> ReadOutcome {
        output.write(prompt)
        output.flush()
        while true {
            switch lines.next() {
            case nil: return .end
            case .text(let line)?: return .line(line)
            case .tooLong?:
                output.write("\n")
                errors.line("error: the line is longer than \(PendingCommand.maximumBytes >> 20) MiB: it is dropped")
                errors.flush()
                output.write(prompt)
                output.flush()
            }
        }
    }

    /// Keeps no history.
    public func addToHistory(_ command: String) {}
}
