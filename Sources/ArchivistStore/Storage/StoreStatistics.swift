/// What `stats` reports.
public struct StoreStatistics: Sendable, Equatable {
    /// Live documents.
    public var documents: Int
    /// Bytes of all live document files.
    public var documentBytes: Int
    /// Bytes of the index file.
    public var indexBytes: Int
    /// Lines in the index file.
    public var indexLines: Int
    /// Index lines that no longer describe a live document (superseded or removed).
    public var deadEntries: Int
    /// The folder's format version.
    public var formatVersion: Int
    /// The projected fields.
    public var projection: [String]
    /// Bytes of the snapshot file (0 when there is none).
    public var snapshotBytes: Int = 0
    /// Documents the snapshot the store started from holds (nil: the store read the whole log).
    public var snapshotDocuments: Int?
    /// Changes in the log after that snapshot (all of them when there is none).
    public var changesAfterSnapshot: Int = 0
    /// The highest sequence number given out (0 before the first change).
    public var lastSequence: Int = 0
    /// The changes feed is whole after this sequence number (0: since the folder began).
    public var feedStart: Int = 0
}
