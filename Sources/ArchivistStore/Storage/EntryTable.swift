import ArchivistBase

/// The live entries of a store: those of its segments (read in place from the mapped files) that
/// neither a newer segment nor the log after them supersedes, and those of the log lines after
/// the segments (the tail, in memory). Without segments every entry is in the tail, as read from
/// the whole log.
///
/// Opening a store costs what the log holds after its segments, not what the store holds; and
/// the copies in the segments that the tail's changes supersede are looked up only when an
/// answer needs them (the count, a query's live documents), not to read one document by ID.
struct EntryTable {
    /// The segments the table starts from, oldest first.
    private(set) var segments: [OpenSegment]
    /// Changes of the log after the segments: an ID's entry, or nil when it was removed.
    private(set) var overlay: [DocumentID: IndexEntry?] = [:]
    /// The removal lines of the tail (an ID whose overlay value is nil), for its tombstones.
    private(set) var removals: [DocumentID: ChangeLog.Removal] = [:]
    /// Per segment (by place in `segments`), the live documents the tail supersedes, as far as
    /// they were looked up: the keys of `unresolved` are not yet (`masks()`, `resolve()`).
    /// Empty (not one per segment) until the first is found: a process that never looks one up
    /// never makes a set of them.
    private var maskedSoFar: [Set<Int>] = []
    /// The number of live entries, less none for the keys of `unresolved` whose copy in the
    /// segments their change supersedes (`count`).
    private var countSoFar = 0
    /// Keys the tail changed while the table did not know whether a segment holds them live
    /// (their first change in the tail): what they supersede is looked up when it is asked.
    private var unresolved: [DocumentID] = []

    /// An empty table, or one holding the live entries of these segments.
    init(segments: [OpenSegment] = []) {
        self.segments = segments
        countSoFar = segments.reduce(0) { $0 + $1.liveDocuments }
    }

    /// Per segment (by place in `segments`), the live documents the tail supersedes: a look-up
    /// per change of the tail not resolved yet (`resolve()` keeps them).
    func masks() throws(SegmentDamage) -> [Set<Int>] {
        var masks = maskedSoFar.isEmpty ? [Set<Int>](repeating: [], count: segments.count) : maskedSoFar
        for case let (place, ordinal)? in try locateAll(unresolved) { masks[place].insert(ordinal) }
        return masks
    }

    /// The number of live entries: a look-up per change of the tail not resolved yet.
    var count: Int {
        get throws(SegmentDamage) {
            countSoFar - (try locateAll(unresolved).count { $0 != nil })
        }
    }

    /// The number of live entries as far as the tail's changes were resolved (`count` once
    /// `resolve()` ran): it changes whenever a change adds or removes an entry, for a cache key.
    var provisionalCount: Int { countSoFar }

    /// Looks up what the tail's changes supersede in the segments, once, so that `masks()` and
    /// `count` cost nothing more.
    mutating func resolve() throws(SegmentDamage) {
        guard !unresolved.isEmpty else { return }
        for case let (place, ordinal)? in try locateAll(unresolved) {
            if maskedSoFar.isEmpty { maskedSoFar = [Set<Int>](repeating: [], count: segments.count) }
            maskedSoFar[place].insert(ordinal)
            countSoFar -= 1
        }
        unresolved.removeAll()
    }

    /// Whether the table starts from segments.
    var hasSegments: Bool { !segments.isEmpty }

    /// Where an ID's live document is in the segments (never the tail): its segment's place and
    /// ordinal, or nil. (The tail's masks need not be consulted: a key the tail changed is
    /// answered from the tail, and an ordinal is masked only for the key the tail changed.)
    func locate(_ key: DocumentID) throws(SegmentDamage) -> (segment: Int, ordinal: Int)? {
        guard !segments.isEmpty else { return nil }
        // An ID a query just read from a segment (the documents of a listing): an ID has at most
        // one live document among the segments (a newer one's flush marks the older deleted), so
        // a live hinted ordinal is the one, without a filter probe per newer segment.
        for place in segments.indices {
            if let ordinal = try segments[place].mapped.hintedOrdinal(of: key.rawValue), !segments[place].isDeleted(ordinal) {
                return (place, ordinal)
            }
        }
        var id = key.rawValue
        let hash = id.withUTF8 { IDFilter.hash(UnsafeRawBufferPointer($0)) }
        // Newest first: an ID changed lately is most often found in a small segment.
        for place in segments.indices.reversed() {
            let segment = segments[place]
            guard try segment.mapped.mayContain(idHash: hash), let ordinal = try segment.mapped.ordinal(of: key.rawValue) else { continue }
            if segment.isDeleted(ordinal) { continue }
            return (place, ordinal)
        }
        return nil
    }

