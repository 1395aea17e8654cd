extension DocumentStore {
    /// The documents matching `filter` per bucket of the date at `path`, oldest first, every
    /// bucket from the first to the last that holds one (empty ones with a count of 0).
    ///
    /// Dates are the values that compare as instants (any ISO-8601 spelling); a document whose
    /// value is not a date, or that has none, is not counted. Answered from the snapshot's sorted
    /// dictionary of the field (its rows carry their instants), without a value per document,
    /// when the path is projected; `scannedPaths` names the paths read from the documents
    /// otherwise, as `facet` does.
    public func timeline(
        _ path: String, by bucket: TimeBucket, matching filter: Filter = .all
    ) throws(StoreError) -> (buckets: [(start: Int64, count: Int)], scannedPaths: [String]) {
        let needed = QueryIndex.neededPaths(filter: filter, textSearch: schema.textSearch).union([path])
        var counts: [Int64: Int]
        var scanned: [String] = []
        if let fromIndex = try fromSegments(
            needed, { (segments) throws(SegmentDamage) in try self.segmentedTimeline(path, by: bucket, matching: filter, segments) })
        {
            counts = fromIndex
        } else {
            // Per distinct value, then by bucket.
            let (values, missing) = try facet(path, matching: filter)
            scanned = missing
            counts = [:]
            for (value, count) in values {
                guard case .string(let text) = value, let instant = ISODate.instant(of: text) else { continue }
                counts[bucket.start(of: instant), default: 0] += count
            }
        }
        guard let first = counts.keys.min(), let last = counts.keys.max() else { return ([], scanned) }
        var buckets: [(start: Int64, count: Int)] = []
        var start = first
        while start <= last {
            buckets.append((start, counts[start] ?? 0))
            start = bucket.next(after: start)
        }
        return (buckets, scanned)
    }

    /// The counts per bucket from the segments (each field's date rows in order, with their
    /// matching documents) and the log's tail; nil when a segment's field has nested arrays.
    func segmentedTimeline(
        _ path: String, by bucket: TimeBucket, matching filter: Filter, _ segments: Segments
    ) throws(SegmentDamage) -> [Int64: Int]? {
        var counts: [Int64: Int] = [:]
        for searcher in segments.searchers {
            let segment = searcher.snapshot
            guard let field = try segment.field(path), !field.hasNestedArrays, let matches = try searcher.matching(filter) else {
                return nil
            }
            // Rows are in value order: dates ascending, so one bucket's rows come together.
            var current: (start: Int64, end: Int64, count: Int)?
            for index in 0..<field.rowCount {
                let row = try field.row(index)
                guard row.rank == SortableKey.dateRank, row.isFacetValue else { continue }
                if current == nil || row.instant < current!.start || row.instant >= current!.end {
                    if let done = current, done.count > 0 { counts[done.start, default: 0] += done.count }
                    let start = bucket.start(of: row.instant)
                    current = (start, bucket.next(after: start), 0)
                }
                var count = 0
                for ordinal in try field.ordinals(of: row) where Int(ordinal) < segment.count && matches.contains(Int(ordinal)) {
                    count += 1
                }
                current!.count += count
            }
            if let done = current, done.count > 0 { counts[done.start, default: 0] += done.count }
        }
        let tail = segments.tail
        let columns = tail.columns
        for ordinal in tail.matching(filter) {
            var starts = Set<Int64>()
            for value in tail.resolve(path, Int(ordinal), in: columns) {
                if case .string(let text) = value, let instant = ISODate.instant(of: text) { starts.insert(bucket.start(of: instant)) }
            }
            for start in starts { counts[start, default: 0] += 1 }
        }
        return counts
    }
}
