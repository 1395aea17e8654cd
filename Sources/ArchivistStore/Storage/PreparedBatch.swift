import ArchivistBase

/// Documents checked and encoded for one durable batch (``DocumentStore/prepareUpsert(_:)``),
/// not yet stored: their results so far (the rejected ones final), the puts and their file bytes.
public struct PreparedBatch: Sendable {
    /// One result per document given, in order; the stored ones are settled by the commit.
    var results: [UpsertResult] = []
    /// The puts, in order.
    var operations: [DocumentStore.Operation] = []
    /// Where each put's result is in `results`.
    var positions: [Int] = []
    /// Each put's bytes, hash and index fields.
    var encoded: [DocumentStore.Encoded?] = []
    /// The projection the fields were encoded with.
    var projection = Projection(paths: [])

    /// The number of documents given.
    public var count: Int { results.count }
}
