import ArchivistBase
import Foundation
import Synchronization

/// The projection of every live document decoded into columns, with indexes built on first use:
/// a hash index per field for equality, a sorted index per field for ranges and sorting, and an
/// inverted index for full-text search. Answers queries without reading document files.
///
/// A snapshot: the store builds a new one when its index changes.
public final class QueryIndex: Sendable {
    /// The projected paths.
    public let projection: Projection
    /// The fields full-text search reads.
    public let textSearch: TextSearch
    /// Live document IDs sorted by their bytes; a document's place here is its ordinal.
    public let ids: [String]
    /// The index entries, by ordinal.
    public let entries: [IndexEntry]
    /// What is built on first use, shared by the threads that query the index.
    private struct Built: Sendable {
        var ordinalsByID: [DocumentID: Int32]?
        /// The columns loaded so far (a path's values by ordinal); the store loads the ones a
        /// query needs before running it.
        var loadedColumns: [String: [JSONValue?]] = [:]
        var equalityIndexes: [String: [DocumentID: [Int32]]] = [:]
        var sortedIndexes: [String: SortedIndex] = [:]
        var textIndex: TextIndex?
        var textSearches = 0
        /// How many queries have used each path: its hash and sorted indexes are built from the
        /// second (a one-shot command is faster scanning than building an index it uses once).
        var pathUses: [String: Int] = [:]
    }

    private let built = Mutex(Built())

    /// An index of these entries (sorted by ID) with no columns loaded yet.
    public init(projection: Projection, textSearch: TextSearch, entries: [IndexEntry]) {
        self.projection = projection
        self.textSearch = textSearch
        self.ids = entries.map(\.id)
        self.entries = entries
    }

    /// The paths whose columns are loaded.
    public var loadedPaths: Set<String> { built.withLock { Set($0.loadedColumns.keys) } }

    /// Adds loaded columns.
    func add(_ columns: [String: [JSONValue?]]) {
        built.withLock { $0.loadedColumns.merge(columns) { $1 } }
    }

    /// The loaded columns, read once per query.
    var columns: [String: [JSONValue?]] { built.withLock { $0.loadedColumns } }

    /// The number of documents.
    public var count: Int { ids.count }

    /// The ordinal of an ID.
    public func ordinal(of id: String) -> Int? { ordinals[DocumentID(id)].map(Int.init) }

    /// Ordinals by ID, made on first use (a count never needs them).
    var ordinals: [DocumentID: Int32] {
        built.withLock { built in
            if let ordinalsByID = built.ordinalsByID { return ordinalsByID }
            var ordinals: [DocumentID: Int32] = [:]
            ordinals.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() { ordinals[DocumentID(id)] = Int32(index) }
            built.ordinalsByID = ordinals
            return ordinals
        }
    }

    /// The projected value of a path for a document (`_id` is always available; other paths
    /// once the store has loaded their column).
    public func value(_ path: String, at ordinal: Int) -> JSONValue? {
        if path == "_id" { return .string(ids[ordinal]) }
        return columns[path]?[ordinal] ?? nil
    }

    /// Whether a path can be read from the projection.
    public func isProjected(_ path: String) -> Bool {
        path == "_id" || projection.paths.contains(path)
    }

    /// The paths a query reads: those its filter and sort name, and every searched path for a
    /// text search.
    static func neededPaths(filter: Filter, sort: [SortKey] = [], textSearch: TextSearch) -> Set<String> {
        var paths = filter.paths.union(sort.map(\.path))
        if filter.hasTextSearch { paths.formUnion(textSearch.paths) }
        return paths
    }

    /// The paths a filter or sort reads that the projection lacks (full-text search needs every
    /// searched path); empty when the projection answers on its own.
    public func missingPaths(filter: Filter, sort: [SortKey] = []) -> [String] {
        Self.neededPaths(filter: filter, sort: sort, textSearch: textSearch).filter { !isProjected($0) }.sorted()
    }

    /// The values at a path for a document, as `Filter.matches(resolve:)` wants them: a value
    /// found through arrays (`keywords.value`) is the list of values, as MongoDB resolves it.
    func resolve(_ path: String, _ ordinal: Int, in columns: [String: [JSONValue?]]) -> [JSONValue] {
        let found: JSONValue?
        if path == "_id" { found = .string(ids[ordinal]) } else { found = columns[path]?[ordinal] ?? nil }
        return Projection.resolvedValues(found)
    }

