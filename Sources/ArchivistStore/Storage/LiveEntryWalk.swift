import ArchivistBase

/// The live entries of an `EntryTable` in the byte order of their IDs, each with the digest of
/// what its document file must hold: the segments' live records (`SegmentRecordWalk`, each
/// segment read front to back) with the tail's changes over them (a change in the tail
/// supersedes the segments' record of its ID; a removal there leaves no entry). `check` walks it
/// beside the documents sorted by ID, instead of looking each document up.
struct LiveEntryWalk {
    /// A live entry: its ID's bytes, and the digest of its document (nil: the entry cannot say,
    /// as one of a segment written before entries carried their fields' digest).
    struct Entry {
        var id: [UInt8]
        var digest: UInt64?
    }

    private var records: SegmentRecordWalk?
    /// The tail's changes, by ID: an entry, or nil for a removal.
    private let tail: [(id: [UInt8], entry: IndexEntry?)]
    private var position = 0
    /// The digest of a tail entry's document.
    private let digest: (IndexEntry) throws(StoreError) -> UInt64

    /// A walk over `table`'s live entries; `digest` gives a tail entry's document digest.
    init(_ table: EntryTable, digest: @escaping (IndexEntry) throws(StoreError) -> UInt64) throws(StoreError) {
        records = table.segments.isEmpty ? nil : try SegmentRecordWalk(table.segments)
        tail = table.overlay.map { (id: Array($0.key.rawValue.utf8), entry: $0.value) }.sorted { $0.id.lexicographicallyPrecedes($1.id) }
        self.digest = digest
    }

    /// The next live entry, or nil past the last.
    mutating func next() throws(StoreError) -> Entry? {
        while true {
            let record = try records?.current()
            if let record, record.kind == SegmentRecordWalk.Kind.removal {
                try records?.advance()
                continue
            }
            let change = position < tail.count ? tail[position] : nil
            if let record {
                let order = change.map { change in change.id.withUnsafeBytes { ValueOrder.compareBytes(record.id, $0) } } ?? -1
                if order < 0 {
                    let entry = Entry(id: Array(record.id), digest: record.document)
                    try records?.advance()
                    return entry
                }
                // The tail's change of the same ID supersedes the segments' record.
                if order == 0 { try records?.advance() }
            }
            guard let change else { return nil }
            position += 1
            guard let entry = change.entry else { continue }
            return Entry(id: change.id, digest: try digest(entry))
        }
    }
}
