import ArchivistBase

/// The infix filter language, for people at the prompt. It compiles to the same `Filter` as a
/// MongoDB filter document.
///
/// ```
/// section_name = Sports and pub_date >= 2015-07-01 and not headline.main ~ "preview"
/// news_desk in (Sports, Foreign) or word_count > 1000
/// byline.original exists and "climate change"
/// ```
///
/// Operators: `= != < <= > >= ~` (case- and accent-insensitive substring), `in (a, b)`,
/// `not in (a, b)`, `exists`, `missing`; `and`, `or`, `not` and parentheses. Values are quoted
/// (`"New York"`, `'it''s'`) or bare (`Sports`, `2015-07-01`, `879`, `true`, `null`). A bare number is
/// a number; quote it (`"879"`) for a string. A quoted phrase on its own is a full-text search, and
/// so are bare words that no operator follows (`climate change`, as in a search box).
public enum FilterParser {
    /// Parses a filter; an empty text is `.all`. Errors name the column and what was expected.
    public static func parse(_ text: String) throws(StoreError) -> Filter {
        var parser = Parser(tokens: try tokenize(text), length: text.count)
        if parser.tokens.isEmpty { return .all }
        let filter = try parser.parseOr()
        if let token = parser.peek {
            throw .invalidFilter("column \(token.column): expected 'and', 'or' or the end, found \(token.display)")
        }
        return filter
    }

    /// Parses a filter given either as a MongoDB filter document (text starting with `{`) or in
    /// the infix language.
    public static func parseAny(_ text: String) throws(StoreError) -> Filter {
        if text.drop(while: { $0.isWhitespace }).first == "{" {
            return try Filter(jsonText: text)
        }
        return try parse(text)
    }

    enum Kind: Equatable {
        case word(String)
        case quoted(String)
        case op(String)
        case open, close, comma
    }

    struct Token {
        var kind: Kind
        var column: Int

        var display: String {
            switch kind {
            case .word(let word): return "'\(word)'"
            case .quoted(let text): return "\"\(text)\""
            case .op(let op): return "'\(op)'"
            case .open: return "'('"
            case .close: return "')'"
            case .comma: return "','"
            }
        }

        func isKeyword(_ keyword: String) -> Bool {
            if case .word(let word) = kind { return word.lowercased() == keyword }
            return false
        }
    }

    /// The deepest nesting of `not` and parentheses accepted, as deep as a MongoDB filter
    /// document may go (`JSONParser.maximumDepth`).
    public static let maximumDepth = JSONParser.maximumDepth

    /// The words of the language that are never field names or searched words.
    public static let keywords: Set<String> = ["and", "or", "not", "in", "exists", "missing"]

    /// The tokens of a filter, each with its column (counted in characters from 1).
    static func tokenize(_ text: String) throws(StoreError) -> [Token] {
        let characters = Array(text)
        var tokens: [Token] = []
        var i = 0
        while i < characters.count {
            let c = characters[i]
            let column = i + 1
            if c.isWhitespace {
                i += 1
                continue
            }
            switch c {
            case "(": tokens.append(Token(kind: .open, column: column)); i += 1
            case ")": tokens.append(Token(kind: .close, column: column)); i += 1
            case ",": tokens.append(Token(kind: .comma, column: column)); i += 1
            case "=", "~", "!", "<", ">":
                tokens.append(Token(kind: .op(try scanOperator(characters, at: &i)), column: column))
            case "\"", "'":
                tokens.append(Token(kind: .quoted(try scanQuoted(characters, at: &i)), column: column))
            default:
                tokens.append(Token(kind: .word(scanWord(characters, at: &i)), column: column))
            }
        }
        return tokens
    }

