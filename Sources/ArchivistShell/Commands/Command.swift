/// One command of the command table: its name, usage, help text and what it does.
///
/// The same table serves the command line, piped scripts and the interactive shell.
public struct Command: Sendable {
    /// The command's name.
    public var name: String
    /// What follows the name in a usage line: `ID JSON`.
    public var synopsis: String
    /// One line saying what it does.
    public var summary: String
    /// A paragraph or two of detail for `help COMMAND`.
    public var discussion: String
    /// Example invocations (without the leading `archivist`).
    public var examples: [String]
    /// The options it accepts, as its `CommandOptions` type declares them, in that order.
    public let options: [Option]
    /// How many positional arguments it takes.
    public var arity: ClosedRange<Int>
    /// Whether Ctrl-C asks the command to stop at its next safe point (instead of ending the
    /// process): long commands that check `Interruption.isRequested`.
    public var isInterruptible: Bool
    /// Runs the command on arguments `parse` checked against `options`.
    public let run: @Sendable (ParsedArguments, Shell) throws -> Void

    /// Creates a command taking the options `Options` declares; `run` looks them up by those
    /// declarations.
    public init<Options: CommandOptions>(
        name: String, synopsis: String, summary: String, discussion: String = "",
        examples: [String] = [], options: Options.Type, arity: ClosedRange<Int>,
        isInterruptible: Bool = false,
        run: @escaping @Sendable (Invocation<Options>, Shell) throws -> Void
    ) {
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.discussion = discussion
        self.examples = examples
        self.options = Options.allCases.map(\.declaration)
        self.arity = arity
        self.isInterruptible = isInterruptible
        self.run = { arguments, shell in try run(Invocation(arguments), shell) }
    }

    /// Creates a command that takes no options.
    public init(
        name: String, synopsis: String, summary: String, discussion: String = "", examples: [String] = [],
        arity: ClosedRange<Int>, isInterruptible: Bool = false,
        run: @escaping @Sendable (Invocation<NoOptions>, Shell) throws -> Void
    ) {
        self.init(
            name: name, synopsis: synopsis, summary: summary, discussion: discussion, examples: examples,
            options: NoOptions.self, arity: arity, isInterruptible: isInterruptible, run: run)
    }

    /// `archivist put ID JSON`.
    public var usage: String {
        let options = self.options.map { "[\($0.label)]" }
        return (["archivist", name] + options + (synopsis.isEmpty ? [] : [synopsis])).joined(separator: " ")
    }
}
