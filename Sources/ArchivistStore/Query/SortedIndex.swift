import ArchivistBase

/// Every value of one field with its document, sorted (MongoDB's order, ties by ordinal): serves
/// range conditions and sorting. An array contributes each element, so walking it ascending meets
/// a document first at its least element and descending at its greatest, as MongoDB sorts arrays.
struct SortedIndex {
    /// The keys in order, each with what ordering needs worked out once.
    let keys: [SortableKey]
    let ordinals: [Int32]
    /// Whether some document has an array inside its values (then a comparison also looks at
    /// elements this index does not hold, and ranges are left to a scan).
    let hasNestedArrays: Bool
    /// How many documents the keys are of (ordinals `0..<documentCount`, each with a key at least).
    let documentCount: Int

    init(count: Int, values: (Int) -> [JSONValue]) {
        documentCount = count
        var sortable: [SortableKey] = []
        sortable.reserveCapacity(count)
        var nested = false
        for ordinal in 0..<count {
            let (keys, hasNested) = Self.keys(of: values(ordinal))
            nested = nested || hasNested
            if keys.isEmpty { sortable.append(SortableKey(nil, ordinal: Int32(ordinal))) }
            for key in keys { sortable.append(SortableKey(key, ordinal: Int32(ordinal))) }
        }
        sortable.sort()
        keys = sortable
        ordinals = sortable.map(\.ordinal)
        hasNestedArrays = nested
    }

    /// The keys a document sorts under, from the values found at the path: the same keys
    /// `ValueOrder.sortKey` chooses from, the elements of a single array value, else each value
    /// found (an empty array is a key of its own); and whether one of them is itself a non-empty array.
    static func keys(of found: [JSONValue]) -> (keys: [JSONValue], hasNestedArrays: Bool) {
        var keys = found
        if found.count == 1, case .array(let elements) = found[0], !elements.isEmpty { keys = elements }
        // An empty array is a key of its own (it sorts first) and has no elements a comparison
        // could look at; any other array among the keys does.
        return (keys, keys.contains { if case .array(let elements) = $0 { return !elements.isEmpty } else { return false } })
    }

    /// The first position where `isAfter` turns true (it must be false then true along the keys).
    func partition(_ isAfter: (SortableKey) -> Bool) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if isAfter(keys[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// The ordinals (unordered, possibly repeated) that may satisfy a comparison, and whether
    /// exactly those do; nil when the index cannot narrow it.
    func range(_ condition: Condition) -> (ordinals: [Int32], isExact: Bool)? {
        let query: JSONValue
        switch condition {
        case .gt(let v), .gte(let v), .lt(let v), .lte(let v), .eq(let v): query = v
        default: return nil
        }
        switch query {
        case .number(let literal):
            guard let q = Double(literal) else { return nil }
            let start = partition { $0.rank >= SortableKey.numberRank }
            let end = partition { $0.rank > SortableKey.numberRank }
            let lowerAt = { (strict: Bool) in
                self.partition {
                    $0.rank > SortableKey.numberRank || ($0.rank == SortableKey.numberRank && (strict ? $0.number > q : $0.number >= q))
                }
            }
            let upperAt = { (strict: Bool) in
                self.partition {
                    $0.rank > SortableKey.numberRank || ($0.rank == SortableKey.numberRank && (strict ? $0.number >= q : $0.number > q))
                }
            }
            let bounds: (Int, Int)
            switch condition {
            case .gt: bounds = (lowerAt(true), end)
            case .gte: bounds = (lowerAt(false), end)
            case .lt: bounds = (start, upperAt(true))
            case .lte: bounds = (start, upperAt(false))
            default: bounds = (lowerAt(false), upperAt(false))
            }
            return (Array(ordinals[bounds.0..<max(bounds.0, bounds.1)]), true)
        case .string(let text):
            let dateStart = partition { $0.rank >= SortableKey.dateRank }
            let datesEnd = partition { $0.rank > SortableKey.dateRank }
            let stringsEnd = partition { $0.rank > SortableKey.stringRank }
            guard let interval = ISODate.interval(of: text) else {
                // Strings compare as text: any string may match.
                return (Array(ordinals[dateStart..<stringsEnd]), false)
            }
            let at = { (limit: Int64) in
                self.partition { $0.rank > SortableKey.dateRank || ($0.rank == SortableKey.dateRank && $0.instant >= limit) }
            }
            let dates: (Int, Int)
            switch condition {
            case .gt: dates = (at(interval.end), datesEnd)
            case .gte: dates = (at(interval.start), datesEnd)
            case .lt: dates = (dateStart, at(interval.start))
            case .lte: dates = (dateStart, at(interval.end))
            default: dates = (at(interval.start), at(interval.end))
            }
            // Strings that are not dates compare as text with a date query: keep them as candidates.
            return (Array(ordinals[dates.0..<max(dates.0, dates.1)]) + Array(ordinals[datesEnd..<stringsEnd]), datesEnd == stringsEnd)
        default:
            return nil
        }
    }

    /// Visits each ordinal once in sort order (ties ascending), until `body` returns false.
    func walk(descending: Bool, _ body: (Int32) -> Bool) {
        // With a key per document, each ordinal is met once: nothing to remember.
        var seen = OrdinalSet(capacity: keys.count > documentCount ? documentCount : 0)
        func first(_ ordinal: Int32) -> Bool {
            guard seen.capacity > 0 else { return true }
            if seen.contains(Int(ordinal)) { return false }
            seen.insert(Int(ordinal))
            return true
        }
        if !descending {
            for ordinal in ordinals where first(ordinal) {
                if !body(ordinal) { return }
            }
            return
        }
        var end = keys.count
        while end > 0 {
            var start = end - 1
            while start > 0, ValueOrder.compareSortKeys(keys[start - 1].value, keys[end - 1].value) == 0 { start -= 1 }
            for position in start..<end where first(ordinals[position]) {
                if !body(ordinals[position]) { return }
            }
            end = start
        }
    }
}
