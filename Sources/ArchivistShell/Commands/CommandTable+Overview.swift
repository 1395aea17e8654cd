extension CommandTable {
    /// The text `help` prints: global usage and one line per command.
    public var overview: String {
        var text =
            GlobalOption.usageLine + """


                Keeps a local, hand-inspectable cache of New York Times articles in a data folder
                (--data DIR, else $ARCHIVIST_DATA, else ./data).

                commands:

                """
        let width = commands.map(\.name.count).max() ?? 0
        for command in commands {
            text += "  " + command.name + String(repeating: " ", count: width + 2 - command.name.count) + command.summary + "\n"
        }
        text +=
            "\nglobal options:\n" + GlobalOption.helpList + """

                With no COMMAND on a terminal, archivist is an interactive shell (line editing, history).
                Otherwise commands are read from standard input, one per line (blank lines and
                # comments skipped; an open quote, JSON brackets or a trailing \\ continue a command on
                the next line). Errors name their line; the exit status is 1 if any command failed.
                Shell commands there: .mode FORMAT, .timer on|off, .pager on|off, .open DIR, .help, and .quit,
                .exit, quit or exit (Ctrl-D too) to leave.

                Run 'archivist help COMMAND' for a command's usage and examples.

                """
        return text
    }
}