    /// Look-ups between drops of a segment's resident pages in `locateAll`.
    static let lookupsBetweenDrops = 1_024

    /// `locate` of many keys (a flush's, a count's), a segment at a time, newest first. When
    /// there are many, a segment's mapped pages are let go every `lookupsBetweenDrops` look-ups
    /// in it and after it (they stay in the page cache): what the look-ups touch (a checked
    /// 4 KiB block a probe, in the filter and the IDs) would otherwise stay counted in the
    /// process's memory for every segment at once, growing with the number of segments.
    func locateAll(_ keys: [DocumentID]) throws(SegmentDamage) -> [(segment: Int, ordinal: Int)?] {
        var found = [(segment: Int, ordinal: Int)?](repeating: nil, count: keys.count)
        guard !segments.isEmpty, !keys.isEmpty else { return found }
        let drops = keys.count >= Self.lookupsBetweenDrops
        let hashes = keys.map { key in
            var id = key.rawValue
            return id.withUTF8 { IDFilter.hash(UnsafeRawBufferPointer($0)) }
        }
        var pending = Array(keys.indices)
        for place in segments.indices.reversed() {
            let segment = segments[place]
            var missing: [Int] = []
            for (step, index) in pending.enumerated() {
                if drops, step > 0, step % Self.lookupsBetweenDrops == 0 { segment.mapped.reader.file.dropResidentPages() }
                if try segment.mapped.mayContain(idHash: hashes[index]), let ordinal = try segment.mapped.ordinal(of: keys[index].rawValue),
                    !segment.isDeleted(ordinal)
                {
                    found[index] = (place, ordinal)
                } else {
                    missing.append(index)
                }
            }
            if drops { segment.mapped.reader.file.dropResidentPages() }
            pending = missing
            if pending.isEmpty { break }
        }
        return found
    }

    /// The live entry of an ID, or nil.
    func entry(_ key: DocumentID) throws(SegmentDamage) -> IndexEntry? {
        if let change = overlay[key] { return change }
        guard let (place, ordinal) = try locate(key) else { return nil }
        return try segments[place].mapped.entry(at: ordinal)
    }

    /// The sequence number of an ID's last change the table knows of (its live entry's, or its
    /// tombstone's: the tail's removal or a segment's tombstone no newer change superseded), and
    /// whether it is a removal; nil when the table knows of none. A removal the tail holds
    /// without its line's number (never read from a line) answers 0.
    func lastChange(_ key: DocumentID) throws(SegmentDamage) -> (sequence: Int, isRemoval: Bool)? {
        if let change = overlay[key] {
            if let entry = change { return (entry.sequence, false) }
            return (removals[key]?.sequence ?? 0, true)
        }
        return try segmentRecord(key)
    }

    /// An ID's last change as the segments record it (ignoring the tail): its live document's
    /// number, or its tombstone's, the newest segment first.
    private func segmentRecord(_ key: DocumentID) throws(SegmentDamage) -> (sequence: Int, isRemoval: Bool)? {
        guard !segments.isEmpty else { return nil }
        var id = key.rawValue
        let hash = id.withUTF8 { IDFilter.hash(UnsafeRawBufferPointer($0)) }
        for segment in segments.reversed() {
            guard try segment.mapped.mayContain(idHash: hash) else { continue }
            if let ordinal = try segment.mapped.ordinal(of: key.rawValue), !segment.isDeleted(ordinal) {
                return (try segment.mapped.sequence(at: ordinal), false)
            }
            if let index = try segment.mapped.tombstoneIndex(of: id), !segment.isDeleted(segment.mapped.count + index) {
                return (try segment.mapped.tombstone(at: index).sequence, true)
            }
        }
        return nil
    }

