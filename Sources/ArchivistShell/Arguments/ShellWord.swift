/// A word of a command line, with how it was quoted where that is known: the words of a FILTER are
/// read as typed (`section_name = "New York"` keeps its value whole, `"knicks lopez"` stays a
/// phrase) even after the splitter has taken the quotes off.
public struct ShellWord: Equatable, Sendable {
    /// How a word was quoted.
    public enum Quoting: Equatable, Sendable {
        /// No quotes (`Sports`).
        case none
        /// One pair of single quotes around the whole word (`'New York'`).
        case single
        /// One pair of double quotes around the whole word (`"New York"`).
        case double
        /// Quotes around part of it (`a"b c"`).
        case mixed
        /// A JSON argument, taken as typed (`{"a": 1}`).
        case json
        /// Not known: an argument of the process, whose quotes the user's shell took.
        case unknown
    }

    /// The word, quotes removed.
    public var text: String
    /// How it was quoted.
    public var quoting: Quoting

    /// A word.
    public init(_ text: String, quoting: Quoting) {
        self.text = text
        self.quoting = quoting
    }
}
