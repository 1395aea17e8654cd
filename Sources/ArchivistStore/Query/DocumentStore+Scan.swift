import ArchivistBase

/// Queries the segments cannot answer exactly (a condition on a field whose values nest arrays in
/// arrays, `$size`, a path outside the projection), answered by a scan: the live entries are read
/// from the log a batch at a time (each line kept when it is its ID's live change, a look-up), each
/// batch evaluated by an in-memory `QueryIndex` of its projected fields, or from its documents when
/// the query needs a path the projection lacks. What is held is one batch and the matches, never
/// the whole store.
extension DocumentStore {
    /// How many entries a scan evaluates at a time.
    static let scanBatch = 4096

    /// Whether the state starts from segments (a query they cannot answer is then scanned, not
    /// answered by an in-memory index of every document).
    var startsFromSegments: Bool {
        get throws(StoreError) {
            guard options.usesSegments else { return false }
            return try withState { (state: inout State) throws(StoreError) -> Bool in
                try self.refresh(&state)
                return state.manifest != nil
            }
        }
    }

    /// Calls `body` with the live entries, a batch at a time, in the log's order (each with its
    /// projected fields in memory), as of now.
    func forEachLiveBatch(_ body: ([IndexEntry]) throws(StoreError) -> Void) throws(StoreError) {
        let (entries, end) = try withState { (state: inout State) throws(StoreError) -> (EntryTable, Int) in
            try self.refresh(&state)
            return (state.entries, state.index.consumed)
        }
        var batch: [IndexEntry] = []
        batch.reserveCapacity(Self.scanBatch)
        var failure: StoreError?
        _ = try changeLog.forEachLine(end: end) { line, bytes, sequence, offset in
            guard case .entry(var entry) = line else { return true }
            do throws(StoreError) {
                guard let live = try self.table(try entries.entry(DocumentID(entry.id))), live.sequence == sequence else { return true }
                if case .indexFile(let start, let length) = entry.fields, start - offset >= 0, start - offset + length <= bytes.count {
                    entry.fields = .inline(Array(bytes[(start - offset)..<(start - offset + length)]))
                }
                batch.append(entry)
                if batch.count >= Self.scanBatch {
                    try body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        if !batch.isEmpty { try body(batch) }
    }

    /// A document matching a scanned query: its ID, its sort keys and its terms' weights.
    struct ScannedMatch {
        var id: String
        var keys: [JSONValue?]
        var weights: [String: Double]
    }

    /// Calls `each` with every live document matching `filter` (with its keys for `sort` and,
    /// with `terms`, their weights in it), a batch at a time; `documentPaths` are the paths to
    /// read from the documents (the projection lacks them), or empty. With `terms`, `statistics`
    /// gathers how many of every live document hold each (for `Relevance`).
    func scanMatches(
        _ filter: Filter, sort: [SortKey] = [], terms: [String] = [], statistics: UnsafeMutablePointer<Relevance.Statistics>? = nil,
        reading documentPaths: [String], each: (ScannedMatch, JSONValue?) throws(StoreError) -> Void
    ) throws(StoreError) {
        let projection = self.projection
        let needed = QueryIndex.neededPaths(filter: filter, sort: sort, textSearch: schema.textSearch).filter {
            projection.paths.contains($0)
        }
        try forEachLiveBatch { (batch) throws(StoreError) in
            if documentPaths.isEmpty {
                let index = QueryIndex(projection: projection, textSearch: schema.textSearch, entries: Self.sortedByID(batch))
                index.add(try self.readColumns(needed.sorted(), of: index.entries, index: ChangeLog.Position()))
                let columns = index.columns
                let matches = index.matching(filter)
                if !terms.isEmpty { statistics?.pointee.add(index.relevanceStatistics(terms)) }
                for ordinal in matches {
                    let keys = sort.map {
                        ValueOrder.sortKey(found: index.resolve($0.path, Int(ordinal), in: columns), descending: $0.isDescending)
                    }
                    let weights = terms.isEmpty ? [:] : index.textWeights(terms, ordinal: Int(ordinal), in: columns) ?? [:]
                    try each(ScannedMatch(id: index.ids[Int(ordinal)], keys: keys, weights: weights), nil)
                }
            } else {
                for entry in batch {
                    guard let document = try self.scannedDocument(entry) else { continue }
                    var weights: [String: Double] = [:]
                    if !terms.isEmpty {
                        let words = schema.textSearch.words(of: document)
                        for term in Set(terms) {
                            let weight = words.filter { $0.word == term }.reduce(0) { $0 + $1.weight }
                            weights[term] = weight
                            if weight > 0 { statistics?.pointee.frequencies[term, default: 0] += 1 }
                        }
                        statistics?.pointee.documents += 1
                    }
                    guard filter.matches(document, textSearch: schema.textSearch) else { continue }
                    let keys = sort.map { ValueOrder.sortKey(found: document.values(atPath: $0.path), descending: $0.isDescending) }
                    try each(ScannedMatch(id: entry.id, keys: keys, weights: weights), document)
                }
            }
        }
    }

    /// A query answered by a scan (see `scanMatches`).
    func scannedFind(_ query: Query) throws(StoreError) -> QueryResult {
        let projection = self.projection
        let missing = QueryIndex.neededPaths(filter: query.filter, sort: query.sort, textSearch: schema.textSearch)
            .filter { $0 != "_id" && !projection.paths.contains($0) }.sorted()
        let terms = query.sort.isEmpty ? QueryIndex.textTerms(query.filter) : []
        var matched: [ScannedMatch] = []
        var statistics = Relevance.Statistics(documents: 0, frequencies: [:])
        try withUnsafeMutablePointer(to: &statistics) { (gathered) throws(StoreError) in
            try scanMatches(query.filter, sort: query.sort, terms: terms, statistics: gathered, reading: missing) {
                (match, _) throws(StoreError) in matched.append(match)
            }
        }
        let scores = matched.map { terms.isEmpty ? 0 : Relevance.score($0.weights, statistics) }
        let order = matched.indices.sorted { a, b in
            for (k, key) in query.sort.enumerated() {
                let c = ValueOrder.compareSortKeys(matched[a].keys[k], matched[b].keys[k])
                if c != 0 { return key.isDescending ? c > 0 : c < 0 }
            }
            if scores[a] != scores[b] { return scores[a] > scores[b] }
            return UTF8Bytes.precedes(matched[a].id, matched[b].id)
        }
        return QueryResult(ids: query.window(order.map { matched[$0].id }), total: matched.count, scannedPaths: missing)
    }

    /// Documents per value of a path among those matching a filter, by a scan.
    func scannedFacet(
        _ path: String, matching filter: Filter
    ) throws(StoreError) -> (values: [(value: JSONValue, count: Int)], scannedPaths: [String]) {
        let projection = self.projection
        let paths = QueryIndex.neededPaths(filter: filter, textSearch: schema.textSearch).union([path])
        let missing = paths.filter { $0 != "_id" && !projection.paths.contains($0) }.sorted()
        var tally = FacetTally()
        if missing.isEmpty {
            try forEachLiveBatch { (batch) throws(StoreError) in
                let index = QueryIndex(projection: projection, textSearch: schema.textSearch, entries: Self.sortedByID(batch))
                index.add(try self.readColumns(paths.filter { $0 != "_id" }.sorted(), of: index.entries, index: ChangeLog.Position()))
                let columns = index.columns
                for ordinal in index.matching(filter) { tally.add(index.resolve(path, Int(ordinal), in: columns)) }
            }
        } else {
            try scanMatches(filter, reading: missing) { (_, document) throws(StoreError) in
                if let document { tally.add(document.values(atPath: path)) }
            }
        }
        return (tally.sorted(), missing)
    }
}
