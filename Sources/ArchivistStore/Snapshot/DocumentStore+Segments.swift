/// The query structures of a store that starts from a snapshot: the snapshot's live documents,
/// answered from the mapped file, and an in-memory query index of the documents the log after it
/// added or changed. Each query is answered by both and the answers merged.
struct Segments: Sendable {
    let snapshot: SnapshotSegment
    let tail: QueryIndex
}

extension DocumentStore {
    /// The segments of the current state with the tail's columns of `paths` loaded, or nil when
    /// the store did not start from a snapshot.
    func segments(loading paths: Set<String>) throws(StoreError) -> Segments? {
        try segmentCache.withLock { (cache: inout (key: IndexGeneration, segments: Segments)?) throws(StoreError) -> Segments? in
            try withState { (state: inout State) throws(StoreError) -> Segments? in
                try self.refresh(&state)
                guard let snapshot = state.entries.snapshot else { return nil }
                let generation = state.generation
                let segments: Segments
                if let cached = cache, cached.key == generation {
                    segments = cached.segments
                } else {
                    var tailEntries: [IndexEntry] = []
                    for case .some(let entry) in state.entries.overlay.values { tailEntries.append(entry) }
                    segments = Segments(
                        snapshot: SnapshotSegment(snapshot, superseded: state.entries.superseded, textSearch: schema.textSearch),
                        tail: QueryIndex(projection: state.projection, textSearch: schema.textSearch, entries: Self.sortedByID(tailEntries))
                    )
                    cache = (generation, segments)
                }
                let missing = paths.intersection(state.projection.paths).subtracting(segments.tail.loadedPaths).sorted()
                if !missing.isEmpty { segments.tail.add(try self.readColumns(missing, of: segments.tail.entries, &state)) }
                return segments
            }
        }
    }

    /// A query answered from the segments, or nil when the snapshot cannot answer it exactly.
    func segmentedFind(_ query: Query, _ segments: Segments) throws(SnapshotDamage) -> QueryResult? {
        let needed = query.limit.map { query.skip + $0 } ?? Int.max
        if query.sort.count == 1, needed < Int.max,
            let walked = try segments.snapshot.sortedRange(query.filter, by: query.sort[0], needed: needed)
        {
            let tailMatches = segments.tail.matching(query.filter)
            let merged = try bySortKey(query, found: walked.found, walked.field, tailMatches, segments, needed: needed)
            return QueryResult(ids: query.window(merged), total: walked.total + tailMatches.count, scannedPaths: [])
        }
        guard let matches = try segments.snapshot.matching(query.filter) else { return nil }
        let tail = segments.tail
        let tailMatches = tail.matching(query.filter)
        let total = matches.count + tailMatches.count
        let merged: [String]
        if query.sort.isEmpty {
            let terms = QueryIndex.textTerms(query.filter)
            if terms.isEmpty {
                merged = try byID(matches, tailMatches, segments, needed: needed)
            } else {
                merged = try byRelevance(terms, matches, tailMatches, segments, needed: needed)
            }
        } else if query.sort.count == 1 {
            guard let ordered = try bySortKey(query, matches, tailMatches, segments, needed: needed) else { return nil }
            merged = ordered
        } else {
            return nil
        }
        return QueryResult(ids: query.window(merged), total: total, scannedPaths: [])
    }

    /// The first `needed` matches of both segments in ID order.
    private func byID(_ matches: OrdinalSet, _ tailMatches: [Int32], _ segments: Segments, needed: Int) throws(SnapshotDamage) -> [String] {
        var first: [String] = []
        var damage: SnapshotDamage?
        matches.forEach { ordinal in
            do throws(SnapshotDamage) { first.append(try segments.snapshot.snapshot.id(at: ordinal, hinted: needed)) } catch {
                damage = error
                return false
            }
            return first.count < needed
        }
        if let damage { throw damage }
        let second = tailMatches.prefix(needed).map { segments.tail.ids[Int($0)] }
        return Self.merge(first, second, needed: needed) { UTF8Bytes.precedes($0, $1) }
    }

    /// The first `needed` matches by relevance (the summed weights of the terms' occurrences),
    /// ties by ID.
    private func byRelevance(
        _ terms: [String], _ matches: OrdinalSet, _ tailMatches: [Int32], _ segments: Segments,
        needed: Int
    ) throws(SnapshotDamage) -> [String] {
        let snapshot = segments.snapshot.snapshot
        var scores = [Double](repeating: 0, count: snapshot.count)
        let text = try snapshot.text()
        for term in Set(terms) {
            for posting in try text.postings(of: term) where Int(posting[0]) < snapshot.count && matches.contains(Int(posting[0])) {
                scores[Int(posting[0])] += Double(SnapshotText.weight(posting))
            }
        }
        var ranked: [(ordinal: Int, score: Double)] = []
        ranked.reserveCapacity(matches.count)
        matches.forEach {
            ranked.append(($0, scores[$0])); return true
        }
        ranked.sort { $0.score != $1.score ? $0.score > $1.score : $0.ordinal < $1.ordinal }
        var first: [(id: String, score: Double)] = []
        for item in ranked.prefix(needed) { first.append((try snapshot.id(at: item.ordinal, hinted: needed), item.score)) }
        let tailScores = segments.tail.scores(terms, of: tailMatches)
        var second = zip(tailMatches, tailScores).map { (id: segments.tail.ids[Int($0.0)], score: $0.1) }
        second.sort { $0.score != $1.score ? $0.score > $1.score : UTF8Bytes.precedes($0.id, $1.id) }
        return Self.merge(first, Array(second.prefix(needed)), needed: needed) { a, b in
            a.score != b.score ? a.score > b.score : UTF8Bytes.precedes(a.id, b.id)
        }.map(\.id)
    }

