import ArchivistBase

extension DocumentStore {
    /// What one read of the changes feed gave: the matching changes, and the sequence number it
    /// read through (the next read passes it as `since`; it moves past changes that did not match).
    public struct ChangePage: Sendable, Equatable {
        /// The changes that matched, in sequence order.
        public var changes: [Change]
        /// The last sequence number the read covered.
        public var through: Int
    }

    /// The highest sequence number given out in this folder (0 before the first change).
    public var lastSequence: Int {
        get throws(StoreError) {
            try withState { (state: inout State) throws(StoreError) -> Int in
                try self.refresh(&state)
                return state.lastSequence
            }
        }
    }

    /// The changes feed is whole after this sequence number (0: since the folder began): a
    /// `changes(since:)` from any number at or above it answers with the latest change of every
    /// ID changed after that number. `compact`, `repair` of a readable index, `index add` and
    /// `index drop` keep every number and tombstone, so they never move it; only
    /// `compact(purgeRemovals: true)` (which drops the tombstones) and a rebuild of an unreadable
    /// or missing index (which numbers every document again) do.
    public var feedStart: Int {
        get throws(StoreError) {
            try withState { (state: inout State) throws(StoreError) -> Int in
                try self.refresh(&state)
                return state.metadata.feedStart
            }
        }
    }

    /// The changes committed after sequence number `since` (excluded), in order, that match
    /// `filter` (on the projected fields: a removal matches when the document it removed did), at
    /// most `limit` of them.
    ///
    /// `since` 0 gives every change the log keeps: the last change of each ID (a live document's,
    /// or the removal of a removed one, its tombstone, until `compact(purgeRemovals: true)`), and
    /// every change since the last `compact`. So for any `since` the folder gave out, the changes
    /// hold the latest change of every ID changed after it. A `since` below the feed's start
    /// (`feedStart`) fails with `.feedCompacted`, never a silent gap.
    public func changes(since: Int = 0, filter: Filter = .all, limit: Int? = nil) throws(StoreError) -> [Change] {
        try changePage(since: since, filter: filter, limit: limit).changes
    }

    /// Where the changes feed starts after this process rebuilt an unreadable or missing index
    /// from the documents when it opened the store (numbering every document again), or nil
    /// when it did not (only the process that rebuilt it sees it, so it is said once).
    public var renumberedFeedStart: Int? {
        state.withLock { $0.renumberedFeedStart }
    }

    /// As `changes(since:filter:limit:)`, with how far the read went.
    public func changePage(since: Int = 0, filter: Filter = .all, limit: Int? = nil) throws(StoreError) -> ChangePage {
        for _ in 0..<5 {
            let (identity, end, last, start, projection) = try withState {
                (state: inout State) throws(StoreError) -> (UInt64?, Int, Int, Int, Projection) in
                try self.refresh(&state)
                return (state.index.identity, state.index.consumed, state.lastSequence, state.metadata.feedStart, state.projection)
            }
            if since > 0, since < start { throw .feedCompacted(path: path(FileNames.index), since: since, start: start) }
            let matcher = try ChangeFilter(filter, projection: projection, textSearch: schema.textSearch)
            if since >= last { return ChangePage(changes: [], through: max(since, last)) }
            let file = changeLog
            let offset = since == 0 ? 0 : try file.offset(after: since, end: end)
            var found: [Change] = []
            var stoppedAt: Int?
            _ = try file.readChanges(from: offset, end: end, previous: offset == 0 ? 0 : since, since: since) { change in
                guard matcher.matches(change) else { return true }
                found.append(change)
                if let limit, found.count >= limit {
                    stoppedAt = change.sequence
                    return false
                }
                return true
            }
            // The file read must be the one the state described (another process may have
            // compacted it meanwhile: its numbers are the same, so read again).
            guard try fileSystem.status(of: file.path)?.identity == identity else { continue }
            return ChangePage(changes: found, through: stoppedAt ?? last)
        }
        throw .io(path: path(FileNames.index), operation: "read", message: "the file kept changing while it was read")
    }
}
