extension Shell {
    /// What `archivist`'s command line asks for once its global options are taken out.
    struct GlobalArguments {
        /// The command and its arguments (empty: read commands from standard input).
        var words: [String] = []
        /// `--data DIR`, nil when not given.
        var dataFolder: String?
        /// `--format F`, nil when not given.
        var format: OutputFormat?
        /// `--bail`: a script stops at the first command that fails.
        var bail = false
        /// `--batch` or `--interactive`, nil for neither.
        var mode: InputMode?
        /// `--version`: print the version and do nothing else.
        var printsVersion = false
    }

    /// Takes the global options out of `archivist ARGS...` (anywhere before `--`); the rest is the
    /// command. Stops at `--version`.
    static func parseGlobalOptions(_ arguments: [String]) throws(ShellError) -> GlobalArguments {
        var result = GlobalArguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                result.words.append(contentsOf: arguments[(index - 1)...])
                break
            }
            let (name, inline) = Self.split(argument)
            guard let option = GlobalOption(spelling: name) else {
                result.words.append(argument)
                continue
            }
            var value = ""
            if !option.declaration.isFlag {
                guard let given = inline ?? (index < arguments.count ? arguments[index] : nil) else {
                    throw .usage("option '\(name)' needs a value", command: nil)
                }
                if inline == nil { index += 1 }
                value = given
            }
            switch option {
            case .data:
                guard !value.isEmpty else { throw .usage("option '\(name)' needs a folder", command: nil) }
                result.dataFolder = value
            case .format:
                guard let format = OutputFormat(rawValue: value) else {
                    throw .usage("unknown format '\(value)'; use \(OutputFormat.choices)", command: nil)
                }
                result.format = format
            case .help: result.words.insert("help", at: 0)
            case .bail: result.bail = true
            case .batch: result.mode = .batch
            case .interactive: result.mode = .interactive
            case .version:
                result.printsVersion = true
                return result
            }
        }
        return result
    }

    /// `--name=value` as the name and the value; any other argument as itself and nil.
    static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
