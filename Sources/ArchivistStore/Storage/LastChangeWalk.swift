import ArchivistBase

/// Tells, for each line of a walk of the log in number order (`compact`, a `repair` that keeps
/// the numbers), whether the line is its ID's last change, without looking each ID up in the
/// segments: a look-up per line touches pages all over the segments' IDs, which would stay in the
/// process's memory (or cost a walk of every mapping to let go) in proportion to the store.
///
/// Instead the numbers of the segments' live records (documents and tombstones no newer segment
/// superseded) are read once, each segment's rows front to back, into two bitsets over a window
/// of `window` numbers; a line is its ID's last change when its number is in one of them. The
/// tail is in memory: an ID the tail changed is answered by `EntryTable.lastChange`, as is a
/// line numbered below the current window (a log out of number order) or any line when a
/// segment records no numbers (layouts before 4). What is held is two bitsets of at most
/// `defaultWindow` bits (8 MB), at any size of the store.
struct LastChangeWalk {
    /// The numbers a window spans, unless a test asks for fewer.
    static let defaultWindow = 1 << 25
    /// Rows read between two drops of a segment's resident pages.
    static let rowsBetweenDrops = 32_768

    private let entries: EntryTable
    /// The numbers a window spans.
    private let window: Int
    /// The first number of the current window.
    private var start = 0
    /// The live documents' and tombstones' numbers in the window (`number - start`); nil before
    /// the first window is read.
    private var documents: OrdinalSet?
    private var tombstones: OrdinalSet?
    /// A segment records no numbers: every line is looked up.
    private let isUnavailable: Bool

    /// A walk over the log that `entries` was read from, with windows of `window` numbers.
    init(_ entries: EntryTable, window: Int = Self.defaultWindow) {
        self.entries = entries
        self.window = max(1, window)
        isUnavailable = entries.segments.contains { !$0.mapped.isSegmentFile }
    }

    /// What a line is to its ID.
    enum Verdict: Equatable {
        /// A later change of the ID (or none) is its last.
        case superseded
        /// The line is the ID's last change: its live entry.
        case liveEntry
        /// The line is the ID's last change: its tombstone.
        case tombstone
    }

    /// What the line numbered `sequence` of `key` is to its ID.
    mutating func verdict(_ key: DocumentID, at sequence: Int) throws(SegmentDamage) -> Verdict {
        if !isUnavailable, !entries.isInTail(key), sequence > 0, try readWindow(holding: sequence) {
            let bit = sequence - start
            if documents!.contains(bit) { return .liveEntry }
            if tombstones!.contains(bit) { return .tombstone }
            return .superseded
        }
        guard let change = try entries.lastChange(key), change.sequence == sequence else { return .superseded }
        return change.isRemoval ? .tombstone : .liveEntry
    }

    /// Makes the window hold `sequence` when it is at or past the current one (reading the next
    /// window from the segments); false when it is below it.
    private mutating func readWindow(holding sequence: Int) throws(SegmentDamage) -> Bool {
        if documents != nil, sequence < start { return false }
        if documents != nil, sequence < start + window { return true }
        start = sequence
        var documents = OrdinalSet(capacity: window)
        var tombstones = OrdinalSet(capacity: window)
        let range = start..<(start + window)
        for segment in entries.segments {
            let mapped = segment.mapped
            var rows = 0
            for ordinal in 0..<mapped.count where !segment.isDeleted(ordinal) {
                let number = try mapped.sequence(at: ordinal)
                if range.contains(number) { documents.insert(number - start) }
                rows += 1
                if rows % Self.rowsBetweenDrops == 0 { mapped.reader.file.dropResidentPages() }
            }
            for index in 0..<mapped.tombstoneCount where !segment.isDeleted(mapped.count + index) {
                let number = try mapped.tombstoneSequence(at: index)
                if range.contains(number) { tombstones.insert(number - start) }
                rows += 1
                if rows % Self.rowsBetweenDrops == 0 { mapped.reader.file.dropResidentPages() }
            }
            mapped.reader.file.dropResidentPages()
        }
        self.documents = documents
        self.tombstones = tombstones
        return true
    }
}
