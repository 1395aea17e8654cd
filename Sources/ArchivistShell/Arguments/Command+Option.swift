extension Command {
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
}
