extension Command {
    /// `help [COMMAND]`: the list of commands, or one command's usage, options and examples.
    public static let help = Command(
        name: "help", synopsis: "[COMMAND]", summary: "List the commands, or show one command's usage and examples",
        examples: ["help", "help import"], arity: 0...1
    ) { invocation, shell in
        if let name = invocation.positionals.first {
            guard let command = shell.commands.command(named: name) else {
                throw invocation.usageError("unknown command '\(name)'")
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
            text += "\noptions:\n" + Option.helpList(options, gap: 2)
        }
        if !examples.isEmpty {
            text += "\nexamples:\n"
            for example in examples { text += "  archivist \(example)\n" }
        }
        return text
    }
}
