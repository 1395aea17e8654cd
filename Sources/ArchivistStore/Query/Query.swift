import ArchivistBase

/// A whole query: a filter, a sort, a window and the fields to return.
public struct Query: Sendable, Equatable {
    /// Which documents.
    public var filter: Filter
    /// In which order (ties broken by ID); empty means by ID, or by relevance for a text search.
    public var sort: [SortKey]
    /// How many matching documents to pass over.
    public var skip: Int
    /// How many to return at most.
    public var limit: Int?
    /// Whether `find` counts every match for `QueryResult.total` (the default). A caller that
    /// shows only the window (the shell's `find`) says false, and a query with a limit may then
    /// stop once it has the window: `total` is then at least `skip` plus the IDs returned (all
    /// the matches when there are fewer), and may be less than all the matches.
    public var countsTotal: Bool

    /// Creates a query.
    public init(filter: Filter = .all, sort: [SortKey] = [], skip: Int = 0, limit: Int? = nil, countsTotal: Bool = true) {
        self.filter = filter
        self.sort = sort
        self.skip = skip
        self.limit = limit
        self.countsTotal = countsTotal
    }

    /// The part of an ordered list of matches the query returns: `skip` passed over, at most `limit` kept.
    func window<Element>(_ ordered: [Element]) -> [Element] {
        let start = min(skip, ordered.count)
        let end = limit.map { min(ordered.count, start + $0) } ?? ordered.count
        return Array(ordered[start..<end])
    }
}
