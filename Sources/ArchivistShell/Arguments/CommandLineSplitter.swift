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

    /// The result of splitting, with how each word was quoted.
    public enum WordsOutcome: Equatable, Sendable {
        /// The words of a whole command.
        case words([ShellWord])
        /// The command goes on on the next line.
        case incomplete
    }

    /// Follows the brackets of a JSON argument, outside its strings.
    struct BracketTracker {
        var isJSON = false
        var depth = 0
        var inString = false
        var escaped = false

        mutating func start(with c: Unicode.Scalar) {
            isJSON = c == "{" || c == "["
        }

        mutating func feed(_ c: Unicode.Scalar) {
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
        switch splitWords(text) {
        case .words(let words): return .words(words.map(\.text))
        case .incomplete: return .incomplete
        }
    }

    /// Splits `text` into words that remember their quotes.
    public static func splitWords(_ text: String) -> WordsOutcome {
        var scanner = LineScanner()
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            scanner.add(String(decoding: line, as: UTF8.self))
        }
        return scanner.outcome
    }

    /// Whether `line` ends in an odd number of backslashes (the last one escapes the newline after).
    static func endsInContinuation(_ line: String) -> Bool {
        var trailing = 0
        for c in line.unicodeScalars.reversed() {
            guard c == "\\" else { break }
            trailing += 1
        }
        return trailing % 2 == 1
    }

    /// The scan of a command given a line at a time, as a script or the prompt reads it: each line
    /// costs its own length however many lines came before (a quote left open over 100,000 lines
    /// is scanned once, not once per line).
    ///
    /// A line ending in an odd number of backslashes continues on the next one: the backslash and
    /// the newline are dropped and the two lines are scanned as one. Any other line break is a
    /// newline character of the command (white space between words, kept inside quotes and JSON).
    struct LineScanner {
        private var words = WordScanner()
        /// The lines joined by continuations since the last one scanned, without their backslashes.
        private var continued = ""
        private var isContinuing = false
        private var hasScanned = false

        /// Adds the next line (without its newline).
        mutating func add(_ line: String) {
            if CommandLineSplitter.endsInContinuation(line) {
                continued.unicodeScalars.append(contentsOf: line.unicodeScalars.dropLast())
                isContinuing = true
                return
            }
            var chunk = hasScanned ? "\n" : ""
            chunk += continued
            chunk += line
            continued = ""
            isContinuing = false
            hasScanned = true
            words.scan(Array(chunk.unicodeScalars))
        }

        /// The words, or `.incomplete` while a quote, a JSON argument or a continuation is open.
        var outcome: WordsOutcome {
            isContinuing ? .incomplete : words.outcome
        }
    }

    /// The scan of a command's characters into words, one character (or escape) at a time.
    struct WordScanner {
        private var characters: [Unicode.Scalar] = []
        private var index = 0
        private var words: [ShellWord] = []
        private var current = ""
        private var inWord = false
        /// How many quoted spans the current word has, the quote of the first, and whether it
        /// has characters outside quotes.
        private var quotedSpans = 0
        private var firstQuote: Unicode.Scalar?
        private var hasBareCharacters = false
        /// The quote character of an open quote.
        private var quote: Unicode.Scalar?
        private var brackets = BracketTracker()
        /// Whether the current word is a JSON argument, taken literally.
        private var literalJSON = false

        /// The words, or `.incomplete` when a quote or a JSON argument's brackets are still open.
        var outcome: WordsOutcome {
            if quote != nil || brackets.isOpen { return .incomplete }
            return .words(inWord ? words + [currentWord] : words)
        }

        /// The current word with its quoting.
        private var currentWord: ShellWord {
            let quoting: ShellWord.Quoting
            if literalJSON {
                quoting = .json
            } else if quotedSpans == 0 {
                quoting = .none
            } else if quotedSpans == 1, !hasBareCharacters {
                quoting = firstQuote == "'" ? .single : .double
            } else {
                quoting = .mixed
            }
            return ShellWord(current, quoting: quoting)
        }

        /// Scans `chunk`, the characters of the command that follow those already scanned (a
        /// backslash escapes only within its chunk: a chunk never ends in one that escapes).
        mutating func scan(_ chunk: [Unicode.Scalar]) {
            characters = chunk
            index = 0
            while index < characters.count {
                let c = characters[index]
                index += 1
                scan(c)
            }
        }

        private mutating func scan(_ c: Unicode.Scalar) {
            // A word that starts with a bare `{` or `[` is JSON: taken literally (quotes and
            // backslashes included) until its brackets close, so `put ID {"a": 1}` works as typed.
            if literalJSON {
                if brackets.isOpen || !Self.isBlank(c) { return add(c, bare: true) }
                return endWord(at: c)
            }
            if quote == nil, !inWord, c == "{" || c == "[" {
                literalJSON = true
                brackets.start(with: c)
                return add(c, bare: true)
            }
            if let open = quote { return scanQuoted(c, closedBy: open) }
            scanBare(c)
        }

        /// Inside quotes: everything is kept until the quote that opened them, except that within
        /// double quotes a backslash escapes `"`, `\`, `$` and a backquote.
        private mutating func scanQuoted(_ c: Unicode.Scalar, closedBy open: Unicode.Scalar) {
            if c == open {
                quote = nil
            } else if open == "\"", c == "\\", let next = peek(), ["\"", "\\", "$", "`"].contains(next) {
                index += 1
                add(next, bare: false)
            } else {
                add(c, bare: false)
            }
        }

        /// Outside quotes: quotes open, a backslash escapes the next character, white space ends a
        /// word (unless a JSON argument's brackets are open).
        private mutating func scanBare(_ c: Unicode.Scalar) {
            switch c {
            case "'", "\"":
                quote = c
                inWord = true
                quotedSpans += 1
                if firstQuote == nil { firstQuote = c }
            case "\\":
                if let next = peek() {
                    index += 1
                    add(next, bare: true)
                }
            case _ where Self.isBlank(c):
                endWord(at: c)
            default:
                add(c, bare: true)
            }
        }

        private mutating func endWord(at blank: Unicode.Scalar) {
            guard inWord else { return }
            if brackets.isOpen {
                // Inside an unfinished JSON value: the white space is part of it.
                current.unicodeScalars.append(blank)
                return
            }
            words.append(currentWord)
            current = ""
            inWord = false
            quotedSpans = 0
            firstQuote = nil
            hasBareCharacters = false
            literalJSON = false
            brackets = BracketTracker()
        }

        private mutating func add(_ c: Unicode.Scalar, bare: Bool) {
            current.unicodeScalars.append(c)
            brackets.feed(c)
            inWord = true
            if bare { hasBareCharacters = true }
        }

        private func peek() -> Unicode.Scalar? {
            index < characters.count ? characters[index] : nil
        }

        private static func isBlank(_ c: Unicode.Scalar) -> Bool {
            c == " " || c == "\t" || c == "\n" || c == "\r"
        }
    }
}