    /// The first `needed` matches by one sort key (ties by ID), walking the snapshot's
    /// dictionary; nil when the key's field is not in the snapshot.
    private func bySortKey(
        _ query: Query, _ matches: OrdinalSet, _ tailMatches: [Int32], _ segments: Segments,
        needed: Int
    ) throws(SnapshotDamage) -> [String]? {
        let key = query.sort[0]
        guard let field = try segments.snapshot.snapshot.field(key.path) else { return nil }
        var found: [(ordinal: Int, row: Int)] = []
        try field.walkRows(descending: key.isDescending) { ordinal, row in
            guard matches.contains(Int(ordinal)) else { return true }
            found.append((Int(ordinal), row))
            return found.count < needed
        }
        return try bySortKey(query, found: found, field, tailMatches, segments, needed: needed)
    }

    /// The snapshot's first matches in sort order (`found`, with their rows of `field`) merged
    /// with the tail's, the first `needed` of both.
    private func bySortKey(
        _ query: Query, found: [(ordinal: Int, row: Int)], _ field: SnapshotField, _ tailMatches: [Int32], _ segments: Segments,
        needed: Int
    ) throws(SnapshotDamage) -> [String] {
        let key = query.sort[0]
        let snapshot = segments.snapshot.snapshot
        var first: [(id: String, key: JSONValue?)] = []
        for item in found {
            first.append((try snapshot.id(at: item.ordinal, hinted: needed), try field.value(of: try field.row(item.row))))
        }
        let tail = segments.tail
        let ordered = tail.order(
            tailMatches, query: Query(filter: query.filter, sort: query.sort, skip: 0, limit: needed == Int.max ? nil : needed))
        let columns = tail.columns
        let second = ordered.map { ordinal in
            (
                id: tail.ids[Int(ordinal)],
                key: ValueOrder.sortKey(found: tail.resolve(key.path, Int(ordinal), in: columns), descending: key.isDescending)
            )
        }
        return Self.merge(first, second, needed: needed) { a, b in
            let c = ValueOrder.compareSortKeys(a.key, b.key)
            if c != 0 { return key.isDescending ? c > 0 : c < 0 }
            return UTF8Bytes.precedes(a.id, b.id)
        }.map(\.id)
    }

    /// The first `needed` of two ordered lists, merged.
    static func merge<T>(_ a: [T], _ b: [T], needed: Int, _ precedes: (T, T) -> Bool) -> [T] {
        var result: [T] = []
        result.reserveCapacity(min(needed, a.count + b.count))
        var i = 0, j = 0
        while result.count < needed && (i < a.count || j < b.count) {
            if j >= b.count || (i < a.count && !precedes(b[j], a[i])) {
                result.append(a[i])
                i += 1
            } else {
                result.append(b[j])
                j += 1
            }
        }
        return result
    }

    /// Documents per value among those matching `filter`, from the segments; nil when the
    /// snapshot cannot answer it exactly.
    func segmentedFacet(
        _ path: String, matching filter: Filter, _ segments: Segments
    ) throws(SnapshotDamage)
        -> [(value: JSONValue, count: Int)]?
    {
        let snapshot = segments.snapshot.snapshot
        guard let field = try snapshot.field(path), !field.hasNestedArrays,
            let matches = try segments.snapshot.matching(filter)
        else { return nil }
        // Spellings of one value (`879`, `879.0`) are one count, shown as the first document
        // (by ID, in either segment) spells it.
        var counts: [DocumentID: (value: JSONValue, count: Int, first: String)] = [:]
        func add(_ key: DocumentID, _ value: JSONValue, _ count: Int, firstID: String) {
            guard let known = counts[key] else {
                counts[key] = (value, count, firstID)
                return
            }
            let earlier = UTF8Bytes.precedes(firstID, known.first)
            counts[key] = (earlier ? value : known.value, known.count + count, earlier ? firstID : known.first)
        }
        for index in 0..<field.rowCount {
            let row = try field.row(index)
            guard row.isFacetValue, let value = try field.value(of: row) else { continue }
            var count = 0
            var first = -1
            for ordinal in try field.ordinals(of: row) where Int(ordinal) < snapshot.count && matches.contains(Int(ordinal)) {
                if first < 0 { first = Int(ordinal) }
                count += 1
            }
            if count > 0 { add(QueryIndex.exactKey(value), value, count, firstID: try snapshot.id(at: first)) }
        }
        let tail = segments.tail
        let columns = tail.columns
        var tally = FacetTally()
        var firstIDs: [DocumentID: String] = [:]
        for ordinal in tail.matching(filter) {
            let values = tail.resolve(path, Int(ordinal), in: columns)
            for key in tally.add(values) where firstIDs[key] == nil { firstIDs[key] = tail.ids[Int(ordinal)] }
        }
        for (key, entry) in tally.entries { add(key, entry.value, entry.count, firstID: firstIDs[key] ?? "") }
        return counts.values.map { (value: $0.value, count: $0.count) }.sorted(by: FacetTally.precedes)
    }
}
