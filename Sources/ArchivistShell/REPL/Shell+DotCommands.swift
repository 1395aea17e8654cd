extension Shell {
    /// `.mode`, `.timer`, `.open`, `.quit`, `.help`: settings of the shell itself.
    func runDotCommand(_ name: String, _ arguments: [String]) -> Int32 {
        switch (name, arguments.count) {
        case (".mode", 0):
            output.line(effectiveFormat.rawValue)
        case (".mode", 1):
            guard let format = OutputFormat(rawValue: arguments[0]) else {
                return report(ShellError.usage(".mode: expected \(OutputFormat.choices), not '\(arguments[0])'", command: nil))
            }
            self.format = format
        case (".timer", 1) where ["on", "off"].contains(arguments[0]):
            showsTimer = arguments[0] == "on"
        case (".pager", 1) where ["on", "off"].contains(arguments[0]):
            usesPager = arguments[0] == "on"
        case (".open", 1):
            // The folder is switched only once its store opens: a bad one leaves the shell where it was.
            do {
                try open(dataFolder: arguments[0])
            } catch {
                return report(error)
            }
        case (".quit", 0), (".exit", 0):
            return Self.quitStatus
        case (".help", 0):
            output.write(Self.dotCommandHelp)
        default:
            return report(ShellError.usage("\(name): unknown or malformed shell command; try .help", command: nil))
        }
        return ExitStatus.success
    }

    /// The help of the dot-commands.
    static let dotCommandHelp = """
        .mode [table|json|jsonl|csv]   show or set the output format
        .timer on|off                  print each command's wall time on stderr
        .pager on|off                  show output taller than the terminal through $PAGER (else less -FRX)
        .open DIR                      switch to another data folder (or a postgresql:// copy, read-only)
        .quit, .exit, quit, exit       stop reading commands (Ctrl-D too)
        .help                          this list

        """
}
