import ArchivistBase

/// Matching and scoring text against a schema's searched fields: their words, folded.
extension TextSearch {
    /// Whether every term (already folded) occurs as a word in the searched fields.
    public func matches(_ document: JSONValue, terms: [String]) -> Bool {
        let words = Set(words(of: document).map(\.word))
        return terms.allSatisfy { words.contains($0) }
    }

    /// The folded words of a document's searched fields, with the weight of the field each came from.
    public func words(of document: JSONValue) -> [(word: String, weight: Double)] {
        var words: [(String, Double)] = []
        for field in fields {
            for value in document.values(atPath: field.path) {
                for text in Self.strings(in: value) {
                    for token in TextFolding.tokens(text) { words.append((token, field.weight)) }
                }
            }
        }
        return words
    }

    /// The strings of a value: itself, or those of an array's elements, at any depth.
    static func strings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text): return [text]
        case .array(let elements): return elements.flatMap { strings(in: $0) }
        default: return []
        }
    }
}
