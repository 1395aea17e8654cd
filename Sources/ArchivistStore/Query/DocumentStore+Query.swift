import ArchivistBase

extension DocumentStore {
    /// The in-memory query index of the current documents, with the columns of `paths` loaded
    /// (rebuilt only when the documents changed; columns are read from the index file on demand).
    public func queryIndex(loading paths: Set<String> = []) throws(StoreError) -> QueryIndex {
        try queryCache.withLock { (cache: inout (key: IndexGeneration, index: QueryIndex)?) throws(StoreError) -> QueryIndex in
            try withState { (state: inout State) throws(StoreError) -> QueryIndex in
                var attempts = 0
                while true {
                    try self.refresh(&state)
                    let generation = state.generation
                    let index: QueryIndex
                    if let cached = cache, cached.key == generation {
                        index = cached.index
                    } else {
                        let sorted = try self.table(try state.entries.sorted())
                        index = QueryIndex(projection: state.projection, textSearch: schema.textSearch, entries: sorted)
                        cache = (generation, index)
                    }
                    let missing = paths.intersection(state.projection.paths).subtracting(index.loadedPaths).sorted()
                    if missing.isEmpty { return index }
                    do throws(StoreError) {
                        index.add(try self.readColumns(missing, of: index.entries, &state))
                        return index
                    } catch {
                        // The index was replaced under us: load it again, a few times.
                        attempts += 1
                        guard attempts < 5, case .io = error else { throw error }
                        try self.reopen(&state, lockHeld: false)
                        cache = nil
                    }
                }
            }
        }
    }

    /// The documents matching a query, in order. Answered from the in-memory projection; a query
    /// naming a path the projection lacks reads the documents instead (see `scannedPaths`).
    public func find(_ query: Query) throws(StoreError) -> QueryResult {
        let needed = QueryIndex.neededPaths(filter: query.filter, sort: query.sort, textSearch: schema.textSearch)
        if !query.countsTotal, query.sort.count == 1, query.limit != nil,
            let answer = try fromSegments(
                needed, resolvingMasks: false, { (segments) throws(SegmentDamage) in try self.segmentedFind(query, segments) })
        {
            // The first matches in one key's order, the tail's changes told by ID.
            return answer
        }
        if let answer = try fromSegments(needed, { (segments) throws(SegmentDamage) in try self.segmentedFind(query, segments) }) {
            return answer
        }
        if try startsFromSegments { return try scannedFind(query) }
        let index = try queryIndex(loading: needed)
        let missing = index.missingPaths(filter: query.filter, sort: query.sort)
        if missing.isEmpty {
            let matches = index.matching(query.filter)
            let ordered = index.order(matches, query: query)
            return QueryResult(ids: ordered.map { index.ids[Int($0)] }, total: matches.count, scannedPaths: [])
        }
        // Read each document; keep only what ordering needs, and the terms' weights (with how
        // many documents hold each, for the ranking).
        var matched: [(id: String, keys: [JSONValue?], weights: [String: Double])] = []
        let terms = query.sort.isEmpty ? QueryIndex.textTerms(query.filter) : []
        var statistics = Relevance.Statistics(documents: 0, frequencies: [:])
        for entry in index.entries {
            let id = entry.id
            guard let document = try scannedDocument(entry) else { continue }
            var weights: [String: Double] = [:]
            if !terms.isEmpty {
                let words = schema.textSearch.words(of: document)
                for term in Set(terms) {
                    let weight = words.filter { $0.word == term }.reduce(0) { $0 + $1.weight }
                    weights[term] = weight
                    if weight > 0 { statistics.frequencies[term, default: 0] += 1 }
                }
                statistics.documents += 1
            }
            guard query.filter.matches(document, textSearch: schema.textSearch) else { continue }
            let keys = query.sort.map { ValueOrder.sortKey(found: document.values(atPath: $0.path), descending: $0.isDescending) }
            matched.append((id, keys, weights))
        }
        let scores = matched.map { terms.isEmpty ? 0 : Relevance.score($0.weights, statistics) }
        let ordered = matched.indices.sorted { a, b in
            for (k, key) in query.sort.enumerated() {
                let c = ValueOrder.compareSortKeys(matched[a].keys[k], matched[b].keys[k])
                if c != 0 { return key.isDescending ? c > 0 : c < 0 }
            }
            if scores[a] != scores[b] { return scores[a] > scores[b] }
            return a < b
        }.map { matched[$0].id }
        return QueryResult(ids: query.window(ordered), total: ordered.count, scannedPaths: missing)
    }

