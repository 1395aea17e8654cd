extension DocumentStore {
    /// The checksum of what a snapshot's structures depend on besides the documents: the projected
    /// paths and the text fields with their weights.
    static func schemaHash(projection: Projection, textSearch: TextSearch) -> UInt64 {
        var text = "projection\n" + projection.paths.joined(separator: "\n") + "\ntext\n"
        for field in textSearch.fields { text += field.path + "=" + String(field.weight.bitPattern) + "\n" }
        return WordHash.hash(Array(text.utf8))
    }

    /// The bytes of a snapshot of the documents as the index holds them now: every entry whose
    /// fields are in the index file, covering the file up to what has been read of it.
    func snapshotBytes() throws(StoreError) -> [UInt8] {
        let index = try queryIndex(loading: Set(projection.paths))
        let columns = index.columns
        return try state.withLock { (state: inout State) throws(StoreError) -> [UInt8] in
            let coverage = try self.coverage(of: state.index)
            return SnapshotBuilder.build(
                entries: index.entries, projection: index.projection, textSearch: index.textSearch,
                columns: columns, coverage: coverage,
                schemaHash: Self.schemaHash(projection: index.projection, textSearch: index.textSearch))
        }
    }

    /// What a snapshot made at `position` of the index file covers.
    func coverage(of position: IndexFile.Position) throws(StoreError) -> SnapshotFile.Coverage {
        let start = max(0, position.consumed - SnapshotFile.Coverage.tailLength)
        let tail = try fileSystem.contents(of: indexFile.path, from: start, limit: position.consumed - start) ?? []
        return SnapshotFile.Coverage(
            identity: position.identity ?? 0, offset: position.consumed, lines: position.lines,
            tailHash: WordHash.hash(tail))
    }
}
