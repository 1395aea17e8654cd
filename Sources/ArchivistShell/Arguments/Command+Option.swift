extension Command {
    /// How an option is spelt, what value it takes and what it does: one declaration, from which
    /// parsing, usage lines and help are made.
    public struct Option: Sendable, Equatable {
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

        /// Whether it is a flag (takes no value).
        public var isFlag: Bool { valueName == nil }

        /// The spelling with its value's name, as usage lines show it: `--to FILE`.
        var label: String {
            name + (valueName.map { " " + $0 } ?? "")
        }

        /// Help's list of options: each label, indented two spaces, then its help line, the help
        /// lines aligned `gap` spaces after the longest label.
        static func helpList(_ options: [Option], gap: Int) -> String {
            let labels = options.map { "  " + $0.label }
            let width = labels.map(\.count).max() ?? 0
            return zip(labels, options).map { label, option in
                label + String(repeating: " ", count: width + gap - label.count) + option.help + "\n"
            }.joined()
        }
    }
}

extension Command.Option {
    /// `--fields a,b.c`, as `find` and `search` take it.
    static let fields = Command.Option("--fields", value: "a,b.c", help: "the fields to show (dotted paths, comma-separated)")
    /// `--api-base URL`, taken by every command that talks to the API.
    static let apiBase = Command.Option(
        "--api-base", value: "URL",
        help: "the API's base URL (else NYT_API_BASE, else https://api.nytimes.com)")
    /// `--pace SECONDS`, taken by every command that talks to the API.
    static let pace = Command.Option("--pace", value: "SECONDS", help: "least seconds between requests (else ARCHIVIST_PACE, else 12)")
}