    /// How many IDs' last change is a removal (the log's tombstones): the segments' live
    /// tombstones, less those the tail supersedes, plus the tail's removals. Costs a look-up
    /// per change of the tail.
    func tombstoneCount() throws(SegmentDamage) -> Int {
        var total = segments.reduce(0) { $0 + $1.record.tombstones - $1.record.deletedTombstones }
        for (key, change) in overlay {
            if change == nil { total += 1 }
            if try segmentRecord(key)?.isRemoval == true { total -= 1 }
        }
        return total
    }

    /// Sets (or, with nil, removes) the entry of an ID. A removal stays in the tail as a change
    /// (its tombstone, when the tail is flushed).
    mutating func set(_ key: DocumentID, _ entry: IndexEntry?) throws(SegmentDamage) {
        var wasLive = false
        if let change = overlay[key] {
            wasLive = change != nil
        } else if !segments.isEmpty {
            // Whether a segment holds it live is looked up when the count or a mask is asked.
            unresolved.append(key)
        }
        overlay[key] = .some(entry)
        if entry != nil { removals[key] = nil }
        countSoFar += (entry != nil ? 1 : 0) - (wasLive ? 1 : 0)
    }

    /// Changes the fields reference of a live in-memory entry (after its line is written).
    mutating func setFields(_ key: DocumentID, _ fields: FieldsReference) {
        if case .some(.some(var entry)) = overlay[key] {
            entry.fields = fields
            overlay[key] = .some(entry)
        }
    }

    /// Changes the sequence number of a live in-memory entry (after its line is written).
    mutating func setSequence(_ key: DocumentID, _ sequence: Int) {
        if case .some(.some(var entry)) = overlay[key] {
            entry.sequence = sequence
            overlay[key] = .some(entry)
        }
    }

    /// Applies a decoded index line: the last line for an ID wins.
    mutating func apply(_ line: ChangeLog.Line) throws(SegmentDamage) {
        switch line {
        case .entry(let entry):
            try set(DocumentID(entry.id), entry)
        case .removal(let removal):
            let key = DocumentID(removal.id)
            try set(key, nil)
            removals[key] = removal
        }
    }

    /// Records the line of a removal the store itself committed (its number and time).
    mutating func recordRemoval(_ removal: ChangeLog.Removal) {
        removals[DocumentID(removal.id)] = removal
    }

    /// Room for `count` entries in memory.
    mutating func reserveCapacity(_ count: Int) {
        overlay.reserveCapacity(count)
    }

    /// Lets the segments' mapped pages go from this process (they stay in the page cache): a pass
    /// that looks every ID up (`check`, a `repair` that keeps the numbers) calls it between
    /// batches, so that what its look-ups touched (a whole block the first time one is read, as
    /// it is verified) is not counted in its memory until the end, at any size of the store.
    func dropResidentPages() {
        for segment in segments { segment.mapped.reader.file.dropResidentPages() }
    }

    /// Whether the tail holds a change of `key` (an entry or a removal).
    func isInTail(_ key: DocumentID) -> Bool {
        overlay.index(forKey: key) != nil
    }

    /// How many changes the tail holds (entries and removals).
    var tailCount: Int { overlay.count }

    /// Every live entry, sorted by ID bytes (all in memory: for small stores and tests).
    func sorted() throws(SegmentDamage) -> [IndexEntry] {
        var result: [IndexEntry] = []
        result.reserveCapacity(try count)
        try forEachLive { entry in
            result.append(entry)
            return true
        }
        return result
    }

