import Foundation

/// The projection of every live document decoded into columns, with indexes built on first use:
/// a hash index per field for equality, a sorted index per field for ranges and sorting, and an
/// inverted index for full-text search. Answers queries without reading document files.
///
/// A snapshot: the store builds a new one when its index changes.
public final class QueryIndex: @unchecked Sendable {
    /// The projected paths.
    public let projection: Projection
    /// Live document IDs sorted by their bytes; a document's place here is its ordinal.
    public let ids: [String]
    /// The index entries, by ordinal.
    public let entries: [IndexEntry]
    let columns: [String: [JSONValue?]]
    let ordinals: [DocumentID: Int32]
    private let lock = NSLock()
    private var equalityIndexes: [String: [String: [Int32]]] = [:]
    private var sortedIndexes: [String: SortedIndex] = [:]
    private var textIndex: TextIndex?

    /// Builds the columns from each entry's projected fields (sorted by ID).
    public init(projection: Projection, entries: [(entry: IndexEntry, fields: JSONValue)]) {
        self.projection = projection
        self.ids = entries.map(\.entry.id)
        self.entries = entries.map(\.entry)
        var columns: [String: [JSONValue?]] = [:]
        for path in projection.paths {
            columns[path] = entries.map { $0.fields[path] }
        }
        self.columns = columns
        var ordinals: [DocumentID: Int32] = [:]
        ordinals.reserveCapacity(entries.count)
        for (index, id) in ids.enumerated() { ordinals[DocumentID(id)] = Int32(index) }
        self.ordinals = ordinals
    }

    /// The number of documents.
    public var count: Int { ids.count }

    /// The ordinal of an ID.
    public func ordinal(of id: String) -> Int? { ordinals[DocumentID(id)].map(Int.init) }

    /// The projected value of a path for a document (`_id` is always available).
    public func value(_ path: String, at ordinal: Int) -> JSONValue? {
        if path == "_id" { return .string(ids[ordinal]) }
        return columns[path]?[ordinal] ?? nil
    }

    /// Whether a path can be read from the projection.
    public func isProjected(_ path: String) -> Bool {
        path == "_id" || columns[path] != nil
    }

    /// The paths a filter or sort reads that the projection lacks (full-text search needs every
    /// searched path); empty when the projection answers on its own.
    public func missingPaths(filter: Filter, sort: [SortKey] = []) -> [String] {
        var needed = filter.paths.union(sort.map(\.path))
        if filter.hasTextSearch { needed.formUnion(TextFolding.searchedPaths.map(\.path)) }
        var missing = needed.filter { !isProjected($0) }
        // Paths below a projected array are answered as lists of values; operators that tell a
        // list from one array value ($size, $elemMatch, equality with an array) need the documents.
        for path in Self.arraySensitivePaths(filter) where path.contains(".") { missing.insert(path) }
        return missing.sorted()
    }

    static func arraySensitivePaths(_ filter: Filter) -> Set<String> {
        switch filter {
        case .all, .text: return []
        case .and(let filters), .or(let filters), .nor(let filters):
            return filters.reduce(into: Set<String>()) { $0.formUnion(arraySensitivePaths($1)) }
        case .field(let path, let conditions):
            return conditions.contains(where: Self.isArraySensitive) ? [path] : []
        }
    }

    static func isArraySensitive(_ condition: Condition) -> Bool {
        switch condition {
        case .size, .elemMatch: return true
        case .eq(let value), .ne(let value): if case .array = value { return true } else { return false }
        case .in(let values), .nin(let values), .all(let values):
            return values.contains { if case .array = $0 { return true } else { return false } }
        case .not(let inner): return inner.contains(where: isArraySensitive)
        default: return false
        }
    }

    /// The values at a path for a document, as `Filter.matches(resolve:)` wants them: a value
    /// found through arrays (`keywords.value`) is the list of values, as MongoDB resolves it.
    func resolve(_ path: String, _ ordinal: Int) -> [JSONValue] {
        guard let value = value(path, at: ordinal) else { return [] }
        if path.contains("."), case .array(let elements) = value { return elements }
        return [value]
    }

    // MARK: Matching

