/// What an upsert did to one document.
public enum UpsertOutcome: String, Sendable, Equatable, CaseIterable {
    /// The ID was new.
    case added
    /// The document replaced a different one.
    case updated
    /// The same bytes were stored already; nothing was written.
    case unchanged
}