    // MARK: Matching

    /// The ordinals matching a filter, ascending. The projection must answer it (`missingPaths`).
    public func matching(_ filter: Filter) -> [Int32] {
        // The inverted index pays off from the second text search of a process; the first (and
        // a one-shot command's only) one scans the text with a byte-level prefilter instead.
        let useTextIndex =
            filter.hasTextSearch
            && built.withLock { built in
                built.textSearches += 1
                return built.textIndex != nil || built.textSearches > 1
            }
        let text = useTextIndex ? self.text() : nil
        let columns = self.columns
        built.withLock { built in for path in filter.paths { built.pathUses[path, default: 0] += 1 } }
        let evaluate = { (ordinal: Int) -> Bool in
            filter.matches(
                resolve: { self.resolve($0, ordinal, in: columns) },
                textMatches: { terms in
                    if let text { return text.contains(terms, ordinal: Int32(ordinal)) }
                    return self.textScore(terms, ordinal: ordinal, in: columns) != nil
                })
        }
        if let candidates = candidates(for: filter, useTextIndex: useTextIndex) {
            return candidates.isExact ? candidates.ordinals : candidates.ordinals.filter { evaluate(Int($0)) }
        }
        if case .all = filter { return (0..<Int32(ids.count)).map { $0 } }
        var result: [Int32] = []
        for ordinal in 0..<ids.count where evaluate(ordinal) { result.append(Int32(ordinal)) }
        return result
    }

    /// Ordinals from indexes (ascending): a superset of the matches, or exactly them when
    /// `isExact` (then no document needs checking).
    struct Candidates {
        var ordinals: [Int32]
        var isExact: Bool
    }

    /// The candidates of a filter, or nil when no index narrows it.
    func candidates(for filter: Filter, useTextIndex: Bool = true) -> Candidates? {
        switch filter {
        case .all, .nor: return nil
        case .text(let search):
            guard useTextIndex else { return nil }
            let terms = TextFolding.tokens(search)
            if terms.isEmpty { return Candidates(ordinals: [], isExact: true) }
            return Candidates(ordinals: text().postings(forAll: terms), isExact: true)
        case .and(let filters):
            var sets: [Candidates] = []
            var everyChild = true
            for child in filters {
                if let set = candidates(for: child, useTextIndex: useTextIndex) { sets.append(set) } else { everyChild = false }
            }
            guard !sets.isEmpty else { return nil }
            sets.sort { $0.ordinals.count < $1.ordinals.count }
            let ordinals = sets.dropFirst().reduce(sets[0].ordinals) { intersect($0, $1.ordinals) }
            return Candidates(ordinals: ordinals, isExact: everyChild && sets.allSatisfy(\.isExact))
        case .or(let filters):
            var union: [Int32] = []
            var exact = true
            for child in filters {
                guard let set = candidates(for: child, useTextIndex: useTextIndex) else { return nil }
                union = merge(union, set.ordinals)
                exact = exact && set.isExact
            }
            return Candidates(ordinals: union, isExact: exact)
        case .field(let path, let conditions):
            guard isProjected(path), hasIndexes(path) else { return nil }
            var best: Candidates?
            var everyCondition = true
            for condition in conditions {
                guard let set = candidates(path: path, condition: condition) else { everyCondition = false; continue }
                best = best.map { Candidates(ordinals: intersect($0.ordinals, set.ordinals), isExact: $0.isExact && set.isExact) } ?? set
            }
            if !everyCondition { best?.isExact = false }
            return best
        }
    }

    /// Whether a path's indexes exist or are worth building (from its second use).
    func hasIndexes(_ path: String) -> Bool {
        built.withLock { built in
            path == "_id" || built.equalityIndexes[path] != nil || built.sortedIndexes[path] != nil
                || built.pathUses[path, default: 0] >= 2
        }
    }

