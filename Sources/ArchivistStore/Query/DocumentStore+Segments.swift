import ArchivistBase

/// The query structures of a store that starts from segments: each segment's live documents,
/// answered from its mapped file, and an in-memory query index of the documents the log after
/// them added or changed (the tail). Each query is answered by every one of them and the
/// answers merged (Lucene's segment readers under one searcher).
struct Segments: Sendable {
    /// The segments' searchers, oldest first.
    let searchers: [SegmentSearcher]
    /// The tail's documents.
    let tail: QueryIndex
    /// The IDs the tail changed (its documents and its removals).
    let tailKeys: Set<DocumentID>
    /// Whether the searchers leave out what the tail supersedes (`SegmentSearcher.masksResolved`).
    var masksResolved: Bool { searchers.allSatisfy(\.masksResolved) }
}

extension DocumentStore {
    /// The segments of the current state with the tail's columns of `paths` loaded, or nil when
    /// the store did not start from segments. Without `resolvingMasks`, the segments may come
    /// without what the tail supersedes in them looked up (`Segments.masksResolved`), for a
    /// query that tells the tail's documents by ID instead.
    func segments(loading paths: Set<String>, resolvingMasks: Bool = true) throws(StoreError) -> Segments? {
        try segmentCache.withLock { (cache: inout (key: IndexGeneration, segments: Segments)?) throws(StoreError) -> Segments? in
            try withState { (state: inout State) throws(StoreError) -> Segments? in
                try self.refresh(&state)
                guard state.manifest != nil else { return nil }
                let generation = state.generation
                let segments: Segments
                if let cached = cache, cached.key == generation, cached.segments.masksResolved || !resolvingMasks {
                    segments = cached.segments
                } else {
                    var masks: [Set<Int>?] = state.entries.segments.map { _ in nil }
                    if resolvingMasks {
                        try self.table(try state.entries.resolve())
                        masks = try self.table(try state.entries.masks())
                    }
                    var tailEntries: [IndexEntry] = []
                    for case .some(let entry) in state.entries.overlay.values { tailEntries.append(entry) }
                    segments = Segments(
                        searchers: state.entries.segments.enumerated().map { place, segment in
                            SegmentSearcher(segment, masked: masks[place], textSearch: schema.textSearch)
                        },
                        tail: QueryIndex(
                            projection: state.projection, textSearch: schema.textSearch, entries: Self.sortedByID(tailEntries)),
                        tailKeys: Set(state.entries.overlay.keys)
                    )
                    cache = (generation, segments)
                }
                let missing = paths.intersection(state.projection.paths).subtracting(segments.tail.loadedPaths).sorted()
                if !missing.isEmpty { segments.tail.add(try self.readColumns(missing, of: segments.tail.entries, &state)) }
                return segments
            }
        }
    }

    /// A query answered from the segments, or nil when one of them cannot answer it exactly.
    /// Segments whose masks were not looked up (`Segments.masksResolved`) answer only a query
    /// sorted by one key with a limit that does not count its total.
    func segmentedFind(_ query: Query, _ segments: Segments) throws(SegmentDamage) -> QueryResult? {
        let needed = query.limit.map { query.skip + $0 } ?? Int.max
        let tailMatches = segments.tail.matching(query.filter)
        if query.sort.count == 1, needed < Int.max {
            // First without telling apart the documents the tail changed: the merge passes over
            // those it meets (an ID read for each document it takes, not for every one walked).
            for tellsTail in [false, true] where tellsTail || !segments.masksResolved {
                var walked: [(found: [(ordinal: Int, row: Int)], total: Int, field: SegmentField)] = []
                for searcher in segments.searchers {
                    guard
                        let one = try searcher.sortedRange(
                            query.filter, by: query.sort[0], needed: needed, counting: query.countsTotal,
                            tail: tellsTail ? segments.tailKeys : [])
                    else { break }
                    walked.append(one)
                }
                guard walked.count == segments.searchers.count else { break }
                let tail = tailKeyed(query, tailMatches, segments.tail, needed: needed)
                guard
                    let merged = try lazilyMerged(
                        query, walked, segments, tail, needed: needed, passingOver: segments.masksResolved ? [] : segments.tailKeys)
                else { continue }
                // Without a count, what the merge took: all the matches when there are fewer than
                // `needed` (every walk ran out), else `needed` (the walks' own totals would count a
                // document the tail changed twice).
                let total = query.countsTotal ? walked.reduce(tailMatches.count) { $0 + $1.total } : merged.count
                return QueryResult(ids: query.window(merged), total: total, scannedPaths: [])
            }
        }
        guard segments.masksResolved else { return nil }
        var matches: [OrdinalSet] = []
        for searcher in segments.searchers {
            guard let found = try searcher.matching(query.filter) else { return nil }
            matches.append(found)
        }
        let total = matches.reduce(tailMatches.count) { $0 + $1.count }
        let merged: [String]
        if query.sort.isEmpty {
            let terms = QueryIndex.textTerms(query.filter)
            if terms.isEmpty {
                merged = try byID(matches, tailMatches, segments, needed: needed)
            } else {
                merged = try byRelevance(terms, matches, tailMatches, segments, needed: needed)
            }
        } else if query.sort.count == 1 {
            var lists: [[(id: String, key: JSONValue?)]] = []
            for (searcher, found) in zip(segments.searchers, matches) {
                guard let field = try searcher.snapshot.field(query.sort[0].path) else { return nil }
                var walked: [(ordinal: Int, row: Int)] = []
                try field.walkRows(descending: query.sort[0].isDescending) { ordinal, row in
                    guard found.contains(Int(ordinal)) else { return true }
                    walked.append((Int(ordinal), row))
                    return walked.count < needed
                }
                lists.append(try keyed(walked, field, searcher, needed: needed, key: query.sort[0]))
            }
            lists.append(tailKeyed(query, tailMatches, segments.tail, needed: needed))
            merged = bySortKey(query, lists, needed: needed)
        } else {
            return nil
        }
        return QueryResult(ids: query.window(merged), total: total, scannedPaths: [])
    }

