/// Where the interactive shell gets its lines: libedit at a terminal (`EditLineReader`), or
/// anything else a test puts in its place.
public protocol LineReader: AnyObject {
    /// Shows `prompt` and returns the line typed (without its newline), `.interrupted` when Ctrl-C
    /// abandoned it, or `.end` at the end of input (Ctrl-D on an empty line).
    func readLine(prompt: String) -> ReadOutcome
    /// Records a whole command in the history (and saves the history).
    func addToHistory(_ command: String)
}
