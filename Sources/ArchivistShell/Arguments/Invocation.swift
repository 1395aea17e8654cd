/// A parsed command line for one command, whose options are looked up by the command's own
/// declarations (`Options`), never by spelling.
public struct Invocation<Options: CommandOptions>: Sendable {
    /// The command's name, which messages start with.
    public let command: String
    /// Arguments that are not options, in order.
    public let positionals: [String]
    /// The same, with how each was quoted.
    public let positionalWords: [ShellWord]
    private let values: [Options: [String]]
    private let valueWords: [Options: [ShellWord]]
    private let flags: Set<Options>

    /// Reads `arguments` parsed against `Options`' declarations (an option they do not declare
    /// cannot have been parsed, and stops the process).
    init(_ arguments: ParsedArguments) {
        var bySpelling: [String: Options] = [:]
        for option in Options.allCases { bySpelling[option.declaration.name] = option }
        func declared(_ name: String) -> Options {
            guard let option = bySpelling[name] else {
                preconditionFailure("\(arguments.command): option '\(name)' was parsed but is not declared")
            }
            return option
        }
        command = arguments.command
        positionals = arguments.positionals
        positionalWords = arguments.positionalWords
        values = Dictionary(uniqueKeysWithValues: arguments.values.map { (declared($0.key), $0.value) })
        valueWords = Dictionary(uniqueKeysWithValues: arguments.valueWords.map { (declared($0.key), $0.value) })
        flags = Set(arguments.flags.map(declared))
    }

    /// The last value given for an option that takes one.
    public func value(_ option: Options) -> String? {
        values(option).last
    }

    /// The last value given for an option that takes one, with how it was quoted.
    public func valueWord(_ option: Options) -> ShellWord? {
        valueWords[option]?.last
    }

    /// Every value given for an option that takes one (a repeatable option), in order.
    public func values(_ option: Options) -> [String] {
        precondition(!option.declaration.isFlag, "\(command): '\(option.declaration.name)' is a flag; ask isSet")
        return values[option] ?? []
    }

    /// Whether a flag was given.
    public func isSet(_ flag: Options) -> Bool {
        precondition(flag.declaration.isFlag, "\(command): '\(flag.declaration.name)' takes a value; ask value")
        return flags.contains(flag)
    }

    /// A message of this command: `find: MESSAGE`.
    public func labelled(_ message: String) -> String {
        "\(command): \(message)"
    }

    /// A usage error of this command: `find: MESSAGE` (exit 64).
    public func usageError(_ message: String) -> ShellError {
        .usage(labelled(message), command: command)
    }

    /// A failure of this command: `find: MESSAGE` (exit 1).
    public func failure(_ message: String) -> ShellError {
        .failure(labelled(message))
    }

    /// This command's stop at Ctrl-C: `find: MESSAGE` (exit 130).
    public func interrupted(_ message: String) -> ShellError {
        .interrupted(labelled(message))
    }

    /// The value of an option that takes a number of seconds (0 or more), nil when not given.
    public func seconds(_ option: Options) throws(ShellError) -> Double? {
        guard let text = value(option) else { return nil }
        guard let seconds = Double(seconds: text) else {
            throw usageError("\(option.name) takes a number of seconds, not '\(text)'")
        }
        return seconds
    }

    /// The value of a count option (a whole number, 0 or more), nil when not given.
    public func count(_ option: Options) throws(ShellError) -> Int? {
        guard let text = value(option) else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw usageError("\(option.declaration.name) takes a whole number, not '\(text)'")
        }
        return value
    }
}