    func candidates(path: String, condition: Condition) -> Candidates? {
        switch condition {
        case .eq(let value):
            return equalityCandidates(path: path, values: [value])
        case .in(let values):
            return equalityCandidates(path: path, values: values)
        case .all(let values) where !values.isEmpty:
            return equalityCandidates(path: path, values: [values[0]]).map { Candidates(ordinals: $0.ordinals, isExact: false) }
        case .gt(let value), .gte(let value), .lt(let value), .lte(let value):
            if case .null = value { return nil }
            return range(path, condition)
        default:
            return nil
        }
    }

    func range(_ path: String, _ condition: Condition) -> Candidates? {
        let index = sorted(path)
        guard !index.hasNestedArrays, let found = index.range(condition) else { return nil }
        return Candidates(ordinals: sortedUnique(found.ordinals), isExact: found.isExact)
    }

    /// Candidates for equality with any of the values, or nil when one of them cannot use an
    /// index (null, which also matches missing fields).
    func equalityCandidates(path: String, values: [JSONValue]) -> Candidates? {
        var result: [Int32] = []
        var exact = true
        for value in values {
            if case .null = value { return nil }
            if case .string(let text) = value, ISODate.interval(of: text) != nil {
                // A date matches its whole day: a range of the sorted index.
                guard let found = range(path, .eq(value)) else { return nil }
                result = merge(result, found.ordinals)
                exact = exact && found.isExact
                continue
            }
            if path == "_id" {
                if case .string(let id) = value, let ordinal = ordinals[DocumentID(id)] { result = merge(result, [ordinal]) }
                continue
            }
            guard let key = Self.equalityKey(value) else { return nil }
            result = merge(result, equality(path)[key] ?? [])
        }
        return Candidates(ordinals: result, isExact: exact)
    }

    /// Ordinals sorted, each once (through a bitmap: linear, not n log n).
    func sortedUnique(_ ordinals: [Int32]) -> [Int32] {
        var seen = [Bool](repeating: false, count: ids.count)
        var count = 0
        for ordinal in ordinals where !seen[Int(ordinal)] {
            seen[Int(ordinal)] = true
            count += 1
        }
        var result: [Int32] = []
        result.reserveCapacity(count)
        for (ordinal, present) in seen.enumerated() where present { result.append(Int32(ordinal)) }
        return result
    }

    /// The hash-index key of a scalar value (numbers by value, so 1 and 1.0 meet).
    static func equalityKey(_ value: JSONValue) -> DocumentID? {
        scalarKey(value).map(DocumentID.init)
    }

    /// A key that tells values apart as `=` does, byte for byte (`DocumentID` compares bytes).
    static func exactKey(_ value: JSONValue) -> DocumentID {
        equalityKey(value) ?? DocumentID("j" + JSONWriter.compactString(value))
    }

