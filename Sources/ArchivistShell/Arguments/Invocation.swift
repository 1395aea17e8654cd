/// A parsed command line for one command.
public struct Invocation: Sendable {
    /// The command's name.
    public var command: String
    /// Arguments that are not options, in order.
    public var positionals: [String] = []
    /// Values of options that take one, by option name.
    public var options: [String: [String]] = [:]
    /// Flags given.
    public var flags: Set<String> = []

    /// Creates an empty invocation.
    public init(command: String) {
        self.command = command
    }

    /// The last value given for an option.
    public func value(_ option: String) -> String? {
        options[option]?.last
    }

    /// Whether a flag was given.
    public func isSet(_ flag: String) -> Bool {
        flags.contains(flag)
    }
}