    /// The first `needed` matches of every segment and the tail in ID order.
    private func byID(_ matches: [OrdinalSet], _ tailMatches: [Int32], _ segments: Segments, needed: Int) throws(SegmentDamage) -> [String]
    {
        var lists: [[String]] = []
        for (searcher, found) in zip(segments.searchers, matches) {
            var first: [String] = []
            var damage: SegmentDamage?
            found.forEach { ordinal in
                do throws(SegmentDamage) { first.append(try searcher.snapshot.id(at: ordinal, hinted: needed)) } catch {
                    damage = error
                    return false
                }
                return first.count < needed
            }
            if let damage { throw damage }
            lists.append(first)
        }
        lists.append(tailMatches.prefix(needed).map { segments.tail.ids[Int($0)] })
        return Self.mergeLists(lists, needed: needed) { UTF8Bytes.precedes($0, $1) }
    }

    /// How many live documents of the segments and the tail hold each term (for `Relevance`).
    func relevanceStatistics(_ terms: [String], _ segments: Segments) throws(SegmentDamage) -> Relevance.Statistics {
        var statistics = segments.tail.relevanceStatistics(terms)
        for searcher in segments.searchers {
            let text = try searcher.snapshot.text()
            var frequencies: [String: Int] = [:]
            for term in Set(terms) {
                let postings = try text.postings(of: term)
                var holding = 0
                for posting in postings where Int(posting[0]) < searcher.snapshot.count && searcher.live.contains(Int(posting[0])) {
                    holding += 1
                }
                frequencies[term] = holding
            }
            statistics.add(Relevance.Statistics(documents: searcher.live.count, frequencies: frequencies))
        }
        return statistics
    }

    /// The first `needed` matches by relevance (`Relevance`, with the whole store's term
    /// statistics), ties by ID.
    private func byRelevance(
        _ terms: [String], _ matches: [OrdinalSet], _ tailMatches: [Int32], _ segments: Segments, needed: Int
    ) throws(SegmentDamage) -> [String] {
        let statistics = try relevanceStatistics(terms, segments)
        let distinct = Set(terms).sorted()
        var lists: [[(id: String, score: Double)]] = []
        for (searcher, found) in zip(segments.searchers, matches) {
            let segment = searcher.snapshot
            // Each match's score, summed term by term in `Relevance.score`'s order (bit for bit
            // the same sum as the tail's and a scan's).
            var scores = [Double](repeating: 0, count: segment.count)
            let text = try segment.text()
            for term in distinct {
                let inverse = statistics.inverseFrequency(of: term)
                for posting in try text.postings(of: term) where Int(posting[0]) < segment.count && found.contains(Int(posting[0])) {
                    scores[Int(posting[0])] += Double(SegmentText.weight(posting)) * inverse
                }
            }
            var ranked: [(ordinal: Int, score: Double)] = []
            ranked.reserveCapacity(found.count)
            found.forEach {
                ranked.append(($0, scores[$0])); return true
            }
            ranked.sort { $0.score != $1.score ? $0.score > $1.score : $0.ordinal < $1.ordinal }
            var first: [(id: String, score: Double)] = []
            for item in ranked.prefix(needed) { first.append((try segment.id(at: item.ordinal, hinted: needed), item.score)) }
            lists.append(first)
        }
        let tailScores = segments.tail.scores(terms, of: tailMatches, statistics: statistics)
        var second = zip(tailMatches, tailScores).map { (id: segments.tail.ids[Int($0.0)], score: $0.1) }
        second.sort { $0.score != $1.score ? $0.score > $1.score : UTF8Bytes.precedes($0.id, $1.id) }
        lists.append(Array(second.prefix(needed)))
        return Self.mergeLists(lists, needed: needed) { a, b in
            a.score != b.score ? a.score > b.score : UTF8Bytes.precedes(a.id, b.id)
        }.map(\.id)
    }

