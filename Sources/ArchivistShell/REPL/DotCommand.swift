/// A command of the shell itself (`.mode`, `.timer`, ...), as ``DotCommand/all`` declares it: the
/// shell's dispatch (`Shell.runDotCommand`), `.help`'s list and completion are all read from that
/// one table.
struct DotCommand: Sendable {
    /// The words a dot-command takes after its name.
    enum Arguments: Sendable {
        /// None.
        case none
        /// One word of any kind, named in `.help` (`DIR`).
        case word(String)
        /// One of these words (`on|off`); any other is a malformed command.
        case oneOf([String])
        /// None, or a word the command checks itself: these are the ones it takes
        /// (`[table|json|jsonl|csv]`).
        case optional([String])

        /// What follows the name in `.help`, if anything.
        var usage: String? {
            switch self {
            case .none: nil
            case .word(let name): name
            case .oneOf(let words): words.joined(separator: "|")
            case .optional(let words): "[" + words.joined(separator: "|") + "]"
            }
        }

        /// The words completion offers after the name.
        var completions: [String] {
            switch self {
            case .none, .word: []
            case .oneOf(let words), .optional(let words): words
            }
        }

        /// Whether `words` are arguments of this shape.
        func accepts(_ words: [String]) -> Bool {
            switch self {
            case .none: words.isEmpty
            case .word: words.count == 1
            case .oneOf(let choices): words.count == 1 && choices.contains(words[0])
            case .optional: words.count <= 1
            }
        }
    }

    /// Its name, with the dot.
    let name: String
    /// Its other names. One with a dot is the same command; one without (psql's and mongosh's
    /// `quit`) is the command only when nothing follows it on the line.
    let aliases: [String]
    /// The words it takes.
    let arguments: Arguments
    /// What it does, for `.help`.
    let summary: String
    /// Does it, on words `arguments` accepts: an exit status, or `Shell.quitStatus` to leave.
    let run: @Sendable (Shell, [String]) -> Int32

    /// The name and the aliases.
    var names: [String] { [name] + aliases }

    /// The dot-command with this name or alias.
    static func named(_ name: String) -> DotCommand? {
        all.first { $0.names.contains(name) }
    }

    /// Every name and alias as completion offers them first: the words without a dot in
    /// alphabetical order, then the dot-commands in the table's order.
    static var completionNames: [String] {
        let names = all.flatMap(\.names)
        return names.filter { !$0.hasPrefix(".") }.sorted() + names.filter { $0.hasPrefix(".") }
    }

    /// `.help`'s list: each command's names and usage, then what it does, in the table's order.
    static var help: String {
        let labels = all.map { command in
            command.names.joined(separator: ", ") + (command.arguments.usage.map { " " + $0 } ?? "")
        }
        let width = (labels.map(\.count).max() ?? 0) + 3
        return zip(labels, all).map { label, command in
            label + String(repeating: " ", count: width - label.count) + command.summary + "\n"
        }.joined()
    }
}
