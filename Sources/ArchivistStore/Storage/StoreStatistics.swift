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
    /// Index lines that `compact` drops: those that are not their ID's last change (superseded).
    public var deadEntries: Int
    /// IDs whose last change is a removal: their removal lines (tombstones) stay through
    /// `compact`, for the changes feed, until `compact(purgeRemovals: true)`.
    public var tombstones: Int = 0
    /// The folder's format version.
    public var formatVersion: Int
    /// The projected fields.
    public var projection: [String]
    /// The segments the store started from (nil: the store read the whole log).
    public var segments: [Segment]?
    /// Changes in the log after the segments (all of them when there are none).
    public var changesAfterSegments: Int = 0
    /// The highest sequence number given out (0 before the first change).
    public var lastSequence: Int = 0
    /// The changes feed is whole after this sequence number (0: since the folder began); moved
    /// only by `compact(purgeRemovals: true)` and a rebuild of an unreadable index.
    public var feedStart: Int = 0

    /// One segment file.
    public struct Segment: Sendable, Equatable {
        /// Its number.
        public var number: Int
        /// Its file, relative to the data folder.
        public var file: String
        /// Its size in bytes.
        public var bytes: Int
        /// The documents it holds.
        public var documents: Int
        /// How many of its documents newer changes superseded.
        public var deletedDocuments: Int
        /// The removals it records.
        public var tombstones: Int
        /// How many of its removals newer changes superseded.
        public var deletedTombstones: Int
        /// The lowest sequence number of its changes.
        public var firstSequence: Int
        /// The highest sequence number of its changes.
        public var lastSequence: Int
    }

    /// The bytes of every segment file.
    public var segmentBytes: Int { segments?.reduce(0) { $0 + $1.bytes } ?? 0 }
}
