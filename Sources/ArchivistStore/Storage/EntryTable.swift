/// The live entries of a store: those of the snapshot (read in place from the mapped file) that
/// no later line of the log supersedes, and those of the log lines after the snapshot (in memory).
/// Without a snapshot every entry is in memory, as read from the whole log.
///
/// Opening a store costs what the log holds after the snapshot, not what the store holds.
struct EntryTable {
    /// The snapshot the table starts from, if any.
    private(set) var snapshot: MappedSnapshot?
    /// Changes of the log after the snapshot: an ID's entry, or nil when it was removed.
    private(set) var overlay: [DocumentID: IndexEntry?] = [:]
    /// Snapshot ordinals the overlay supersedes or removes.
    private(set) var superseded: Set<Int> = []
    /// The number of live entries.
    private(set) var count = 0

    /// An empty table, or one holding a snapshot's entries.
    init(snapshot: MappedSnapshot? = nil) {
        self.snapshot = snapshot
        count = snapshot?.count ?? 0
    }

    /// The live entry of an ID, or nil.
    func entry(_ key: DocumentID) throws(SnapshotDamage) -> IndexEntry? {
        if let change = overlay[key] { return change }
        guard let snapshot, let ordinal = try snapshot.ordinal(of: key.rawValue) else { return nil }
        return try snapshot.entry(at: ordinal)
    }

    /// Sets (or, with nil, removes) the entry of an ID.
    mutating func set(_ key: DocumentID, _ entry: IndexEntry?) throws(SnapshotDamage) {
        guard snapshot != nil else {
            // All in memory: one hash lookup (this runs for every line of the log at open).
            if let entry {
                if overlay.updateValue(entry, forKey: key) == nil { count += 1 }
            } else if overlay.removeValue(forKey: key) != nil {
                count -= 1
            }
            return
        }
        let wasLive: Bool
        if let change = overlay[key] {
            wasLive = change != nil
        } else if let snapshot, let ordinal = try snapshot.ordinal(of: key.rawValue) {
            wasLive = !superseded.contains(ordinal)
            superseded.insert(ordinal)
        } else {
            wasLive = false
        }
        overlay[key] = .some(entry)
        count += (entry != nil ? 1 : 0) - (wasLive ? 1 : 0)
    }

    /// Changes the fields reference of a live in-memory entry (after its line is written).
    mutating func setFields(_ key: DocumentID, _ fields: FieldsReference) {
        if case .some(.some(var entry)) = overlay[key] {
            entry.fields = fields
            overlay[key] = .some(entry)
        }
    }

    /// Applies a decoded index line: the last line for an ID wins.
    mutating func apply(_ line: IndexFile.Line) throws(SnapshotDamage) {
        switch line {
        case .entry(let entry): try set(DocumentID(entry.id), entry)
        case .removal(let id): try set(DocumentID(id), nil)
        }
    }

    /// Room for `count` entries in memory.
    mutating func reserveCapacity(_ count: Int) {
        overlay.reserveCapacity(count)
    }

    /// Every live entry, sorted by ID bytes.
    func sorted() throws(SnapshotDamage) -> [IndexEntry] {
        let memory = try changedEntries()
        guard let snapshot else { return memory }
        var result: [IndexEntry] = []
        result.reserveCapacity(count)
        var next = 0
        for ordinal in 0..<snapshot.count where !superseded.contains(ordinal) {
            let entry = try snapshot.entry(at: ordinal)
            while next < memory.count, UTF8Bytes.precedes(memory[next].id, entry.id) {
                result.append(memory[next])
                next += 1
            }
            result.append(entry)
        }
        result.append(contentsOf: memory[next...])
        return result
    }

    /// The live entries of the log after the snapshot (added or changed since), sorted by ID bytes.
    func changedEntries() throws(SnapshotDamage) -> [IndexEntry] {
        var memory: [IndexEntry] = []
        memory.reserveCapacity(overlay.count)
        for case .some(let entry) in overlay.values { memory.append(entry) }
        return DocumentStore.sortedByID(memory)
    }

    /// The sum of the live documents' sizes.
    func totalSize() throws(SnapshotDamage) -> Int {
        var total = 0
        for case .some(let entry) in overlay.values { total += entry.size }
        guard let snapshot else { return total }
        // The snapshot's own total, less what the log after it superseded.
        total += snapshot.reader.documentBytes
        for ordinal in superseded { total -= try snapshot.entry(at: ordinal).size }
        return total
    }
}
