import Foundation

/// The relevance of a document for a full-text search: one function wherever a search is ranked
/// (the segments, the tail, a scan, a store read whole into memory).
///
/// For each distinct term, its weight in the document (the summed field weights of its
/// occurrences: headline 3, keywords 2, the other text 1 for NYT articles) times the term's
/// inverse document frequency over every live document of the store, BM25's
/// `ln(1 + (N − df + 0.5) / (df + 0.5))`: a word that few documents hold counts for more than one
/// most hold. The frequencies are the whole store's, whatever segments hold which documents, so a
/// ranking never depends on how the documents happen to be split.
public enum Relevance {
    /// How many live documents hold each term, and how many live documents there are.
    public struct Statistics: Sendable, Equatable {
        /// The live documents of the store.
        public var documents: Int
        /// Per term, the live documents holding it.
        public var frequencies: [String: Int]

        /// Statistics of `documents` documents and these frequencies.
        public init(documents: Int, frequencies: [String: Int]) {
            self.documents = documents
            self.frequencies = frequencies
        }

        /// Adds another part of the store's (a segment's, the tail's).
        mutating func add(_ other: Statistics) {
            documents += other.documents
            for (term, count) in other.frequencies { frequencies[term, default: 0] += count }
        }

        /// The inverse document frequency of a term.
        public func inverseFrequency(of term: String) -> Double {
            Relevance.inverseFrequency(documents: documents, holding: frequencies[term] ?? 0)
        }
    }

    /// BM25's inverse document frequency of a term `holding` of `documents` hold (never negative).
    public static func inverseFrequency(documents: Int, holding: Int) -> Double {
        let n = Double(max(documents, 0))
        let df = Double(max(0, min(holding, documents)))
        return log(1 + (n - df + 0.5) / (df + 0.5))
    }

    /// A document's score: `weights[t]` is term `t`'s weight in it (0 when absent).
    public static func score(_ weights: [String: Double], _ statistics: Statistics) -> Double {
        var score = 0.0
        // In a fixed order, so that equal inputs give the same sum bit for bit.
        for term in weights.keys.sorted() { score += weights[term]! * statistics.inverseFrequency(of: term) }
        return score
    }
}
