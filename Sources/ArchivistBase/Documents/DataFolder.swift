/// A data folder as a program that fills it sees it: documents upserted in durable batches, and
/// the program's side files, read and replaced whole under the writers' lock.
///
/// The storage engine's `DocumentStore` is one. The NYT client (its harvester, archiver, request
/// ledger, saved searches and archive records) is written against this protocol, so it does not
/// depend on the engine.
public protocol DataFolder: Sendable {
    /// A batch of documents checked and encoded by `prepareUpsert(_:)`, ready to be committed.
    associatedtype PreparedUpsert: Sendable

    /// Adds or replaces documents in one durable batch, each under its `_id`; a document that
    /// cannot be stored is reported in its result and the others are stored.
    func upsert(_ documents: [JSONValue]) throws(StoreError) -> [UpsertResult]

    /// Checks and encodes documents for `upsert(_:)` without taking the writers' lock, so that the
    /// next batch can be prepared on another thread while one commits.
    func prepareUpsert(_ documents: [JSONValue]) -> PreparedUpsert

    /// Stores a batch made by `prepareUpsert(_:)` in one durable commit.
    func upsert(_ batch: PreparedUpsert) throws(StoreError) -> [UpsertResult]

    /// The contents of the side file `name`, or nil when it does not exist.
    func sideFile(named name: String) throws(StoreError) -> [UInt8]?

    /// Replaces the side file `name` with what `transform` makes of its current contents (nil when
    /// missing), holding the writers' lock from the read to the rename; a transform that returns
    /// nil, or throws, leaves the file as it is. Returns the contents left in place.
    @discardableResult
    func updateSideFile(
        named name: String, _ transform: ([UInt8]?) throws(StoreError) -> [UInt8]?
    ) throws(StoreError) -> [UInt8]?

    /// The path of the side file `name`, as messages show it.
    func sideFilePath(named name: String) -> String
}
