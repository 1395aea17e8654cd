/// What a store is told of its documents when it is opened: the fields a new folder projects into
/// its index, which of them hold long text, the fields full-text search reads with their weights,
/// and the side files that live beside the documents. The store itself knows nothing of any
/// particular kind of document; the NYT schema is defined by the NYT client.
public struct StoreSchema: Sendable, Equatable {
    /// The projection a new folder starts with (a folder keeps its own in `archivist.json`).
    public var projection: Projection
    /// Paths usually holding long text or lists: written last in an index line, so reading a short
    /// field (a section, a date, a count) stops early in each line.
    public var longPaths: Set<String>
    /// The fields full-text search reads, and their weights in the relevance score.
    public var textSearch: TextSearch
    /// Side files: small JSON files beside the documents that belong to the store's users (not
    /// documents, not indexed, not derived). `check` reports one that is not valid JSON, and
    /// `repair` leaves it alone.
    public var sideFiles: [String]

    /// A schema.
    public init(
        projection: Projection, longPaths: Set<String> = [], textSearch: TextSearch = TextSearch(fields: []),
        sideFiles: [String] = []
    ) {
        self.projection = projection
        self.longPaths = longPaths
        self.textSearch = textSearch
        self.sideFiles = sideFiles
    }

    /// No projected fields, no text search, no side files: queries read the documents.
    public static let plain = StoreSchema(projection: Projection(paths: []))
}
