import ArchivistBase
import ArchivistStore

/// The text of a FILTER given as words, read as the user typed them.
///
/// At the prompt and in scripts the splitter has taken the quotes off, but each word remembers
/// them; on the command line the user's shell took them and only the words are left. The rules:
///
/// - A word where a value is expected (after `=`, `!=`, `<`, `<=`, `>`, `>=` or `~`) is one value:
///   quoted if it was quoted, or holds a space, an operator character or a quote
///   (`section_name = "New York"`, `archivist count section_name = "New York"`).
/// - A quoted word that is a whole filter with a condition (or has a filter's operators or
///   keywords, so that its error is shown) is that filter, in parentheses when other words go with
///   it (`count 'section_name = Sports'`, `find '{"a": 1}'`).
/// - Any other quoted word, or a word of the command line holding a space, is a phrase to search
///   (`count "knicks lopez"`, `archivist find "climate change"`).
/// - Every other word is taken as it is (`and`, `section_name`, `=`, `Sports`, and bare words
///   that the parser reads as a full-text search).
public enum FilterWords {
    /// The filter text of `words`.
    public static func text(_ words: [ShellWord]) -> String {
        if words.count == 1, words[0].quoting == .json || words[0].text.drop(while: \.isWhitespace).first == "{" {
            return words[0].text
        }
        var pieces: [String] = []
        for word in words {
            let afterOperator = pieces.last.map(endsInOperator) ?? false
            pieces.append(piece(word, afterOperator: afterOperator, alone: words.count == 1))
        }
        return pieces.joined(separator: " ")
    }

    /// What one word stands for in the filter text.
    static func piece(_ word: ShellWord, afterOperator: Bool, alone: Bool) -> String {
        let text = word.text
        let wasQuoted: Bool
        switch word.quoting {
        case .none, .json: return text
        case .single, .double, .mixed: wasQuoted = true
        case .unknown: wasQuoted = text.contains(where: \.isWhitespace)
        }
        if afterOperator {
            return wasQuoted || text.contains(where: { "()=!<>~,\"' \t".contains($0) }) ? quoted(text) : text
        }
        guard wasQuoted else { return text }
        if word.quoting == .mixed, let condition = condition(text) { return condition }
        if let filter = try? FilterParser.parse(text) {
            guard !isTextSearch(filter) || text.first == "\"" || text.first == "'" else { return quoted(text) }
            return alone ? text : "(" + text + ")"
        }
        // Not a filter alone: a phrase, unless it has a filter's syntax (a part of one, such as a
        // list, or a mistake whose error is then shown).
        let hasSyntax =
            text.contains(where: { "=<>~()".contains($0) })
            || text.split(whereSeparator: \.isWhitespace).contains { FilterParser.keywords.contains($0.lowercased()) }
        return hasSyntax ? text : quoted(text)
    }

    /// A word such as `headline.main~"don't"` (quotes around its value only): the field and the
    /// operator as typed, the rest one quoted value.
    static func condition(_ text: String) -> String? {
        guard let start = text.firstIndex(where: { "=!<>~".contains($0) }), start > text.startIndex else { return nil }
        let field = text[..<start]
        guard !field.contains(where: { $0.isWhitespace || "()\"',".contains($0) }) else { return nil }
        let end = text[start...].firstIndex(where: { !"=!<>~".contains($0) }) ?? text.endIndex
        return field + " " + text[start..<end] + " " + quoted(String(text[end...]))
    }

    /// Whether the last piece ends in a comparison operator, so that a value comes next.
    static func endsInOperator(_ piece: String) -> Bool {
        guard let last = piece.last else { return false }
        return "=<>~".contains(last) && !piece.hasSuffix("\"")
    }

    /// Whether a filter is made of full-text searches only (a phrase, bare words).
    static func isTextSearch(_ filter: Filter) -> Bool {
        switch filter {
        case .text: return true
        case .and(let parts): return parts.allSatisfy(isTextSearch)
        default: return false
        }
    }

    /// `text` in double quotes, as the filter language reads it back.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for c in text {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.append(c)
            }
        }
        return out + "\""
    }
}
