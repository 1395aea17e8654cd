/// Splits a line typed at the prompt or read from a script into words, as a POSIX shell does:
/// `'single quotes'` keep everything, `"double quotes"` allow `\"` and `\\`, and a backslash
/// outside quotes escapes the next character.
///
/// A word that starts with a bare `{` or `[` is a JSON argument, taken as typed (its quotes and
/// backslashes are JSON's, not the shell's). A command is not finished while a quote is open, a
/// JSON argument's brackets do not balance yet, or a line ends in `\`: the next line continues it.
public enum CommandLineSplitter {
    /// The result of splitting.
    public enum Outcome: Equatable, Sendable {
        /// The words of a whole command.
        case words([String])
        /// The command goes on on the next line.
        case incomplete
    }

    /// Follows the brackets of a JSON argument, outside its strings.
    struct BracketTracker {
        var isJSON = false
        var depth = 0
        var inString = false
        var escaped = false

        mutating func start(with c: Character) {
            isJSON = c == "{" || c == "["
        }

        mutating func feed(_ c: Character) {
            guard isJSON else { return }
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
                return
            }
            switch c {
            case "\"": inString = true
            case "[", "{": depth += 1
            case "]", "}": depth -= 1
            default: break
            }
        }

        var isOpen: Bool { isJSON && depth > 0 }
    }

    /// Splits `text` (one or more lines joined with newlines).
    public static func split(_ text: String) -> Outcome {
        // A line ending in an unescaped backslash continues.
        var trailing = 0
        for c in text.reversed() { if c == "\\" { trailing += 1 } else { break } }
        if trailing % 2 == 1 { return .incomplete }
        let characters = Array(text.replacingOccurrences(of: "\\\n", with: ""))
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var brackets = BracketTracker()

        func add(_ c: Character) {
            current.append(c)
            brackets.feed(c)
            inWord = true
        }

        // A word that starts with a bare `{` or `[` is JSON: taken literally (quotes and
        // backslashes included) until its brackets close, so `put ID {"a": 1}` works as typed.
        var literalJSON = false
        var i = 0
        while i < characters.count {
            let c = characters[i]
            if literalJSON {
                if brackets.isOpen || !(c == " " || c == "\t" || c == "\n" || c == "\r") {
                    add(c)
                    i += 1
                    continue
                }
                literalJSON = false
            }
            if quote == nil, !inWord, c == "{" || c == "[" {
                literalJSON = true
                brackets.start(with: c)
                add(c)
                i += 1
                continue
            }
            if let open = quote {
                if c == open {
                    quote = nil
                } else if open == "\"", c == "\\", i + 1 < characters.count, ["\"", "\\", "$", "`"].contains(characters[i + 1]) {
                    add(characters[i + 1])
                    i += 1
                } else {
                    add(c)
                }
                i += 1
                continue
            }
            switch c {
            case "'", "\"":
                quote = c
                inWord = true
            case "\\":
                if i + 1 < characters.count {
                    add(characters[i + 1])
                    i += 1
                }
            case " ", "\t", "\n", "\r":
                if inWord {
                    if brackets.isOpen {
                        // Inside an unfinished JSON value: the white space is part of it.
                        current.append(c)
                    } else {
                        words.append(current)
                        current = ""
                        inWord = false
                        brackets = BracketTracker()
                    }
                }
            default:
                add(c)
            }
            i += 1
        }
        if quote != nil || brackets.isOpen { return .incomplete }
        if inWord { words.append(current) }
        return .words(words)
    }
}
