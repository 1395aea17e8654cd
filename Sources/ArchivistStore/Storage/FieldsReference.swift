/// Where an entry's projected fields are kept.
public enum FieldsReference: Sendable, Equatable {
    /// The bytes themselves (not yet written to the index file).
    case inline([UInt8])
    /// A span of the current index file.
    case indexFile(offset: Int, length: Int)
    /// In the index line of the entry's sequence number, found when needed (an entry read from a
    /// segment, which outlives the offsets of a rewritten log); `digest` is `WordHash` of the
    /// fields' bytes, what `check` compares.
    case logLine(digest: UInt64)
}