    /// An operator starting at `i` (`=`, `==`, `~`, `!=`, `<>`, `<`, `<=`, `>`, `>=`), as its
    /// canonical spelling; `i` moves past it.
    private static func scanOperator(_ characters: [Character], at i: inout Int) throws(StoreError) -> String {
        let c = characters[i]
        let next = i + 1 < characters.count ? characters[i + 1] : nil
        switch (c, next) {
        case ("=", "="): i += 2; return "="
        case ("=", _), ("~", _): i += 1; return String(c)
        case (_, "="): i += 2; return String(c) + "="
        case ("<", ">"): i += 2; return "!="
        case ("!", _): throw .invalidFilter("column \(i + 1): expected '!=' ('!' alone is not an operator)")
        default: i += 1; return String(c)
        }
    }

    /// A string in the quotes that start at `i`, with `\n`, `\t` and `\x` escapes and a doubled
    /// quote standing for itself (as in SQL); `i` moves past the closing quote.
    private static func scanQuoted(_ characters: [Character], at i: inout Int) throws(StoreError) -> String {
        let quote = characters[i]
        let column = i + 1
        var value = ""
        var j = i + 1
        while j < characters.count {
            let d = characters[j]
            if d == "\\", j + 1 < characters.count {
                switch characters[j + 1] {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case let escaped: value.append(escaped)
                }
                j += 2
            } else if d == quote, j + 1 < characters.count, characters[j + 1] == quote {
                value.append(quote)
                j += 2
            } else if d == quote {
                i = j + 1
                return value
            } else {
                value.append(d)
                j += 1
            }
        }
        throw .invalidFilter("column \(column): expected a closing \(quote) for the string that starts here")
    }

    /// A bare word starting at `i`: everything up to white space, a parenthesis, an operator, a
    /// comma or a quote; `i` moves past it.
    private static func scanWord(_ characters: [Character], at i: inout Int) -> String {
        var word = ""
        while i < characters.count {
            let d = characters[i]
            if d.isWhitespace || "()=!<>~,\"'".contains(d) { break }
            word.append(d)
            i += 1
        }
        return word
    }

    struct Parser {
        var tokens: [Token]
        var position = 0
        /// How many `not`s and parentheses are open: refused past `maximumDepth` rather than
        /// overflowing the stack.
        var depth = 0
        let length: Int

        init(tokens: [Token], length: Int) {
            self.tokens = tokens
            self.length = length
        }

        var peek: Token? { position < tokens.count ? tokens[position] : nil }
        var endColumn: Int { length + 1 }

        mutating func next() -> Token? {
            defer { position += 1 }
            return peek
        }

        /// The column of the token `next()` returned last, or the end when it returned none.
        var lastColumn: Int {
            position - 1 < tokens.count && position >= 1 ? tokens[position - 1].column : endColumn
        }

        /// Moves past the next token when it is `keyword`.
        mutating func skip(_ keyword: String) -> Bool {
            guard let token = peek, token.isKeyword(keyword) else { return false }
            position += 1
            return true
        }

        mutating func parseOr() throws(StoreError) -> Filter {
            var parts = [try parseAnd()]
            while skip("or") { parts.append(try parseAnd()) }
            return parts.count == 1 ? parts[0] : .or(parts)
        }

        mutating func parseAnd() throws(StoreError) -> Filter {
            var parts = [try parseUnary()]
            while skip("and") { parts.append(try parseUnary()) }
            return parts.count == 1 ? parts[0] : .and(parts)
        }

        mutating func parseUnary() throws(StoreError) -> Filter {
            if skip("not") {
                try descend()
                defer { depth -= 1 }
                return .not(try parseUnary())
            }
            return try parsePrimary()
        }

        /// One level deeper (a `not` or a parenthesis), refused past `maximumDepth`.
        mutating func descend() throws(StoreError) {
            depth += 1
            if depth > FilterParser.maximumDepth {
                throw .invalidFilter(
                    "column \(lastColumn): nested deeper than \(FilterParser.maximumDepth) levels of 'not' and parentheses")
            }
        }

