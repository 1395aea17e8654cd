import ArchivistBase

/// Full-text search over the text fields a schema names, each with a weight in the relevance score.
public struct TextSearch: Sendable, Equatable {
    /// A searched field.
    public struct Field: Sendable, Equatable {
        /// The dotted path of the field.
        public var path: String
        /// Its weight in the relevance score: an occurrence of a term counts this much.
        public var weight: Double

        /// A searched field.
        public init(_ path: String, weight: Double) {
            self.path = path
            self.weight = weight
        }
    }

    /// The searched fields.
    public var fields: [Field]

    /// A search over these fields.
    public init(fields: [Field]) {
        self.fields = fields
    }

    /// The searched paths.
    public var paths: [String] { fields.map(\.path) }

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