    static func scalarKey(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return "s" + text
        case .number(let literal): return Double(literal).map { $0 == 0 ? "n0" : "n\($0)" }  // -0 equals 0
        case .bool(let flag): return flag ? "b1" : "b0"
        default: return nil
        }
    }

    func equality(_ path: String) -> [DocumentID: [Int32]] {
        if let index = built.withLock({ $0.equalityIndexes[path] }) { return index }
        let columns = self.columns
        var index: [DocumentID: [Int32]] = [:]
        for ordinal in 0..<ids.count {
            var seen: Set<DocumentID> = []
            for candidate in Condition.candidates(resolve(path, ordinal, in: columns)) {
                guard let key = Self.equalityKey(candidate), seen.insert(key).inserted else { continue }
                index[key, default: []].append(Int32(ordinal))
            }
        }
        built.withLock { $0.equalityIndexes[path] = index }
        return index
    }

    func sorted(_ path: String) -> SortedIndex {
        if let index = built.withLock({ $0.sortedIndexes[path] }) { return index }
        let columns = self.columns
        let index = SortedIndex(count: ids.count) { self.resolve(path, $0, in: columns) }
        built.withLock { $0.sortedIndexes[path] = index }
        return index
    }

    func text() -> TextIndex {
        if let textIndex = built.withLock({ $0.textIndex }) { return textIndex }
        let columns = self.columns
        let index = TextIndex(count: ids.count) { ordinal in
            self.textSearch.fields.map { (self.resolve($0.path, ordinal, in: columns), $0.weight) }
        }
        built.withLock { $0.textIndex = index }
        return index
    }

    // MARK: Ordering

    /// Orders matching ordinals: by the sort keys (ties by ID), else by relevance for a text
    /// search, else by ID; then skips and limits.
    public func order(_ matches: [Int32], query: Query) -> [Int32] {
        if query.sort.isEmpty {
            if case let terms = Self.textTerms(query.filter), !terms.isEmpty {
                let scores = self.scores(terms, of: matches, statistics: relevanceStatistics(terms))
                let order = matches.indices.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : matches[$0] < matches[$1] }
                return query.window(order.map { matches[$0] })
            }
            return query.window(matches)
        }
        // One key and a small window: walk the sorted index and stop early.
        if query.sort.count == 1, let limit = query.limit, query.skip + limit < matches.count / 4 {
            let key = query.sort[0]
            var wanted = [Bool](repeating: false, count: ids.count)
            for ordinal in matches { wanted[Int(ordinal)] = true }
            var ordered: [Int32] = []
            sorted(key.path).walk(descending: key.isDescending) { ordinal in
                if wanted[Int(ordinal)] {
                    wanted[Int(ordinal)] = false
                    ordered.append(ordinal)
                }
                return ordered.count < query.skip + limit
            }
            return query.window(ordered)
        }
        let columns = self.columns
        let keys = query.sort.map { key in
            matches.map { ValueOrder.sortKey(found: resolve(key.path, Int($0), in: columns), descending: key.isDescending) }
        }
        let order = matches.indices.sorted { a, b in
            for (k, key) in query.sort.enumerated() {
                let c = ValueOrder.compareSortKeys(keys[k][a], keys[k][b])
                if c != 0 { return key.isDescending ? c > 0 : c < 0 }
            }
            return matches[a] < matches[b]
        }
        return query.window(order.map { matches[$0] })
    }

    /// How many of this index's documents hold each term (for `Relevance`).
    func relevanceStatistics(_ terms: [String]) -> Relevance.Statistics {
        let index = text()
        var frequencies: [String: Int] = [:]
        for term in Set(terms) { frequencies[term] = index.postings(forAll: [term]).count }
        return Relevance.Statistics(documents: count, frequencies: frequencies)
    }

    /// The relevance of each of `matches` for the terms (`Relevance`, with `statistics` of the
    /// whole store).
    func scores(_ terms: [String], of matches: [Int32], statistics: Relevance.Statistics) -> [Double] {
        let index = built.withLock { $0.textIndex }
        let columns = self.columns
        return matches.map { ordinal in
            let weights = index.map { $0.weights(terms, ordinal: ordinal) } ?? textWeights(terms, ordinal: Int(ordinal), in: columns) ?? [:]
            return Relevance.score(weights, statistics)
        }
    }

    /// A document's weight for each term (the summed field weights of its occurrences), or nil
    /// when a term is missing: computed from its text, with a byte-level check first.
    func textWeights(_ terms: [String], ordinal: Int, in columns: [String: [JSONValue?]]) -> [String: Double]? {
        let fields = textSearch.fields.map {
            (texts: TextSearch.strings(in: .array(resolve($0.path, ordinal, in: columns))), weight: $0.weight)
        }
        for term in terms {
            let bytes = Array(term.utf8)
            let present = fields.contains { field in field.texts.contains { TextFolding.mayContain($0, folded: bytes) } }
            if !present { return nil }
        }
        var weights: [String: Double] = [:]
        for term in Set(terms) {
            let bytes = Array(term.utf8)
            var weight = 0.0
            for field in fields {
                for text in field.texts { weight += Double(TextFolding.occurrences(of: bytes, in: text)) * field.weight }
            }
            if weight == 0 { return nil }
            weights[term] = weight
        }
        return weights
    }

    /// Whether a document holds every term (see `textWeights`).
    func textScore(_ terms: [String], ordinal: Int, in columns: [String: [JSONValue?]]) -> Double? {
        textWeights(terms, ordinal: ordinal, in: columns).map { $0.values.reduce(0, +) }
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
        var tally = FacetTally()
        let columns = self.columns
        for ordinal in ordinals { tally.add(resolve(path, Int(ordinal), in: columns)) }
        return tally.sorted()
    }
}
