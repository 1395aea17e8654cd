/// What `repair` did.
public struct RepairReport: Sendable, Equatable {
    /// Files moved to the quarantine folder, relative to the data folder, with where they went.
    public var quarantined: [(from: String, to: String)]
    /// Documents moved to the file their `_id` calls for.
    public var moved: [(from: String, to: String)]
    /// Whether the index was rebuilt.
    public var rebuiltIndex: Bool
    /// Whether the rebuild numbered every document again (the old index was unreadable or
    /// missing, so no number could be kept): the changes feed then starts after every old number
    /// (`feedStart`), and a follower behind it must read the documents again. A rebuild from a
    /// readable index keeps every number.
    public var renumbered = false
    /// Where the changes feed starts after the repair (`DocumentStore.feedStart`).
    public var feedStart = 0
    /// The problems found before repairing.
    public var problems: [StoreProblem]
    /// The problems left after repairing, found by checking the folder again under the same lock
    /// (empty when the repair changed nothing and found nothing). Documents a rebuild in this
    /// repair read are not read a second time: the check takes what that read found.
    public var remaining: [StoreProblem] = []

    /// Compares reports.
    public static func == (lhs: RepairReport, rhs: RepairReport) -> Bool {
        lhs.quarantined.map { [$0.from, $0.to] } == rhs.quarantined.map { [$0.from, $0.to] }
            && lhs.moved.map { [$0.from, $0.to] } == rhs.moved.map { [$0.from, $0.to] }
            && lhs.rebuiltIndex == rhs.rebuiltIndex && lhs.renumbered == rhs.renumbered && lhs.feedStart == rhs.feedStart
            && lhs.problems == rhs.problems && lhs.remaining == rhs.remaining
    }
}
