import ArchivistBase

/// Side files: small JSON files that live in the data folder beside the documents (saved searches,
/// the API request counter). They are not documents and are not indexed; they are written whole,
/// atomically and durably, under the writers' lock, so concurrent processes never lose an update.
extension DocumentStore {
    /// The contents of the side file `name` (one of the schema's side files), or nil when it
    /// does not exist.
    public func sideFile(named name: String) throws(StoreError) -> [UInt8]? {
        try fileSystem.contents(of: path(name))
    }

    /// Replaces the side file `name` with what `transform` makes of its current contents (nil when
    /// missing), holding the writers' lock from the read to the rename. Returning nil leaves the
    /// file as it is. A transform that throws leaves it as it is too.
    @discardableResult
    public func updateSideFile(
        named name: String,
        _ transform: ([UInt8]?) throws(StoreError) -> [UInt8]?
    ) throws(StoreError) -> [UInt8]? {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        let current = try fileSystem.contents(of: path(name))
        guard let replacement = try transform(current) else { return current }
        try writeDurably(replacement, to: name)
        return replacement
    }

    /// The path of the side file `name`, as messages show it.
    public func sideFilePath(named name: String) -> String {
        path(name)
    }

    /// The side files that are not valid JSON.
    func sideFileProblems() throws(StoreError) -> [StoreProblem] {
        var problems: [StoreProblem] = []
        for name in schema.sideFiles {
            guard let bytes = try fileSystem.contents(of: path(name)) else { continue }
            do {
                _ = try JSONParser.parse(bytes)
            } catch {
                problems.append(
                    StoreProblem(
                        kind: .unreadableSideFile, file: name, id: nil,
                        detail: "\(error) (not derived data: repair leaves it; fix or remove it by hand)"))
            }
        }
        return problems
    }
}
