import ArchivistBase
import Foundation

/// An inverted index: each folded word with the documents holding it and a weight per document
/// (the sum of the weights of the fields it occurs in). Serves full-text search and its ranking.
struct TextIndex {
    private var postings: [String: [(ordinal: Int32, weight: Float)]] = [:]

    init(count: Int, fields: (Int) -> [([JSONValue], Double)]) {
        // One table of a document's words, emptied (its room kept) for the next.
        var weights: [String: Float] = [:]
        for ordinal in 0..<count {
            weights.removeAll(keepingCapacity: true)
            for (values, weight) in fields(ordinal) {
                for text in TextSearch.strings(in: .array(values)) {
                    for token in TextFolding.tokens(text) { weights[token, default: 0] += Float(weight) }
                }
            }
            for (token, weight) in weights {
                postings[token, default: []].append((Int32(ordinal), weight))
            }
        }
    }

    /// Every term with its postings (ordinals ascending).
    var allPostings: [String: [(ordinal: Int32, weight: Float)]] { postings }

    /// The documents holding every term, ascending.
    func postings(forAll terms: [String]) -> [Int32] {
        var lists: [[Int32]] = []
        for term in Set(terms) {
            guard let list = postings[term] else { return [] }
            lists.append(list.map(\.ordinal))
        }
        lists.sort { $0.count < $1.count }
        guard var result = lists.first else { return [] }
        for list in lists.dropFirst() { result = intersect(result, list) }
        return result
    }

    func weight(_ term: String, ordinal: Int32) -> Float? {
        guard let list = postings[term] else { return nil }
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].ordinal < ordinal { low = mid + 1 } else { high = mid }
        }
        return low < list.count && list[low].ordinal == ordinal ? list[low].weight : nil
    }

    /// Whether a document holds every term.
    func contains(_ terms: [String], ordinal: Int32) -> Bool {
        terms.allSatisfy { weight($0, ordinal: ordinal) != nil }
    }

    /// Each term's weight in the document: the summed field weights of its occurrences (see
    /// `Relevance`).
    func weights(_ terms: [String], ordinal: Int32) -> [String: Double] {
        var weights: [String: Double] = [:]
        for term in Set(terms) { weights[term] = Double(weight(term, ordinal: ordinal) ?? 0) }
        return weights
    }
}
