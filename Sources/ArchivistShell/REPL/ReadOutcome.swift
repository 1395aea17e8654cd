/// What reading a line gave.
public enum ReadOutcome: Equatable, Sendable {
    /// A line.
    case line(String)
    /// The line being typed was abandoned (Ctrl-C).
    case interrupted
    /// The input ended (Ctrl-D).
    case end
}
