extension DocumentStore {
    /// The bytes of an entry's projected fields (from memory, or read from the index file, which
    /// must be the one the entry was loaded from).
    func fieldsBytes(of entry: IndexEntry) throws(StoreError) -> [UInt8] {
        switch entry.fields {
        case .inline(let bytes):
            return bytes
        case .indexFile(let offset, let length):
            let indexPath = path(FileNames.index)
            guard let bytes = try fileSystem.contents(of: indexPath, from: offset, limit: length), bytes.count == length else {
                throw .io(path: indexPath, operation: "read", message: "the index changed while it was read")
            }
            return bytes
        }
    }

    /// Every live document's index entry with its projected fields, sorted by ID, read with one
    /// pass over the index file. A query layer builds its in-memory columns from this.
    public func projectedFields() throws(StoreError) -> (projection: Projection, entries: [(entry: IndexEntry, fields: JSONValue)]) {
        try state.withLock { (state: inout State) throws(StoreError) in
            for _ in 0..<5 {
                try self.refresh(&state)
                let indexPath = path(FileNames.index)
                let file = try fileSystem.contents(of: indexPath) ?? []
                // Another process may have replaced the index between the refresh and the read.
                guard try fileSystem.status(of: indexPath)?.identity == state.indexIdentity else { continue }
                var result: [(entry: IndexEntry, fields: JSONValue)] = []
                result.reserveCapacity(state.entries.count)
                for key in state.entries.keys.sorted() {
                    let entry = state.entries[key]!
                    var fields = JSONValue.object([])
                    switch entry.fields {
                    case .inline(let bytes):
                        fields = (try? JSONParser.parse(bytes)) ?? .object([])
                    case .indexFile(let offset, let length) where offset + length <= file.count:
                        fields = file.withUnsafeBufferPointer { buffer in
                            (try? JSONParser.parse(UnsafeBufferPointer(rebasing: buffer[offset..<(offset + length)]))) ?? .object([])
                        }
                    case .indexFile:
                        throw .io(path: indexPath, operation: "read", message: "the index is shorter than its entries say")
                    }
                    result.append((entry, fields))
                }
                return (state.projection, result)
            }
            throw .io(path: path(FileNames.index), operation: "read", message: "the file kept changing while it was read")
        }
    }
}
