import ArchivistBase

/// Counts documents per value: each document once per distinct value (an array counts each
/// distinct element), values told apart as `=` tells them apart.
struct FacetTally {
    private var counts: [DocumentID: (JSONValue, Int)] = [:]

    /// Counts one document's values at the path; returns the keys of the values it counted.
    @discardableResult
    mutating func add(_ values: [JSONValue]) -> [DocumentID] {
        if values.count == 1, !values[0].isArray {
            let key = QueryIndex.exactKey(values[0])
            counts[key, default: (values[0], 0)].1 += 1
            return [key]
        }
        var seen: Set<DocumentID> = []
        var keys: [DocumentID] = []
        for value in values {
            let items: [JSONValue]
            if case .array(let elements) = value { items = elements } else { items = [value] }
            for item in items {
                let key = QueryIndex.exactKey(item)
                guard seen.insert(key).inserted else { continue }
                counts[key, default: (item, 0)].1 += 1
                keys.append(key)
            }
        }
        return keys
    }

    /// The counts by value key (each with the first value seen for it).
    var entries: [DocumentID: (value: JSONValue, count: Int)] {
        counts.mapValues { (value: $0.0, count: $0.1) }
    }

    /// The facet order: most frequent first, ties by value.
    static func precedes(_ a: (value: JSONValue, count: Int), _ b: (value: JSONValue, count: Int)) -> Bool {
        a.count != b.count ? a.count > b.count : ValueOrder.compareSortable(a.value, b.value) < 0
    }

    /// Most frequent first, ties by value.
    func sorted() -> [(value: JSONValue, count: Int)] {
        counts.values.map { (value: $0.0, count: $0.1) }.sorted(by: Self.precedes)
    }
}
