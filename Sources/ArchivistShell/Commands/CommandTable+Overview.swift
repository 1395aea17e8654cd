extension CommandTable {
    /// The text `help` prints: global usage and one line per command.
    public var overview: String {
        var text = """
        usage: archivist [--data DIR] [--format table|json|jsonl|csv] [--bail] [--batch|--interactive] [COMMAND [ARGS...]]

        Keeps a local, hand-inspectable cache of New York Times articles in a data folder
        (--data DIR, else $ARCHIVIST_DATA, else ./data).

        commands:

        """
        let width = commands.map(\.name.count).max() ?? 0
        for command in commands {
            text += "  " + command.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + command.summary + "\n"
        }
        text += """

        global options:
          --data DIR      the data folder
          --format F      table (default on a terminal), json, jsonl (default otherwise) or csv
          --bail          in a script, stop at the first command that fails
          --batch         read commands from standard input even when it is a terminal
          --interactive   the shell's banner and prompts even when standard input is not a terminal
          --version       print the version

        With no COMMAND on a terminal, archivist is an interactive shell (line editing, history).
        Otherwise commands are read from standard input, one per line (blank lines and
        # comments skipped; an open quote, JSON brackets or a trailing \\ continue a command on
        the next line). Errors name their line; the exit status is 1 if any command failed.
        Shell commands there: .mode FORMAT, .timer on|off, .open DIR, .quit, .help.

        Run 'archivist help COMMAND' for a command's usage and examples.

        """
        return text
    }
}
