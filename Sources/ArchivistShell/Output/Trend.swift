import ArchivistBase
import ArchivistStore

/// How much of the paper each of several subjects was, span by span: the documents each series
/// matches per span of time, and all the documents of that span (or all of those matching the
/// trend's `within` filter), which each count is a share of.
///
/// A span where `totals` is 0 held no documents at all: it is a gap, not a zero.
struct Trend: Sendable {
    /// One line of the chart: a filter as typed and its count per span.
    struct Series: Sendable {
        /// The filter as the user typed it (`inflation`, `"climate change"`, `section_name = Sports`).
        let name: String
        /// Its matching documents per span, in the order of `Trend.starts`.
        let counts: [Int]
    }

    /// How long each span is.
    let bucket: TimeBucket
    /// The first instant of each span (milliseconds since 1970, UTC), oldest first.
    let starts: [Int64]
    /// All documents of each span (or those matching `within`).
    let totals: [Int]
    /// The series, in the order given.
    let series: [Series]
    /// The filter every share is of, as typed, nil for all documents.
    let within: String?

    /// The names of the spans: `2019`, `2019-01`, `2019-01-14`.
    var labels: [String] { starts.map(bucket.label) }

    /// The share of span `span`'s documents that series `index` matches, nil in a gap.
    func share(_ index: Int, at span: Int) -> Double? {
        totals[span] == 0 ? nil : Double(series[index].counts[span]) / Double(totals[span])
    }

    /// What the chart plots for series `index` in span `span`: its share, or its count when
    /// `counts` is set; nil in a gap (a span with no documents at all).
    func value(_ index: Int, at span: Int, counts: Bool) -> Double? {
        guard totals[span] > 0 else { return nil }
        return counts ? Double(series[index].counts[span]) : share(index, at: span)
    }

    /// Whether some span between the first and the last held no documents at all.
    var hasGaps: Bool { totals.contains(0) }

    /// A `bucket,series,count,total,share` record per span and series, spans oldest first and the
    /// series in order within each; `share` is a fraction (0 to 1), null in a gap.
    var records: [Record] {
        var records: [Record] = []
        records.reserveCapacity(starts.count * series.count)
        for (span, label) in labels.enumerated() {
            for (index, item) in series.enumerated() {
                let share = self.share(index, at: span).map { JSONValue.number(String(describing: $0)) } ?? .null
                records.append(
                    Record([
                        ("bucket", .string(label)), ("series", .string(item.name)), ("count", .int(item.counts[span])),
                        ("total", .int(totals[span])), ("share", share),
                    ]))
            }
        }
        return records
    }

    /// What the values are, for titles: `share of all articles per year`, `articles per month`.
    func title(counts: Bool) -> String {
        if counts { return "articles per \(bucket.rawValue)" + (within.map { " matching \($0)" } ?? "") }
        return "share of " + (within.map { "the articles matching \($0)" } ?? "all articles") + " per \(bucket.rawValue)"
    }
}
