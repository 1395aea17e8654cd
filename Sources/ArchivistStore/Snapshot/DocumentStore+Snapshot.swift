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
        try state.withLock { (state: inout State) throws(StoreError) -> [UInt8] in
            try self.refresh(&state)
            return try self.snapshotBytes(&state)
        }
    }

    /// The bytes of a snapshot of `state`'s entries (every one's fields in the index file).
    func snapshotBytes(_ state: inout State) throws(StoreError) -> [UInt8] {
        let entries = try table(try state.entries.sorted())
        let coverage = try coverage(of: state.index)
        return try SnapshotBuilder.build(
            entries: entries, projection: state.projection, textSearch: schema.textSearch,
            columns: { (paths, positions) throws(StoreError) in
                try self.readColumns(paths, of: positions.count == entries.count ? entries : Array(entries[positions]), &state)
            },
            coverage: coverage, schemaHash: Self.schemaHash(projection: state.projection, textSearch: schema.textSearch))
    }

    /// Writes a snapshot of the state's entries (the lock held, every line of the index read),
    /// streamed to a file aside, synced and renamed into place; the state then starts from it.
    ///
    /// When the state starts from a snapshot, the new one is a merge of it with the changes after
    /// it (`SnapshotMerger`: the old structures are copied with the changes applied, and only the
    /// changed documents' index lines are read); otherwise it is built from every entry. A merge
    /// that finds the old snapshot damaged is not retried by every later writer: the state is read
    /// again from the log and the new snapshot built from it.
    func writeSnapshot(_ state: inout State) throws(StoreError) {
        do {
            try writeSnapshotFile(&state)
        } catch {
            guard case .damagedSnapshot = error, state.entries.snapshot != nil else { throw error }
            state.refusesSnapshot = true
            try reopen(&state, lockHeld: true)
            try writeSnapshotFile(&state)
        }
        // The snapshot in place now is the one just written.
        state.refusesSnapshot = false
    }

    /// Writes the snapshot file (merged or built) and starts the state from it.
    private func writeSnapshotFile(_ state: inout State) throws(StoreError) {
        let coverage = try coverage(of: state.index)
        let schemaHash = Self.schemaHash(projection: state.projection, textSearch: schema.textSearch)
        let temporary = try temporaryPath(for: FileNames.snapshot)
        try fileSystem.write([], to: temporary)
        let fileSystem = self.fileSystem
        // The writer gives a block (4 KiB) at a time: the file is appended to a MiB at a time.
        final class Pending: @unchecked Sendable { var bytes: [UInt8] = [] }
        let pending = Pending()
        func flush() throws(StoreError) {
            guard !pending.bytes.isEmpty else { return }
            try fileSystem.append(pending.bytes, to: temporary)
            pending.bytes.removeAll(keepingCapacity: true)
        }
        var writer = SnapshotWriter { (bytes) throws(StoreError) in
            pending.bytes.append(contentsOf: bytes)
            if pending.bytes.count >= 1 << 20 { try flush() }
        }
        if let old = state.entries.snapshot, old.paths == state.projection.paths {
            let added = try table(try state.entries.changedEntries())
            try SnapshotMerger.merge(
                old, superseded: state.entries.superseded, added: added, into: &writer, projection: state.projection,
                textSearch: schema.textSearch,
                columns: { (paths, positions) throws(StoreError) in
                    try self.readColumns(paths, of: positions.count == added.count ? added : Array(added[positions]), &state)
                },
                coverage: coverage, schemaHash: schemaHash)
        } else {
            let entries = try table(try state.entries.sorted())
            let index = state.index
            let columns: SnapshotBuilder.Columns = { (paths, positions) throws(StoreError) in
                try self.readColumns(paths, of: positions.count == entries.count ? entries : Array(entries[positions]), index: index)
            }
            try SnapshotBuilder.build(
                into: &writer, entries: entries, projection: state.projection, textSearch: schema.textSearch,
                columns: columns, textColumns: columns, coverage: coverage, schemaHash: schemaHash)
        }
        try flush()
        try install(temporary, as: FileNames.snapshot)
        if let file = try fileSystem.mappedContentsForRandomReads(of: path(FileNames.snapshot)),
            let loaded = try? MappedSnapshot(SnapshotReader(file))
        {
            state.entries = EntryTable(snapshot: loaded)
        }
    }

    /// Writes a new snapshot of the index now (under the writers' lock), so that opening the store
    /// reads nothing of the log; with `ifDue`, only when the log after the current snapshot has
    /// grown past the merge threshold.
    public func merge(ifDue: Bool = false) throws(StoreError) {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            if ifDue, state.entries.overlay.count < max(1, options.mergeThreshold) { return }
            try self.writeSnapshot(&state)
        }
    }

    /// Why the last automatic merge failed, or nil (such a failure does not fail the write it
    /// followed; the next writer tries again).
    public var lastMergeFailure: StoreError? {
        state.withLock { $0.lastMergeFailure }
    }

    /// Whether writes wait for `merge()` to write a new snapshot (a bulk import sets it for its
    /// batches, then merges once).
    public var defersMerges: Bool {
        get { state.withLock { $0.deferMerges } }
        set { state.withLock { $0.deferMerges = newValue } }
    }

    /// Writes a new snapshot when the log after the current one has grown past the merge
    /// threshold (the lock held). A failure leaves the old snapshot, which stays correct.
    func mergeIfDue(_ state: inout State) {
        // The threshold grows with the snapshot (a sixteenth of it), so merging a large store is
        // paid for by as many writes as it costs.
        let threshold = max(options.mergeThreshold, (state.entries.snapshot?.count ?? 0) / 16)
        guard options.mergeThreshold > 0, state.entries.overlay.count >= threshold, !state.deferMerges else { return }
        do {
            try writeSnapshot(&state)
            state.lastMergeFailure = nil
        } catch {
            // The commit before it stands: a snapshot is only ever an accelerator.
            state.lastMergeFailure = error
        }
    }

    /// The snapshot in the folder, mapped, when it holds the index as it is: built with this
    /// projection and text search, of this index file (identity, and the same bytes before the
    /// offset it covers); nil otherwise (missing, stale, foreign or damaged: derived data, rebuilt
    /// by the next writer).
    func currentSnapshot(projection: Projection) throws(StoreError) -> MappedSnapshot? {
        guard let file = try fileSystem.mappedContentsForRandomReads(of: path(FileNames.snapshot)),
            let reader = try? SnapshotReader(file), let snapshot = try? MappedSnapshot(reader),
            reader.schemaHash == Self.schemaHash(projection: projection, textSearch: schema.textSearch),
            snapshot.paths == projection.paths,
            let status = try fileSystem.status(of: indexFile.path), status.identity == reader.coverage.identity,
            status.size >= reader.coverage.offset
        else { return nil }
        let position = IndexFile.Position(
            identity: reader.coverage.identity, consumed: reader.coverage.offset, lines: reader.coverage.lines,
            sequence: reader.coverage.sequence)
        guard try coverage(of: position).tailHash == reader.coverage.tailHash else { return nil }
        return snapshot
    }

    /// What a snapshot made at `position` of the index file covers.
    func coverage(of position: IndexFile.Position) throws(StoreError) -> SnapshotFile.Coverage {
        let start = max(0, position.consumed - SnapshotFile.Coverage.tailLength)
        let tail = try fileSystem.contents(of: indexFile.path, from: start, limit: position.consumed - start) ?? []
        return SnapshotFile.Coverage(
            identity: position.identity ?? 0, offset: position.consumed, lines: position.lines,
            tailHash: WordHash.hash(tail), sequence: position.sequence)
    }

    /// What is wrong with the snapshot, for `check`: every block is read against its checksum,
    /// and a current snapshot's entries are compared with what the log says up to the point it
    /// covers. A stale snapshot is not a problem: the store does not use it.
    func snapshotProblems(projection: Projection) throws(StoreError) -> [StoreProblem] {
        guard let file = try fileSystem.mappedContentsForRandomReads(of: path(FileNames.snapshot)) else { return [] }
        func problem(_ detail: String) -> [StoreProblem] {
            [
                StoreProblem(
                    kind: .damagedSnapshot, file: FileNames.snapshot, id: nil, detail: detail + " (derived data: repair writes a new one)")
            ]
        }
        let snapshot: MappedSnapshot
        do throws(SnapshotDamage) {
            let reader = try SnapshotReader(file)
            snapshot = try MappedSnapshot(reader)
        } catch {
            return problem(error.description)
        }
        let snapshotPath = path(FileNames.snapshot)
        if let damage = try snapshot.reader.verifyAll(reading: { (offset, count) throws(StoreError) in
            try fileSystem.contents(of: snapshotPath, from: offset, limit: count)
        }) {
            return problem(damage.description)
        }
        guard try currentSnapshot(projection: projection) != nil else { return [] }
        // What the log says of each ID up to the covered point, as one 64-bit digest of the entry
        // per 64-bit hash of the ID: some 40 MB at a million documents, where the entries would
        // take hundreds. Two live IDs with the same hash make the counts differ: a problem
        // reported, never one missed.
        var position = IndexFile.Position()
        var fromLog: [Int: Int] = [:]
        fromLog.reserveCapacity(snapshot.count)
        let load = try indexFile.readAll(
            into: &position, upTo: snapshot.reader.coverage.offset, reset: { fromLog = [:] },
            apply: { line in
                switch line {
                case .entry(let entry): fromLog[Self.idDigest(entry.id)] = Self.entryDigest(entry)
                case .removal(let id): fromLog[Self.idDigest(id)] = nil
                }
            })
        guard load == .loaded, position.consumed == snapshot.reader.coverage.offset, position.lines == snapshot.reader.coverage.lines,
            position.sequence == snapshot.reader.coverage.sequence
        else {
            return problem("the log does not read to the point the snapshot covers")
        }
        guard fromLog.count == snapshot.count else {
            return problem("holds \(Plural.count(snapshot.count, "document")), the log \(fromLog.count) at the point it covers")
        }
        do throws(SnapshotDamage) {
            var previous: [UInt8] = []
            for ordinal in 0..<snapshot.count {
                let entry = try snapshot.entry(at: ordinal)
                let bytes = Array(entry.id.utf8)
                guard ordinal == 0 || previous.lexicographicallyPrecedes(bytes) else {
                    return problem("entry \(ordinal) (ID \(StoreError.quote(entry.id))) is out of ID order")
                }
                guard fromLog[Self.idDigest(entry.id)] == Self.entryDigest(entry) else {
                    return problem("entry \(ordinal) (ID \(StoreError.quote(entry.id))) differs from the log")
                }
                previous = bytes
            }
        } catch {
            return problem(error.description)
        }
        return []
    }

    /// A hash of an ID's bytes (not of its Unicode form, which would equate IDs `=` tells apart).
    static func idDigest(_ id: String) -> Int {
        var id = id
        var hasher = Hasher()
        id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        return hasher.finalize()
    }

    /// A hash of everything an entry says: its ID, file hash, size, times and fields.
    static func entryDigest(_ entry: IndexEntry) -> Int {
        var hasher = Hasher()
        hasher.combine(idDigest(entry.id))
        hasher.combine(entry.hash)
        hasher.combine(entry.size)
        hasher.combine(entry.storedAt.milliseconds)
        hasher.combine(entry.updatedAt.milliseconds)
        switch entry.fields {
        case .inline(let bytes):
            hasher.combine(0)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        case .indexFile(let offset, let length):
            hasher.combine(1)
            hasher.combine(offset)
            hasher.combine(length)
        }
        return hasher.finalize()
    }
}
