import Foundation

/// Case- and accent-insensitive text: the folding and the tokenizer of full-text search and `~`.
public enum TextFolding {
    /// Lower-cases and strips accents (`Café` → `cafe`); ASCII takes a fast path.
    public static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            if !text.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) { return text }
            return String(decoding: text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// The folded words of a text: runs of letters and digits (an apostrophe inside a word is
    /// dropped, so `Trump's` gives `trumps`).
    public static func tokens(_ text: String) -> [String] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return asciiTokens(text) }
        let folded = fold(text)
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        var iterator = folded.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                current.append(scalar)
            } else if (scalar == "'" || scalar == "\u{2019}"), !current.isEmpty {
                continue
            } else if !current.isEmpty {
                tokens.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { tokens.append(String(current)) }
        return tokens
    }

    /// The paths full-text search reads, with their weight in the relevance score.
    public static let searchedPaths: [(path: String, weight: Double)] = [
        ("headline.main", 3), ("keywords.value", 2), ("abstract", 1), ("snippet", 1), ("lead_paragraph", 1),
    ]

    /// The fast path of `tokens` for ASCII text.
    static func asciiTokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case 48...57, 97...122: current.append(byte)
            case 65...90: current.append(byte + 32)
            case 39 where !current.isEmpty: continue
            default:
                if !current.isEmpty {
                    tokens.append(String(decoding: current, as: UTF8.self))
                    current.removeAll(keepingCapacity: true)
                }
            }
        }
        if !current.isEmpty { tokens.append(String(decoding: current, as: UTF8.self)) }
        return tokens
    }
}
