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
