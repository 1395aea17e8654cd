/// Where an entry's projected fields are kept.
public enum FieldsReference: Sendable, Equatable {
    /// The bytes themselves (not yet written to the index file).
    case inline([UInt8])
    /// A span of the current index file.
    case indexFile(offset: Int, length: Int)
}
