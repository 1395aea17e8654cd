import ArchivistBase

extension DocumentStore {
    /// The documents matching `filter` per bucket of the date at `path`, oldest first, every
    /// bucket from the first to the last that holds one (empty ones with a count of 0).
    ///
    /// Dates are the values that compare as instants (any ISO-8601 spelling); a document whose
    /// value is not a date, or that has none, is not counted. Answered from each segment's sorted
    /// dictionary of the field (its rows carry their instants) and the log's tail, without a value
    /// per document, when the path is projected; `scannedPaths` names the paths read from the
    /// documents otherwise, as `facet` does.
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
        try segmentedTimelines(path, by: bucket, matching: [filter], segments)?.first
    }
}
