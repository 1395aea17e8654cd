/// One thing `check` found wrong.
public struct StoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// The kinds of problem.
    public enum Kind: String, Sendable, CaseIterable {
        /// A document file is not valid JSON (or not an object).
        case unreadableDocument = "unreadable-document"
        /// A document file has no string `_id`.
        case missingID = "missing-id"
        /// A document file's `_id` belongs in another file.
        case misplacedDocument = "misplaced-document"
        /// The index lists a document whose file is gone.
        case missingDocument = "missing-document"
        /// A document file differs from what the index recorded.
        case changedDocument = "changed-document"
        /// A document file is not in the index.
        case unindexedDocument = "unindexed-document"
        /// The index file cannot be read.
        case unreadableIndex = "unreadable-index"
        /// A crashed writer's journal or temporary files remain.
        case unfinishedWrite = "unfinished-write"
        /// A side file (saved searches, the API request counter) is not valid JSON. `repair`
        /// leaves it for a person to fix: it is not derived data.
        case unreadableSideFile = "unreadable-side-file"
        /// The snapshot (`index.snapshot`, derived data) is damaged, or disagrees with the log.
        /// The store does not use it; `repair` writes a new one.
        case damagedSnapshot = "damaged-snapshot"
    }

    /// What kind of problem.
    public var kind: Kind
    /// The file concerned, relative to the data folder.
    public var file: String
    /// The document ID concerned, when known.
    public var id: String?
    /// What is wrong, in a few lowercase words.
    public var detail: String

    /// Creates a problem.
    public init(kind: Kind, file: String, id: String?, detail: String) {
        self.kind = kind
        self.file = file
        self.id = id
        self.detail = detail
    }

    /// `docs/ab/x.json: invalid JSON at byte 17`.
    public var description: String { "\(file): \(detail)" }
}
