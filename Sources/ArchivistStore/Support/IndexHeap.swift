/// A binary min-heap of small integers (the indexes of cursors), ordered by a comparison the
/// caller passes to each operation: the k-way merges of `SortedRuns` and `SegmentRecordWalk`
/// keep their cursors in one, so that taking the next record costs log k comparisons.
struct IndexHeap {
    /// The indexes, heap-ordered (the smallest first).
    private(set) var items: [Int] = []

    /// The smallest index, or nil when empty.
    var top: Int? { items.first }

    /// A heap of `items`, ordered by `less`.
    init<E: Error>(_ items: [Int], less: (Int, Int) throws(E) -> Bool) throws(E) {
        self.items = items
        for position in stride(from: items.count / 2 - 1, through: 0, by: -1) { try siftDown(position, less: less) }
    }

    /// Restores the order after the top's key grew (`exhausted`: its cursor is spent, and it
    /// leaves the heap).
    mutating func topChanged<E: Error>(exhausted: Bool, less: (Int, Int) throws(E) -> Bool) throws(E) {
        guard !items.isEmpty else { return }
        if exhausted {
            items[0] = items[items.count - 1]
            items.removeLast()
        }
        try siftDown(0, less: less)
    }

    private mutating func siftDown<E: Error>(_ from: Int, less: (Int, Int) throws(E) -> Bool) throws(E) {
        var parent = from
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { return }
            var child = left
            if left + 1 < items.count, try less(items[left + 1], items[left]) { child = left + 1 }
            guard try less(items[child], items[parent]) else { return }
            items.swapAt(child, parent)
            parent = child
        }
    }
}