    /// The ordinals matching a filter, ascending. The projection must answer it (`missingPaths`).
    public func matching(_ filter: Filter) -> [Int32] {
        let text = filter.hasTextSearch ? self.text() : nil
        let evaluate = { (ordinal: Int) -> Bool in
            filter.matches(resolve: { self.resolve($0, ordinal) },
                           textMatches: { terms in text?.contains(terms, ordinal: Int32(ordinal)) ?? false })
        }
        if let candidates = candidates(for: filter) {
            return candidates.filter { evaluate(Int($0)) }
        }
        var result: [Int32] = []
        for ordinal in 0..<ids.count where evaluate(ordinal) { result.append(Int32(ordinal)) }
        return result
    }

    /// A superset of the ordinals matching a filter, from indexes (ascending), or nil when no
    /// index narrows it.
    func candidates(for filter: Filter) -> [Int32]? {
        switch filter {
        case .all, .nor: return nil
        case .text(let search):
            let terms = TextFolding.tokens(search)
            if terms.isEmpty { return [] }
            return text().postings(forAll: terms)
        case .and(let filters):
            var sets = filters.compactMap { candidates(for: $0) }
            guard !sets.isEmpty else { return nil }
            sets.sort { $0.count < $1.count }
            return sets.dropFirst().reduce(sets[0]) { intersect($0, $1) }
        case .or(let filters):
            var union: [Int32] = []
            for filter in filters {
                guard let set = candidates(for: filter) else { return nil }
                union = merge(union, set)
            }
            return union
        case .field(let path, let conditions):
            guard isProjected(path) else { return nil }
            var best: [Int32]?
            for condition in conditions {
                guard let set = candidates(path: path, condition: condition) else { continue }
                best = best.map { intersect($0, set) } ?? set
            }
            return best
        }
    }

    func candidates(path: String, condition: Condition) -> [Int32]? {
        switch condition {
        case .eq(let value):
            return equalityCandidates(path: path, values: [value])
        case .in(let values):
            return equalityCandidates(path: path, values: values)
        case .all(let values) where !values.isEmpty:
            return equalityCandidates(path: path, values: [values[0]])
        case .gt(let value), .gte(let value), .lt(let value), .lte(let value):
            if case .null = value { return nil }
            return sorted(path).range(condition).map { $0.sorted() }
        default:
            return nil
        }
    }

    /// Candidates for equality with any of the values, or nil when one of them cannot use the
    /// hash index (null, which also matches missing fields; a date, which matches a whole day).
    func equalityCandidates(path: String, values: [JSONValue]) -> [Int32]? {
        var result: [Int32] = []
        for value in values {
            if case .null = value { return nil }
            if case .string(let text) = value, ISODate.interval(of: text) != nil {
                guard let range = sorted(path).range(.eq(value)) else { return nil }
                result = merge(result, range.sorted())
                continue
            }
            if path == "_id" {
                if case .string(let id) = value, let ordinal = ordinals[DocumentID(id)] { result = merge(result, [ordinal]) }
                continue
            }
            guard let key = Self.equalityKey(value) else { return nil }
            result = merge(result, equality(path)[key] ?? [])
        }
        return result
    }

