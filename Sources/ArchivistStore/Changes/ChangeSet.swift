/// The changes an observer hears of at once (Realm's change notification): the range of sequence
/// numbers they span, and the IDs inserted, modified and removed, each with its last change.
public struct ChangeSet: Sendable, Equatable {
    /// The changes, in sequence order (only those that match the observer's filter).
    public var changes: [Change]
    /// The sequence numbers read to make this set: after the previous set, through the last
    /// change committed when it was read (changes that did not match the filter included).
    public var sequences: ClosedRange<Int>

    /// A set of changes.
    public init(changes: [Change], sequences: ClosedRange<Int>) {
        self.changes = changes
        self.sequences = sequences
    }

    /// IDs new to an observer: first added in the set and not removed by its end.
    public var inserted: [String] { ids(.added) }
    /// IDs that were there before the set and are still there, changed.
    public var modified: [String] { ids(.updated) }
    /// IDs that were there before the set and are gone at its end.
    public var removed: [String] { ids(.removed) }

    /// IDs in the order of their first change, by what the set did to each as a whole; one added
    /// and removed within the set is none of the three.
    private func ids(_ kind: Change.Kind) -> [String] {
        var first: [String: Change.Kind] = [:]
        var last: [String: Change.Kind] = [:]
        var order: [String] = []
        for change in changes {
            if first[change.id] == nil {
                first[change.id] = change.kind
                order.append(change.id)
            }
            last[change.id] = change.kind
        }
        return order.filter { id in
            let (start, end) = (first[id]!, last[id]!)
            switch kind {
            case .added: return start == .added && end != .removed
            case .removed: return start != .added && end == .removed
            case .updated: return start != .added && end != .removed
            }
        }
    }
}