    /// The first `needed` IDs of the segments' walks and the tail's list, merged by the query's
    /// one key (ties by ID), reading a document's sort key and ID only when the merge compares or
    /// takes it: ten documents of nine segments read about nineteen keys and ten IDs, not ninety
    /// of each. A document whose ID is in `passingOver` (the tail changed it) is passed over; nil
    /// when a walk that stopped at `needed` runs out after passing over some (it may hold more:
    /// the caller walks again telling them apart).
    private func lazilyMerged(
        _ query: Query, _ walked: [(found: [(ordinal: Int, row: Int)], total: Int, field: SegmentField)], _ segments: Segments,
        _ tail: [(id: String, key: JSONValue?)], needed: Int, passingOver: Set<DocumentID>
    ) throws(SegmentDamage) -> [String]? {
        let descending = query.sort[0].isDescending
        let lists = walked.count
        var heads = [Int](repeating: 0, count: lists + 1)
        var keys = [JSONValue??](repeating: nil, count: lists + 1)
        var ids = [String?](repeating: nil, count: lists + 1)
        var passed = [Bool](repeating: false, count: lists)
        func count(_ list: Int) -> Int { list == lists ? tail.count : walked[list].found.count }
        func key(_ list: Int) throws(SegmentDamage) -> JSONValue? {
            if let known = keys[list] { return known }
            let found: JSONValue?
            if list == lists {
                found = tail[heads[list]].key
            } else {
                let field = walked[list].field
                found = try field.value(of: try field.row(walked[list].found[heads[list]].row))
            }
            keys[list] = .some(found)
            return found
        }
        func id(_ list: Int) throws(SegmentDamage) -> String {
            if let known = ids[list] { return known }
            let found =
                list == lists
                ? tail[heads[list]].id
                : try segments.searchers[list].snapshot.id(at: walked[list].found[heads[list]].ordinal, hinted: needed)
            ids[list] = found
            return found
        }
        var result: [String] = []
        result.reserveCapacity(min(needed, 1024))
        while result.count < needed {
            var best: Int?
            for list in 0...lists where heads[list] < count(list) {
                guard let current = best else {
                    best = list
                    continue
                }
                let order = ValueOrder.compareSortKeys(try key(list), try key(current))
                if order == 0 ? UTF8Bytes.precedes(try id(list), try id(current)) : (descending ? order > 0 : order < 0) {
                    best = list
                }
            }
            guard let list = best else { break }
            let taken = try id(list)
            heads[list] += 1
            keys[list] = nil
            ids[list] = nil
            if list < lists, passingOver.contains(DocumentID(taken)) {
                passed[list] = true
            } else {
                result.append(taken)
            }
            // A walk cut at `needed` that passed over some may hold more than it handed over.
            if list < lists, passed[list], heads[list] == count(list), count(list) >= needed, result.count < needed { return nil }
        }
        return result
    }

    /// A segment's first matches in sort order (`found`, with their rows of `field`), with their
    /// IDs and sort keys.
    private func keyed(
        _ found: [(ordinal: Int, row: Int)], _ field: SegmentField, _ searcher: SegmentSearcher, needed: Int, key: SortKey
    ) throws(SegmentDamage) -> [(id: String, key: JSONValue?)] {
        var result: [(id: String, key: JSONValue?)] = []
        result.reserveCapacity(found.count)
        for item in found {
            result.append((try searcher.snapshot.id(at: item.ordinal, hinted: needed), try field.value(of: try field.row(item.row))))
        }
        return result
    }

