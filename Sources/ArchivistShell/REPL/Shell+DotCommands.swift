extension DotCommand {
    /// The shell's own commands, in the order `.help` lists them.
    static let all: [DotCommand] = [
        DotCommand(
            name: ".mode", aliases: [], arguments: .optional(OutputFormat.allCases.map(\.rawValue)),
            summary: "show or set the output format"
        ) { shell, arguments in
            guard let word = arguments.first else {
                shell.output.line(shell.effectiveFormat.rawValue)
                return ExitStatus.success
            }
            guard let format = OutputFormat(rawValue: word) else {
                return shell.report(ShellError.usage(".mode: expected \(OutputFormat.choices), not '\(word)'", command: nil))
            }
            shell.format = format
            return ExitStatus.success
        },
        DotCommand(
            name: ".timer", aliases: [], arguments: .oneOf(["on", "off"]), summary: "print each command's wall time on stderr"
        ) { shell, arguments in
            shell.showsTimer = arguments[0] == "on"
            return ExitStatus.success
        },
        DotCommand(
            name: ".pager", aliases: [], arguments: .oneOf(["on", "off"]),
            summary: "show output taller than the terminal through $PAGER (else less -FRX)"
        ) { shell, arguments in
            shell.usesPager = arguments[0] == "on"
            return ExitStatus.success
        },
        DotCommand(
            name: ".open", aliases: [], arguments: .word("DIR"),
            summary: "switch to another data folder (or a postgresql:// copy, read-only)"
        ) { shell, arguments in
            // The folder is switched only once its store opens: a bad one leaves the shell where it was.
            do {
                try shell.open(dataFolder: arguments[0])
            } catch {
                return shell.report(error)
            }
            return ExitStatus.success
        },
        // psql's and mongosh's words for leaving, as `.quit` and `.exit` are sqlite3's.
        DotCommand(
            name: ".quit", aliases: [".exit", "quit", "exit"], arguments: .none, summary: "stop reading commands (Ctrl-D too)"
        ) { _, _ in Shell.quitStatus },
        DotCommand(name: ".help", aliases: [], arguments: .none, summary: "this list") { shell, _ in
            shell.output.write(DotCommand.help)
            return ExitStatus.success
        },
    ]
}

extension Shell {
    /// Runs a command of the shell itself (``DotCommand``): `.mode`, `.timer`, `.open`, `.quit`, ...
    func runDotCommand(_ name: String, _ arguments: [String]) -> Int32 {
        guard let command = DotCommand.named(name), command.arguments.accepts(arguments) else {
            return report(ShellError.usage("\(name): unknown or malformed shell command; try .help", command: nil))
        }
        return command.run(self, arguments)
    }
}
