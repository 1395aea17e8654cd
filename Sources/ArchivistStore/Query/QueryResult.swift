/// What `find` returns.
public struct QueryResult: Sendable {
    /// The IDs of the documents in the window, in order.
    public var ids: [String]
    /// How many documents matched before skip and limit (for a query that did not ask to count
    /// them, `Query.countsTotal` false: at least `skip` plus the IDs returned, or all the matches
    /// when there are fewer).
    public var total: Int
    /// Paths the projection lacks, which made the query read documents from disk (empty when the
    /// projection answered it).
    public var scannedPaths: [String]
}
