/// What a store is told of its documents when it is opened: the fields a new folder projects into
/// its index, which of them hold long text, the fields full-text search reads with their weights,
/// the side files that live beside the documents, and the prefix most IDs share, which their file
/// names leave out. The store itself knows nothing of any
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
    /// The start of the IDs whose file names are kept short and readable: an ID made of this
    /// prefix, a type of lowercase ASCII letters, `/` and the rest is written in `docs/` as
    /// `TYPE~REST` (the NYT schema's `nyt://` makes `nyt://article/<uuid>` the file
    /// `article~<uuid>.json`); every other ID, and every ID when it is empty, is escaped whole
    /// (`docs/FORMAT.md`). Part of a folder's layout, so a new folder records it
    /// (`archivist.json`), and a folder opened later keeps its own whatever this says.
    public var idPrefix: String

    /// A schema.
    public init(
        projection: Projection, longPaths: Set<String> = [], textSearch: TextSearch = TextSearch(fields: []),
        sideFiles: [String] = [], idPrefix: String = ""
    ) {
        self.projection = projection
        self.longPaths = longPaths
        self.textSearch = textSearch
        self.sideFiles = sideFiles
        self.idPrefix = idPrefix
    }

    /// No projected fields, no text search, no side files, no ID prefix: queries read the documents.
    public static let plain = StoreSchema(projection: Projection(paths: []))
}
