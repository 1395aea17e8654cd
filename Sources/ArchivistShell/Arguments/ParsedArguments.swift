/// A command's arguments split into options and positionals by `Command.parse`, every option one
/// the command declared. Commands read it through `Invocation`, by their declarations.
public struct ParsedArguments: Sendable {
    /// The command's name.
    public let command: String
    /// Arguments that are not options, in order.
    public var positionals: [String] { positionalWords.map(\.text) }
    /// The same, with how each was quoted.
    public internal(set) var positionalWords: [ShellWord] = []
    /// Values of options that take one, by the option's spelling, in the order given.
    var values: [String: [String]] { valueWords.mapValues { $0.map(\.text) } }
    /// The same, with how each was quoted.
    var valueWords: [String: [ShellWord]] = [:]
    /// Flags given, by spelling.
    var flags: Set<String> = []

    /// Arguments of `command`, none yet.
    init(command: String) {
        self.command = command
    }
}
