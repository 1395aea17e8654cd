import ArchivistBase

/// What the index knows of one live document.
public struct IndexEntry: Sendable, Equatable {
    /// The document's ID.
    public var id: String
    /// FNV-1a 64 of the document file's bytes.
    public var hash: UInt64
    /// Size of the document file in bytes.
    public var size: Int
    /// When the document was first stored.
    public var storedAt: Timestamp
    /// When the document's content last changed.
    public var updatedAt: Timestamp
    /// Where the projected fields are: the compact JSON object of the index line
    /// (`{"headline.main":...}`), either in the index file or, until it is written there, in memory.
    ///
    /// Only a reference is kept: opening a large folder reads the index once and keeps no copy of
    /// the projection, so `stats`, `get` and `put` stay fast and small. Queries load the fields
    /// when they need them (`DocumentStore.queryIndex(loading:)`).
    public var fields: FieldsReference
    /// The sequence number of the change that made this entry (its index line's `seq`); 0 while
    /// it has none (an entry not yet written, or read from a snapshot of before segments).
    public var sequence: Int

    /// Creates an entry.
    public init(
        id: String, hash: UInt64, size: Int, storedAt: Timestamp, updatedAt: Timestamp, fields: FieldsReference, sequence: Int = 0
    ) {
        self.id = id
        self.hash = hash
        self.size = size
        self.storedAt = storedAt
        self.updatedAt = updatedAt
        self.fields = fields
        self.sequence = sequence
    }

    /// Whether two entries describe the same document content (ID, hash and size).
    func hasSameContent(as other: IndexEntry) -> Bool {
        id == other.id && hash == other.hash && size == other.size
    }
}
