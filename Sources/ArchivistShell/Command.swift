/// One command of the command table: its name, usage, help text and what it does.
///
/// The same table serves the command line, piped scripts and the interactive shell.
public struct Command: Sendable {
    /// An option a command accepts.
    public struct Option: Sendable {
        /// The spelling, with dashes: `--to`.
        public var name: String
        /// The name of its value (`FILE`), or nil for a flag.
        public var valueName: String?
        /// One line of help.
        public var help: String

        /// Creates an option.
        public init(_ name: String, value valueName: String? = nil, help: String) {
            self.name = name
            self.valueName = valueName
            self.help = help
        }

        /// The spelling with its value's name, as usage lines show it: `--to FILE`.
        var label: String {
            name + (valueName.map { " " + $0 } ?? "")
        }
    }

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
    /// Options it accepts.
    public var options: [Option]
    /// How many positional arguments it takes.
    public var arity: ClosedRange<Int>
    /// Whether Ctrl-C asks the command to stop at its next safe point (instead of ending the
    /// process): long commands that check `Interruption.isRequested`.
    public var isInterruptible: Bool
    /// Runs the command.
    public var run: @Sendable (Invocation, Shell) throws -> Void

    /// Creates a command.
    public init(name: String, synopsis: String, summary: String, discussion: String = "", examples: [String] = [],
                options: [Option] = [], arity: ClosedRange<Int>, isInterruptible: Bool = false,
                run: @escaping @Sendable (Invocation, Shell) throws -> Void) {
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.discussion = discussion
        self.examples = examples
        self.options = options
        self.arity = arity
        self.isInterruptible = isInterruptible
        self.run = run
    }

    /// `archivist put ID JSON`.
    public var usage: String {
        let options = self.options.map { "[\($0.label)]" }
        return (["archivist", name] + options + (synopsis.isEmpty ? [] : [synopsis])).joined(separator: " ")
    }

    /// Splits arguments into options and positionals, checking them against this command.
    public func parse(_ arguments: [String]) throws(ShellError) -> Invocation {
        var invocation = Invocation(command: name)
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("--") || argument == "-" {
                invocation.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (name, inlineValue) = Shell.split(argument)
            guard let option = options.first(where: { $0.name == name }) else {
                throw .usage("\(self.name): unknown option '\(name)'; usage: \(usage)", command: self.name)
            }
            if let valueName = option.valueName {
                if let inlineValue {
                    invocation.options[name, default: []].append(inlineValue)
                } else if index < arguments.count {
                    invocation.options[name, default: []].append(arguments[index])
                    index += 1
                } else {
                    throw .usage("\(self.name): option '\(name)' needs a value (\(valueName))", command: self.name)
                }
            } else {
                if inlineValue != nil {
                    throw .usage("\(self.name): option '\(name)' takes no value", command: self.name)
                }
                invocation.flags.insert(name)
            }
        }
        if invocation.positionals.count < arity.lowerBound {
            throw .usage("\(self.name): missing arguments; usage: \(usage)", command: self.name)
        }
        if invocation.positionals.count > arity.upperBound {
            throw .usage("\(self.name): too many arguments; usage: \(usage)", command: self.name)
        }
        return invocation
    }
}

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
