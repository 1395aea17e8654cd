/// The options of one command, declared once.
///
/// Each case is one option; its `declaration` gives the spelling, the value's name and the help
/// line. The same declarations drive parsing (`Command.parse`), the usage line, `help COMMAND`,
/// completion and the command's lookups (`Invocation.value(_:)`), so an option can only be looked
/// up by a command that declared it: a misspelt or foreign option does not compile.
public protocol CommandOptions: CaseIterable, Hashable, Sendable {
    /// The option's spelling, value name and help.
    var declaration: Command.Option { get }
}

/// The options of a command that takes none.
public enum NoOptions: CommandOptions {
    /// Never called: there are no cases.
    public var declaration: Command.Option {
        switch self {}
    }
}

extension CommandOptions {
    /// The option's spelling, as messages name it: `--limit`.
    public var name: String { declaration.name }
}
