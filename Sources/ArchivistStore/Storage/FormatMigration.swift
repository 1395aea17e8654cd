/// What opening a data folder of an older format did to bring it to the current one.
public struct FormatMigration: Sendable, Equatable, CustomStringConvertible {
    /// The format the folder had.
    public var from: Int
    /// The format it has now.
    public var to: Int
    /// The documents it holds (all kept).
    public var documents: Int
    /// Whether segments had to be built (false: ones covering the whole log were already there).
    public var builtSnapshot: Bool

    /// Creates a description of a migration.
    public init(from: Int, to: Int, documents: Int, builtSnapshot: Bool) {
        self.from = from
        self.to = to
        self.documents = documents
        self.builtSnapshot = builtSnapshot
    }

    /// One line for people, e.g. "migrated from format 3 to 4: built segments/ of 41 documents;
    /// every document and index.jsonl kept as they were".
    public var description: String {
        let built = builtSnapshot ? "built \(FileNames.segments)/ of \(Plural.count(documents, "document"))" : "kept \(FileNames.segments)/"
        return "migrated from format \(from) to \(to): \(built); every document and \(FileNames.index) kept as they were"
    }
}