        mutating func parsePrimary() throws(StoreError) -> Filter {
            guard let token = next() else {
                throw .invalidFilter("column \(endColumn): expected a condition such as 'field = value' or a quoted phrase")
            }
            switch token.kind {
            case .open:
                try descend()
                defer { depth -= 1 }
                let inner = try parseOr()
                guard let close = next(), close.kind == .close else {
                    throw .invalidFilter("column \(lastColumn): expected ')' to close the '(' at column \(token.column)")
                }
                return inner
            case .quoted(let phrase):
                return .text(phrase)
            case .word(let path) where !FilterParser.keywords.contains(path.lowercased()):
                if startsCondition { return try parseComparison(path: path, at: token) }
                // Bare words, as in a search box: a full-text search of all of them.
                var words = [path]
                while let next = peek, case .word(let word) = next.kind, !FilterParser.keywords.contains(word.lowercased()) {
                    position += 1
                    if startsCondition {
                        position -= 1
                        break
                    }
                    words.append(word)
                }
                return .text(words.joined(separator: " "))
            default:
                throw .invalidFilter("column \(token.column): expected a field name or a quoted phrase, found \(token.display)")
            }
        }

        /// Whether the token after the word just read makes it a field of a condition: an
        /// operator, or `exists`, `missing`, `in`, `not` (of `not in`).
        var startsCondition: Bool {
            guard let next = peek else { return false }
            switch next.kind {
            case .op: return true
            case .word(let word):
                switch word.lowercased() {
                // `not` after a word can only be the start of `not in (...)`.
                case "exists", "missing", "in", "not": return true
                default: return false
                }
            default: return false
            }
        }

        mutating func parseComparison(path: String, at pathToken: Token) throws(StoreError) -> Filter {
            guard let token = next() else {
                throw .invalidFilter(
                    "column \(endColumn): expected an operator (= != < <= > >= ~ in exists missing) after '\(path)' (quote a phrase to search text)"
                )
            }
            switch token.kind {
            case .op(let op):
                let value = try parseValue(after: op)
                if let comparison = Condition.comparison(op, value) { return .field(path, [comparison]) }
                guard case .string(let text) = value else {
                    throw .invalidFilter(
                        "column \(token.column): expected text to look for after '~', found \(JSONWriter.compactString(value))")
                }
                return .field(path, [.contains(text)])
            case .word(let word):
                switch word.lowercased() {
                case "exists": return .field(path, [.exists(true)])
                case "missing": return .field(path, [.exists(false)])
                case "in": return .field(path, [.in(try parseList())])
                case "not":
                    guard skip("in") else {
                        throw .invalidFilter("column \(token.column): expected 'not in (...)' after '\(path)'")
                    }
                    return .field(path, [.nin(try parseList())])
                default: break
                }
            default: break
            }
            throw .invalidFilter(
                "column \(token.column): expected an operator (= != < <= > >= ~ in exists missing) after '\(path)', found \(token.display)")
        }

        mutating func parseList() throws(StoreError) -> [JSONValue] {
            guard let open = next(), open.kind == .open else {
                throw .invalidFilter("column \(lastColumn): expected '(' after 'in'")
            }
            var values: [JSONValue] = []
            while true {
                values.append(try parseValue(after: values.isEmpty ? "(" : ","))
                guard let separator = next() else {
                    throw .invalidFilter("column \(endColumn): expected ',' or ')' to close the list at column \(open.column)")
                }
                if separator.kind == .close { return values }
                guard separator.kind == .comma else {
                    throw .invalidFilter("column \(separator.column): expected ',' or ')', found \(separator.display)")
                }
            }
        }

        mutating func parseValue(after op: String) throws(StoreError) -> JSONValue {
            guard let token = next() else {
                throw .invalidFilter("column \(endColumn): expected a value after '\(op)'")
            }
            switch token.kind {
            case .quoted(let text):
                return .string(text)
            case .word(let word):
                switch word.lowercased() {
                case "true": return .bool(true)
                case "false": return .bool(false)
                case "null": return .null
                default: break
                }
                if case .number(let literal)? = try? JSONParser.parse(word) { return .number(literal) }
                return .string(word)
            default:
                throw .invalidFilter("column \(token.column): expected a value after '\(op)', found \(token.display)")
            }
        }
    }
}