    /// The hash-index key of a scalar value (numbers by value, so 1 and 1.0 meet).
    static func equalityKey(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return "s" + text
        case .number(let literal): return Double(literal).map { "n\($0)" }
        case .bool(let flag): return flag ? "b1" : "b0"
        default: return nil
        }
    }

    func equality(_ path: String) -> [String: [Int32]] {
        lock.lock()
        defer { lock.unlock() }
        if let index = equalityIndexes[path] { return index }
        var index: [String: [Int32]] = [:]
        for ordinal in 0..<ids.count {
            var seen: Set<String> = []
            for candidate in Condition.candidates(resolve(path, ordinal)) {
                guard let key = Self.equalityKey(candidate), seen.insert(key).inserted else { continue }
                index[key, default: []].append(Int32(ordinal))
            }
        }
        equalityIndexes[path] = index
        return index
    }

    func sorted(_ path: String) -> SortedIndex {
        lock.lock()
        defer { lock.unlock() }
        if let index = sortedIndexes[path] { return index }
        let index = SortedIndex(count: ids.count) { self.resolve(path, $0) }
        sortedIndexes[path] = index
        return index
    }

    func text() -> TextIndex {
        lock.lock()
        defer { lock.unlock() }
        if let textIndex { return textIndex }
        let index = TextIndex(count: ids.count) { ordinal in
            TextFolding.searchedPaths.map { (self.resolve($0.path, ordinal), $0.weight) }
        }
        textIndex = index
        return index
    }

    // MARK: Ordering

    /// Orders matching ordinals: by the sort keys (ties by ID), else by relevance for a text
    /// search, else by ID; then skips and limits.
    public func order(_ matches: [Int32], query: Query) -> [Int32] {
        let window = { (ordered: [Int32]) -> [Int32] in
            let start = min(query.skip, ordered.count)
            let end = query.limit.map { min(ordered.count, start + $0) } ?? ordered.count
            return Array(ordered[start..<end])
        }
        if query.sort.isEmpty {
            if case let terms = Self.textTerms(query.filter), !terms.isEmpty {
                let index = text()
                let scores = matches.map { index.score(terms, ordinal: $0) }
                let order = matches.indices.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : matches[$0] < matches[$1] }
                return window(order.map { matches[$0] })
            }
            return window(matches)
        }
        // One key and a small window: walk the sorted index and stop early.
        if query.sort.count == 1, let limit = query.limit, query.skip + limit < matches.count / 4 {
            let key = query.sort[0]
            var wanted = Set<Int32>(minimumCapacity: matches.count)
            for ordinal in matches { wanted.insert(ordinal) }
            var ordered: [Int32] = []
            sorted(key.path).walk(descending: key.isDescending) { ordinal in
                if wanted.remove(ordinal) != nil { ordered.append(ordinal) }
                return ordered.count < query.skip + limit
            }
            return window(ordered)
        }
        let keys = query.sort.map { key in
            matches.map { ordinal -> JSONValue? in
                let values = resolve(key.path, Int(ordinal))
                let value: JSONValue? = values.count == 1 ? values[0] : (values.isEmpty ? nil : .array(values))
                return ValueOrder.sortKey(value, descending: key.isDescending)
            }
        }
        let order = matches.indices.sorted { a, b in
            for (k, key) in query.sort.enumerated() {
                let c = ValueOrder.compareSortKeys(keys[k][a], keys[k][b])
                if c != 0 { return key.isDescending ? c > 0 : c < 0 }
            }
            return matches[a] < matches[b]
        }
        return window(order.map { matches[$0] })
    }

    /// The terms of the text searches a filter requires at its top level (for relevance).
    static func textTerms(_ filter: Filter) -> [String] {
        switch filter {
        case .text(let search): return TextFolding.tokens(search)
        case .and(let filters): return filters.flatMap { textTerms($0) }
        default: return []
        }
    }

    // MARK: Facets

    /// Counts documents per value of a path among the ordinals (an array counts each distinct
    /// element), most frequent first, ties by value.
    public func facet(_ path: String, among ordinals: [Int32]) -> [(value: JSONValue, count: Int)] {
        var counts: [String: (JSONValue, Int)] = [:]
        for ordinal in ordinals {
            var seen: Set<String> = []
            for value in resolve(path, Int(ordinal)) {
                let items: [JSONValue]
                if case .array(let elements) = value { items = elements } else { items = [value] }
                for item in items {
                    let key = Self.equalityKey(item) ?? JSONWriter.compactString(item)
                    guard seen.insert(key).inserted else { continue }
                    counts[key, default: (item, 0)].1 += 1
                }
            }
        }
        return counts.values.sorted { a, b in
            a.1 != b.1 ? a.1 > b.1 : ValueOrder.compareSortable(a.0, b.0) < 0
        }.map { (value: $0.0, count: $0.1) }
    }
}

/// Intersection of two ascending lists.
func intersect(_ a: [Int32], _ b: [Int32]) -> [Int32] {
    var result: [Int32] = []
    var i = 0, j = 0
    while i < a.count && j < b.count {
        if a[i] == b[j] { result.append(a[i]); i += 1; j += 1 } else if a[i] < b[j] { i += 1 } else { j += 1 }
    }
    return result
}

/// Union of two ascending lists.
func merge(_ a: [Int32], _ b: [Int32]) -> [Int32] {
    if a.isEmpty { return b }
    if b.isEmpty { return a }
    var result: [Int32] = []
    result.reserveCapacity(a.count + b.count)
    var i = 0, j = 0
    while i < a.count || j < b.count {
        if j >= b.count || (i < a.count && a[i] < b[j]) { result.append(a[i]); i += 1 } else if i >= a.count || b[j] < a[i] { result.append(b[j]); j += 1 } else { result.append(a[i]); i += 1; j += 1 }
    }
    return result
}
