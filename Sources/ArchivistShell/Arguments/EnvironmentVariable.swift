/// The `ARCHIVIST_*` environment variables, declared once. Each is read where it is used, through
/// its declaration, and a bad value is a usage error naming it (exit 64), never silently ignored.
public enum EnvironmentVariable: String, CaseIterable, Sendable {
    /// The data folder when `--data` is not given.
    case data = "ARCHIVIST_DATA"
    /// Seconds a writer waits for the data folder's lock (default 10).
    case lockTimeout = "ARCHIVIST_LOCK_TIMEOUT"
    /// Least seconds between API requests when `--pace` is not given.
    case pace = "ARCHIVIST_PACE"
    /// Seconds before the first retry of a failed request, doubling after.
    case backoff = "ARCHIVIST_BACKOFF"
    /// Seconds an API request may take (at least 1).
    case timeout = "ARCHIVIST_TIMEOUT"
    /// The interactive shell's history file.
    case history = "ARCHIVIST_HISTORY"
    /// Changes after the segments before a writer writes them into a new one (default 1,024;
    /// 32,768 during an import): a tuning knob, and what tests use to make small stores merge.
    case flushThreshold = "ARCHIVIST_FLUSH_THRESHOLD"
    /// Segments of one size class merged at a time (default 8).
    case mergeFactor = "ARCHIVIST_MERGE_FACTOR"
    /// Where the merges of segments run: `background` (the default: a write that leaves a merge
    /// due starts `archivist merge --background`, which builds it while writers go on) or
    /// `inline` (the write that flushes merges before it returns).
    case merges = "ARCHIVIST_MERGES"
    /// Changes `replicate` applies in one transaction (default 2,000): a tuning knob, and what
    /// tests use to stop a copy between many small batches.
    case replicateBatch = "ARCHIVIST_REPLICATE_BATCH"
    /// Connections `replicate`'s initial load copies and indexes on at once (default 2): more
    /// for a server with more cores than this machine.
    case replicateConnections = "ARCHIVIST_REPLICATE_CONNECTIONS"

    /// The variable's name: `ARCHIVIST_DATA`.
    public var name: String { rawValue }

    /// The variable's value as a path: nil when it is unset; an empty value is an error.
    public func path(in environment: Environment) throws(ShellError) -> String? {
        guard let text = environment[name] else { return nil }
        guard !text.isEmpty else {
            throw .usage("\(name) is empty; give \(self == .data ? "a folder" : "a file") or unset it", command: nil)
        }
        return text
    }

    /// The variable's value as a whole number of at least `minimum`: nil when it is unset.
    public func count(in environment: Environment, minimum: Int) throws(ShellError) -> Int? {
        guard let text = environment[name] else { return nil }
        guard let value = Int(text), value >= minimum else {
            throw .usage("\(name) takes a whole number of at least \(minimum), not '\(text)'", command: nil)
        }
        return value
    }

    /// The variable's value, one of `choices`: nil when it is unset.
    public func choice(in environment: Environment, of choices: [String]) throws(ShellError) -> String? {
        guard let text = environment[name] else { return nil }
        guard choices.contains(text) else {
            throw .usage("\(name) takes \(choices.joined(separator: " or ")), not '\(text)'", command: nil)
        }
        return text
    }

    /// The variable's value as seconds (a number, 0 or more): nil when it is unset.
    public func seconds(in environment: Environment) throws(ShellError) -> Double? {
        guard let text = environment[name] else { return nil }
        guard let seconds = Double(seconds: text) else {
            throw .usage("\(name) takes a number of seconds, not '\(text)'", command: nil)
        }
        return seconds
    }
}
