extension Command {
    /// `help [COMMAND]`: the list of commands, or one command's usage, options and examples.
    public static let help = Command(
        name: "help", synopsis: "[COMMAND]", summary: "List the commands, or show one command's usage and examples",
        examples: ["help", "help import"], arity: 0...1
    ) { invocation, shell in
        if let name = invocation.positionals.first {
            guard let command = shell.commands.command(named: name) else {
                throw ShellError.usage("help: unknown command '\(name)'", command: nil)
            }
            shell.output.write(command.helpText)
            return
        }
        shell.output.write(shell.commands.overview)
    }

    /// The text `help COMMAND` prints.
    public var helpText: String {
        var text = "usage: \(usage)\n\n\(summary).\n"
        if !discussion.isEmpty { text += "\n\(discussion)\n" }
        if !options.isEmpty {
            text += "\noptions:\n"
            let labels = options.map { "  " + $0.label }
            let width = labels.map(\.count).max() ?? 0
            for (label, option) in zip(labels, options) {
                text += label.padding(toLength: width + 2, withPad: " ", startingAt: 0) + option.help + "\n"
            }
        }
        if !examples.isEmpty {
            text += "\nexamples:\n"
            for example in examples { text += "  archivist \(example)\n" }
        }
        return text
    }
}