    /// Calls `body` with every live entry in ID byte order (a merge of the segments' and the
    /// tail's), until it returns false; holds one cursor per segment, not the entries. With
    /// `after`, only the entries whose ID comes after it (or is it, when `including`).
    func forEachLive(
        after: String? = nil, including: Bool = false, _ body: (IndexEntry) throws(SegmentDamage) -> Bool
    ) throws(SegmentDamage) {
        var tail = try changedEntries()
        if let after {
            tail.removeAll { entry in
                UTF8Bytes.precedes(entry.id, after) || (!including && !UTF8Bytes.precedes(after, entry.id))
            }
        }
        let masked = try masks()
        var cursors = try segments.indices.map { (place) throws(SegmentDamage) in
            try Cursor(segments[place], masked: masked[place], after: after, including: including)
        }
        var next = 0
        while true {
            var best: Int?
            for (index, cursor) in cursors.enumerated() where cursor.ordinal != nil {
                if let current = best {
                    if try cursor.precedes(cursors[current]) { best = index }
                } else {
                    best = index
                }
            }
            if next < tail.count {
                var tailFirst = true
                if let best, let id = try cursors[best].id() { tailFirst = UTF8Bytes.precedes(tail[next].id, id) }
                if tailFirst {
                    guard try body(tail[next]) else { return }
                    next += 1
                    continue
                }
            }
            guard let best else { return }
            guard try body(try cursors[best].entry()) else { return }
            try cursors[best].advance()
        }
    }

    /// A segment's live documents in ordinal (ID) order.
    private struct Cursor {
        let segment: OpenSegment
        let masked: Set<Int>
        var ordinal: Int?

        init(_ segment: OpenSegment, masked: Set<Int>, after: String? = nil, including: Bool = false) throws(SegmentDamage) {
            self.segment = segment
            self.masked = masked
            ordinal = -1
            if let after {
                // The last ordinal before where the listing starts: the cursor advances past it.
                let wanted = Array(after.utf8)
                var low = 0
                var high = segment.mapped.count
                while low < high {
                    let mid = (low + high) / 2
                    let candidate = try segment.mapped.idBytes(at: mid)
                    let order = wanted.withUnsafeBytes { ValueOrder.compareBytes(candidate, $0) }
                    if order < 0 || (order == 0 && !including) { low = mid + 1 } else { high = mid }
                }
                let lower = low
                ordinal = lower - 1
            }
            try advance()
        }

        mutating func advance() throws(SegmentDamage) {
            guard var at = ordinal else { return }
            at += 1
            while at < segment.mapped.count, segment.isDeleted(at) || masked.contains(at) { at += 1 }
            ordinal = at < segment.mapped.count ? at : nil
        }

        func id() throws(SegmentDamage) -> String? {
            guard let ordinal else { return nil }
            return try segment.mapped.id(at: ordinal)
        }

        func entry() throws(SegmentDamage) -> IndexEntry {
            try segment.mapped.entry(at: ordinal!)
        }

        func precedes(_ other: Cursor) throws(SegmentDamage) -> Bool {
            guard let mine = ordinal, let theirs = other.ordinal else { return ordinal != nil }
            return ValueOrder.compareBytes(try segment.mapped.idBytes(at: mine), try other.segment.mapped.idBytes(at: theirs)) < 0
        }
    }

    /// The live entries of the log after the segments (added or changed since), sorted by ID bytes.
    func changedEntries() throws(SegmentDamage) -> [IndexEntry] {
        var memory: [IndexEntry] = []
        memory.reserveCapacity(overlay.count)
        for case .some(let entry) in overlay.values { memory.append(entry) }
        return DocumentStore.sortedByID(memory)
    }

    /// The removals of the tail, sorted by ID bytes (the tombstones a flush writes).
    func tailRemovals() -> [ChangeLog.Removal] {
        var result: [ChangeLog.Removal] = []
        for (key, change) in overlay where change == nil {
            result.append(removals[key] ?? ChangeLog.Removal(id: key.rawValue))
        }
        return result.sorted { UTF8Bytes.precedes($0.id, $1.id) }
    }

    /// The sum of the live documents' sizes.
    func totalSize() throws(SegmentDamage) -> Int {
        var total = 0
        for case .some(let entry) in overlay.values { total += entry.size }
        let masked = try masks()
        for (place, segment) in segments.enumerated() {
            total += segment.liveBytes
            for ordinal in masked[place] { total -= try segment.mapped.size(at: ordinal) }
        }
        return total
    }
}
