/// The options of `archivist` itself, taken anywhere before `--` on its command line, declared
/// once: the same declarations drive `Shell.run`'s parsing, the usage line and `help`'s list.
public enum GlobalOption: CommandOptions {
    /// `--data DIR`: the data folder.
    case data
    /// `--format F`: the output format.
    case format
    /// `--bail`: a script stops at its first failing command.
    case bail
    /// `--batch`: read a script from standard input even at a terminal.
    case batch
    /// `--interactive`: the shell even when standard input is not a terminal.
    case interactive
    /// `--version`: print the version.
    case version
    /// `--help` or `-h`: the same as `archivist help`.
    case help

    /// The option's spelling, value name and help line.
    public var declaration: Command.Option {
        switch self {
        case .data:
            Command.Option(
                "--data", value: "DIR", help: "the data folder, or postgresql://HOST/DB[?table=NAME]: a replicated copy, read-only")
        case .format:
            Command.Option("--format", value: "F", help: "table (default on a terminal), json, jsonl (default otherwise) or csv")
        case .bail: Command.Option("--bail", help: "in a script, stop at the first command that fails")
        case .batch: Command.Option("--batch", help: "read commands from standard input even when it is a terminal")
        case .interactive:
            Command.Option("--interactive", help: "the shell's banner and prompts even when standard input is not a terminal")
        case .version: Command.Option("--version", help: "print the version")
        case .help: Command.Option("--help", help: "the same as 'archivist help'")
        }
    }

    /// The option a command-line word spells (`-h` is `--help`), nil for any other word.
    init?(spelling: String) {
        guard let option = Self.allCases.first(where: { $0.name == spelling || $0.aliases.contains(spelling) }) else {
            return nil
        }
        self = option
    }

    /// Other spellings of the option.
    var aliases: [String] {
        self == .help ? ["-h"] : []
    }

    /// How the usage line shows the option (`--format table|json|jsonl|csv`, and `--batch` and
    /// `--interactive` as one choice), nil when it does not.
    var usageLabel: String? {
        switch self {
        case .data, .bail: declaration.label
        case .format: name + " " + OutputFormat.allCases.map(\.rawValue).joined(separator: "|")
        case .batch: Self.batch.name + "|" + Self.interactive.name
        case .interactive, .version, .help: nil
        }
    }

    /// Whether `help` lists the option among the global options (`--help` is `help` itself).
    var isListed: Bool {
        self != .help
    }

    /// `usage: archivist [--data DIR] ... [COMMAND [ARGS...]]`.
    static var usageLine: String {
        let options = allCases.compactMap(\.usageLabel).map { "[\($0)]" }
        return (["usage: archivist"] + options + ["[COMMAND [ARGS...]]"]).joined(separator: " ")
    }

    /// The lines of `help`'s global options list.
    static var helpList: String {
        Command.Option.helpList(allCases.filter(\.isListed).map(\.declaration), gap: 3)
    }
}
