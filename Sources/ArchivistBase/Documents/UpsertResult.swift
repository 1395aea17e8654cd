/// The result of upserting one document of a batch.
public struct UpsertResult: Sendable, Equatable {
    /// The document's ID, when it had or was given one.
    public var id: String?
    /// What happened, or why the document was refused.
    public var outcome: Result<UpsertOutcome, StoreError>

    /// Creates a result.
    public init(id: String?, outcome: Result<UpsertOutcome, StoreError>) {
        self.id = id
        self.outcome = outcome
    }
}
