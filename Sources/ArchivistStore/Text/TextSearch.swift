/// Full-text search over a document's headline, keywords, abstract, snippet and lead paragraph.
public enum TextSearch {
    /// Whether every term (already folded) occurs as a word in the searched fields.
    public static func matches(_ document: JSONValue, terms: [String]) -> Bool {
        let words = Set(TextSearch.words(of: document).map(\.word))
        return terms.allSatisfy { words.contains($0) }
    }

    /// The folded words of a document's searched fields, with the weight of the field each came from.
    public static func words(of document: JSONValue) -> [(word: String, weight: Double)] {
        var words: [(String, Double)] = []
        for (path, weight) in TextFolding.searchedPaths {
            for value in document.values(atPath: path.split(separator: ".").map(String.init)) {
                for text in strings(in: value) {
                    for token in TextFolding.tokens(text) { words.append((token, weight)) }
                }
            }
        }
        return words
    }

    static func strings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text): return [text]
        case .array(let elements): return elements.flatMap { strings(in: $0) }
        default: return []
        }
    }
}
