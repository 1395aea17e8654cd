import ArchivistBase

/// A segment's postings of one bucket of a date: the bucket's span and where in the field's
/// postings its documents lie.
private struct BucketRun {
    var start: Int64
    var end: Int64
    var postings: Range<Int>
}

extension DocumentStore {
    /// One timeline per filter over the same spans: the documents each filter matches per bucket
    /// of the date at `path`, as `timeline(_:by:matching:)` counts them, on one list of spans from
    /// the earliest to the latest that any filter's documents fall in (empty spans included).
    ///
    /// `counts[f][s]` is how many documents `filters[f]` matches in the span that starts at
    /// `starts[s]`. From the segments, the date's dictionary is walked once for every filter (each
    /// row's documents read once and tested against each filter's matches), so a trend of several
    /// series and their total costs about one timeline; otherwise each filter's timeline is
    /// counted in turn, and `scannedPaths` names the paths read from the documents.
    public func timelines(
        _ path: String, by bucket: TimeBucket, matching filters: [Filter]
    ) throws(StoreError) -> (starts: [Int64], counts: [[Int]], scannedPaths: [String]) {
        try timelines(path, by: bucket, matching: filters, rowsPerStretch: Self.timelineRowsPerStretch)
    }

    /// `timelines(_:by:matching:)`, each segment's dates walked `rowsPerStretch` rows at a time.
    func timelines(
        _ path: String, by bucket: TimeBucket, matching filters: [Filter], rowsPerStretch: Int
    ) throws(StoreError) -> (starts: [Int64], counts: [[Int]], scannedPaths: [String]) {
        guard !filters.isEmpty else { return ([], [], []) }
        var needed: Set<String> = [path]
        for filter in filters { needed.formUnion(QueryIndex.neededPaths(filter: filter, textSearch: schema.textSearch)) }
        var perFilter: [[Int64: Int]]
        var scanned: [String] = []
        if let fromIndex = try fromSegments(
            needed,
            { (segments) throws(SegmentDamage) in
                try self.segmentedTimelines(path, by: bucket, matching: filters, segments, rowsPerStretch: rowsPerStretch)
            })
        {
            perFilter = fromIndex
        } else {
            perFilter = []
            for filter in filters {
                let (buckets, missing) = try timeline(path, by: bucket, matching: filter)
                for name in missing where !scanned.contains(name) { scanned.append(name) }
                var counts: [Int64: Int] = [:]
                for item in buckets where item.count > 0 { counts[item.start] = item.count }
                perFilter.append(counts)
            }
        }
        let keys = perFilter.flatMap(\.keys)
        guard let first = keys.min(), let last = keys.max() else { return ([], filters.map { _ in [] }, scanned) }
        var starts: [Int64] = []
        var start = first
        while start <= last {
            starts.append(start)
            start = bucket.next(after: start)
        }
        return (starts, perFilter.map { counts in starts.map { counts[$0] ?? 0 } }, scanned)
    }

    /// The counts per bucket of each filter from the segments (each field's date rows in order,
    /// each row's documents tested against every filter's matches) and the log's tail; nil when a
    /// segment's field has nested arrays or a filter cannot be answered from a segment.
    func segmentedTimelines(
        _ path: String, by bucket: TimeBucket, matching filters: [Filter], _ segments: Segments,
        rowsPerStretch: Int = timelineRowsPerStretch
    ) throws(SegmentDamage) -> [[Int64: Int]]? {
        var counts = [[Int64: Int]](repeating: [:], count: filters.count)
        for searcher in segments.searchers {
            let segment = searcher.snapshot
            guard let field = try segment.field(path), !field.hasNestedArrays else { return nil }
            var matches: [OrdinalSet] = []
            for filter in filters {
                guard let found = try searcher.matching(filter) else { return nil }
                matches.append(found)
            }
            // Rows are in value order: dates ascending, so one bucket's rows come together, and
            // their postings too (the postings of consecutive rows are consecutive). The rows are
            // read a run at a time and the postings in one read (each block checked once), not a
            // read per row: a segment's dates are nearly one row per document. Each stretch of
            // rows is counted against each filter's matches in one pass, then the segment's pages
            // are let go, so that the dictionary of a few million dates walked does not stay
            // counted in the process's memory (a bucket cut between two stretches adds up).
            var stretch = 0
            while stretch < field.rowCount {
                let rows = stretch..<min(field.rowCount, stretch + max(1, rowsPerStretch))
                stretch = rows.upperBound
                try countBuckets(field, rows: rows, by: bucket, against: matches, into: &counts)
                segment.reader.file.dropResidentPages()
            }
        }
        let tail = segments.tail
        let columns = tail.columns
        for (f, filter) in filters.enumerated() {
            for ordinal in tail.matching(filter) {
                var starts = Set<Int64>()
                for value in tail.resolve(path, Int(ordinal), in: columns) {
                    if case .string(let text) = value, let instant = ISODate.instant(of: text) { starts.insert(bucket.start(of: instant)) }
                }
                for start in starts { counts[f][start, default: 0] += 1 }
            }
        }
        return counts
    }

    /// The dictionary rows a timeline walks between two lets-go of a segment's pages: 2 MiB of
    /// rows (32 bytes each) and their postings (at least 256 KiB).
    static let timelineRowsPerStretch = 65_536

    /// Adds to `counts[f]` the documents of `rows` (dates, in order) that `matches[f]` holds, per
    /// bucket.
    private func countBuckets(
        _ field: SegmentField, rows: Range<Int>, by bucket: TimeBucket, against matches: [OrdinalSet], into counts: inout [[Int64: Int]]
    ) throws(SegmentDamage) {
        let postings = try field.ordinals(ofRows: rows)
        let postingsStart = try field.row(rows.lowerBound).postingsStart
        var runs: [BucketRun] = []
        try field.forEachRow(in: rows, into: &runs) { (runs, _, row) throws(SegmentDamage) -> Bool in
            guard row.rank == SortableKey.dateRank, row.isFacetValue, row.count > 0 else { return true }
            let first = row.postingsStart - postingsStart
            guard first >= 0, first + row.count <= postings.count else { throw .unreadable("snapshot postings out of order") }
            if let last = runs.last, row.instant >= last.start, row.instant < last.end, last.postings.upperBound == first {
                runs[runs.count - 1].postings = last.postings.lowerBound..<(first + row.count)
            } else {
                let start = bucket.start(of: row.instant)
                runs.append(BucketRun(start: start, end: bucket.next(after: start), postings: first..<(first + row.count)))
            }
            return true
        }
        for run in runs {
            let ordinals = UnsafeBufferPointer(rebasing: postings[run.postings])
            for f in matches.indices {
                let found = matches[f].count(of: ordinals)
                if found > 0 { counts[f][run.start, default: 0] += found }
            }
        }
    }
}