    /// How many documents match a filter, and the paths that had to be read from disk.
    public func count(matching filter: Filter) throws(StoreError) -> (count: Int, scannedPaths: [String]) {
        let needed = QueryIndex.neededPaths(filter: filter, textSearch: schema.textSearch)
        let counted = try fromSegments(needed) { (segments) throws(SegmentDamage) -> Int? in
            try self.segmentedCount(filter, segments)
        }
        if let counted { return (counted, []) }
        if try startsFromSegments {
            let projection = self.projection
            let missing = needed.filter { $0 != "_id" && !projection.paths.contains($0) }.sorted()
            var count = 0
            try scanMatches(filter, reading: missing) { (_, _) throws(StoreError) in count += 1 }
            return (count, missing)
        }
        let index = try queryIndex(loading: QueryIndex.neededPaths(filter: filter, textSearch: schema.textSearch))
        let missing = index.missingPaths(filter: filter)
        if missing.isEmpty { return (index.matching(filter).count, []) }
        return (try find(Query(filter: filter)).total, missing)
    }

    /// Documents per value of a path among those matching a filter, most frequent first (an array
    /// counts each distinct element), at most `limit` values.
    public func facet(
        _ path: String, matching filter: Filter = .all, limit: Int? = nil
    ) throws(StoreError)
        -> (values: [(value: JSONValue, count: Int)], scannedPaths: [String])
    {
        let needed = QueryIndex.neededPaths(filter: filter, textSearch: schema.textSearch).union([path])
        if let counts = try fromSegments(
            needed, { (segments) throws(SegmentDamage) in try self.segmentedFacet(path, matching: filter, segments) })
        {
            return (limit.map { Array(counts.prefix($0)) } ?? counts, [])
        }
        if try startsFromSegments {
            let (counts, missing) = try scannedFacet(path, matching: filter)
            return (limit.map { Array(counts.prefix($0)) } ?? counts, missing)
        }
        let index = try queryIndex(loading: needed)
        let filterMissing = index.missingPaths(filter: filter)
        let missing = Set(filterMissing + (index.isProjected(path) ? [] : [path])).sorted()
        var counts: [(value: JSONValue, count: Int)]
        if missing.isEmpty {
            counts = index.facet(path, among: index.matching(filter))
        } else {
            // Count from the documents themselves, reading each once: the matches the projection
            // finds, or every document when the filter needs a path it lacks too.
            var tally = FacetTally()
            let candidates = filterMissing.isEmpty ? index.matching(filter).map { index.entries[Int($0)] } : index.entries
            for entry in candidates {
                guard let document = try scannedDocument(entry) else { continue }
                if !filterMissing.isEmpty, !filter.matches(document, textSearch: schema.textSearch) { continue }
                tally.add(document.values(atPath: path))
            }
            counts = tally.sorted()
        }
        if let limit { counts = Array(counts.prefix(limit)) }
        return (counts, missing)
    }

    /// Answers from the segments when the store starts from segments and every path the query
    /// needs is projected; nil to answer it the other way (no segments, a path outside the
    /// projection, a filter a segment cannot answer exactly, or a damaged segment, which the
    /// store then stops using).
    func fromSegments<T>(
        _ paths: Set<String>, resolvingMasks: Bool = true, _ answer: (Segments) throws(SegmentDamage) -> T?
    ) throws(StoreError) -> T? {
        guard options.usesSegments else { return nil }
        let projection = self.projection
        guard paths.allSatisfy({ $0 == "_id" || projection.paths.contains($0) }) else { return nil }
        guard let segments = try segments(loading: paths, resolvingMasks: resolvingMasks) else { return nil }
        do throws(SegmentDamage) {
            return try answer(segments)
        } catch {
            try withState { (state: inout State) throws(StoreError) in
                state.refusesSegments = true
                try self.reopen(&state, lockHeld: false)
            }
            return nil
        }
    }

    /// A document read for a scan through the entry the query index holds: one read, without the
    /// index freshness check `document(withID:)` makes per call (the scan answers from the index
    /// as of its start); nil when the document has been removed since.
    func scannedDocument(_ entry: IndexEntry) throws(StoreError) -> JSONValue? {
        guard let bytes = try documentFile(documentPath(for: entry.id)) else { return try document(withID: entry.id) }
        return try parsedDocument(bytes, id: entry.id)
    }

    /// Entries sorted by ID bytes, comparing 24-byte prefixes first (NYT IDs share their first 14).
    static func sortedByID(_ entries: [IndexEntry]) -> [IndexEntry] {
        let prefixes = entries.map { entry -> (UInt64, UInt64, UInt64) in
            var words: [UInt64] = [0, 0, 0]
            for (index, byte) in entry.id.utf8.prefix(24).enumerated() {
                words[index / 8] |= UInt64(byte) << (8 * UInt64(7 - index % 8))
            }
            return (words[0], words[1], words[2])
        }
        let order = entries.indices.sorted { a, b in
            if prefixes[a] != prefixes[b] { return prefixes[a] < prefixes[b] }
            return UTF8Bytes.precedes(entries[a].id, entries[b].id)
        }
        return order.map { entries[$0] }
    }
}