    /// The tail's first matches in sort order, with their IDs and sort keys.
    private func tailKeyed(_ query: Query, _ tailMatches: [Int32], _ tail: QueryIndex, needed: Int) -> [(id: String, key: JSONValue?)] {
        let key = query.sort[0]
        let ordered = tail.order(
            tailMatches, query: Query(filter: query.filter, sort: query.sort, skip: 0, limit: needed == Int.max ? nil : needed))
        let columns = tail.columns
        return ordered.map { ordinal in
            (
                id: tail.ids[Int(ordinal)],
                key: ValueOrder.sortKey(found: tail.resolve(key.path, Int(ordinal), in: columns), descending: key.isDescending)
            )
        }
    }

    /// The first `needed` of ordered lists of (ID, sort key), merged by the query's one key, ties
    /// by ID.
    private func bySortKey(_ query: Query, _ lists: [[(id: String, key: JSONValue?)]], needed: Int) -> [String] {
        let key = query.sort[0]
        return Self.mergeLists(lists, needed: needed) { a, b in
            let c = ValueOrder.compareSortKeys(a.key, b.key)
            if c != 0 { return key.isDescending ? c > 0 : c < 0 }
            return UTF8Bytes.precedes(a.id, b.id)
        }.map(\.id)
    }

    /// The first `needed` of several ordered lists, merged (a k-way merge).
    static func mergeLists<T>(_ lists: [[T]], needed: Int, _ precedes: (T, T) -> Bool) -> [T] {
        var result: [T] = []
        result.reserveCapacity(min(needed, lists.reduce(0) { $0 + $1.count }))
        var heads = [Int](repeating: 0, count: lists.count)
        while result.count < needed {
            var best: Int?
            for (list, head) in heads.enumerated() where head < lists[list].count {
                if let current = best {
                    if precedes(lists[list][head], lists[current][heads[current]]) { best = list }
                } else {
                    best = list
                }
            }
            guard let list = best else { break }
            result.append(lists[list][heads[list]])
            heads[list] += 1
        }
        return result
    }

    /// The first `needed` of two ordered lists, merged.
    static func merge<T>(_ a: [T], _ b: [T], needed: Int, _ precedes: (T, T) -> Bool) -> [T] {
        mergeLists([a, b], needed: needed, precedes)
    }

    /// How many documents match `filter`, from the segments; nil when one cannot answer exactly.
    func segmentedCount(_ filter: Filter, _ segments: Segments) throws(SegmentDamage) -> Int? {
        var total = segments.tail.matching(filter).count
        for searcher in segments.searchers {
            if let count = try searcher.countOfRange(filter) {
                total += count
            } else if let matches = try searcher.matching(filter) {
                total += matches.count
            } else {
                return nil
            }
        }
        return total
    }

    /// Documents per value among those matching `filter`, from the segments; nil when one of them
    /// cannot answer it exactly.
    func segmentedFacet(
        _ path: String, matching filter: Filter, _ segments: Segments
    ) throws(SegmentDamage)
        -> [(value: JSONValue, count: Int)]?
    {
        // Spellings of one value (`879`, `879.0`) are one count, shown as the first document
        // (by ID, in any segment) spells it.
        var counts: [DocumentID: (value: JSONValue, count: Int, first: String)] = [:]
        func add(_ key: DocumentID, _ value: JSONValue, _ count: Int, firstID: String) {
            guard let known = counts[key] else {
                counts[key] = (value, count, firstID)
                return
            }
            let earlier = UTF8Bytes.precedes(firstID, known.first)
            counts[key] = (earlier ? value : known.value, known.count + count, earlier ? firstID : known.first)
        }
        for searcher in segments.searchers {
            let segment = searcher.snapshot
            guard let field = try segment.field(path), !field.hasNestedArrays, let matches = try searcher.matching(filter) else {
                return nil
            }
            for index in 0..<field.rowCount {
                let row = try field.row(index)
                guard row.isFacetValue, let value = try field.value(of: row) else { continue }
                var count = 0
                var first = -1
                for ordinal in try field.ordinals(of: row) where Int(ordinal) < segment.count && matches.contains(Int(ordinal)) {
                    if first < 0 { first = Int(ordinal) }
                    count += 1
                }
                if count > 0 { add(QueryIndex.exactKey(value), value, count, firstID: try segment.id(at: first)) }
            }
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
