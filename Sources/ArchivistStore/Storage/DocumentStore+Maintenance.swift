import Foundation

extension DocumentStore {
    /// Counts of the folder.
    public func statistics() throws(StoreError) -> StoreStatistics {
        try withState { (state: inout State) throws(StoreError) -> StoreStatistics in
            try self.refresh(&state)
            let indexBytes = try fileSystem.status(of: path(FileNames.index))?.size ?? 0
            let bytes = try self.table(try state.entries.totalSize())
            var statistics = StoreStatistics(
                documents: state.entries.count, documentBytes: bytes, indexBytes: indexBytes,
                indexLines: state.index.lines, deadEntries: state.index.lines - state.entries.count,
                formatVersion: state.metadata.format, projection: state.projection.paths)
            statistics.snapshotBytes = try fileSystem.status(of: path(FileNames.snapshot))?.size ?? 0
            statistics.snapshotDocuments = state.entries.snapshot?.count
            statistics.changesAfterSnapshot = state.index.lines - (state.entries.snapshot?.reader.coverage.lines ?? 0)
            statistics.lastSequence = state.lastSequence
            statistics.feedStart = state.metadata.feedStart
            return statistics
        }
    }

    /// Rewrites the index with one line per live document, dropping superseded and removed ones.
    /// Returns how many dead lines were dropped.
    @discardableResult
    public func compact() throws(StoreError) -> Int {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try withState(lockHeld: true) { (state: inout State) throws(StoreError) -> Int in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            let dead = state.index.lines - state.entries.count
            try self.writeIndex(&state)
            return dead
        }
    }

    /// Replaces the index file with the state's entries (in sequence order), atomically and
    /// durably. Entries read from the log keep their sequence numbers; rebuilt ones get new ones.
    /// The metadata is written first with the highest number given out (the floor, which the
    /// dropped lines may have held) and where the feed starts now: after the removals dropped, or
    /// with `renumbered` (a rebuild from the documents), after every number of the old file.
    func writeIndex(_ state: inout State, renumbered: Bool = false) throws(StoreError) {
        let sorted = try table(try state.entries.sorted())
        let highest = state.lastSequence
        let rewrite = try indexFile.rewrite(sorted, floor: highest)
        let lines = rewrite.batch
        var metadata = state.metadata
        metadata.sequenceFloor = max(metadata.sequenceFloor, highest, lines.lastSequence)
        metadata.feedStart = max(metadata.feedStart, renumbered ? lines.nextSequence - 1 - lines.count : rewrite.droppedRemovals)
        if metadata != state.metadata {
            // A crash between the two renames leaves a floor and a feed start that are too high
            // for the old file: numbers are skipped, never given twice.
            try writeDurably(metadata.encoded(), to: FileNames.metadata)
            state.metadata = metadata
        }
        try writeDurably(lines.bytes, to: FileNames.index)
        state.index = IndexFile.Position(
            identity: try fileSystem.status(of: indexFile.path)?.identity,
            consumed: lines.bytes.count, lines: lines.count, sequence: lines.lastSequence)
        var entries = EntryTable()
        entries.reserveCapacity(sorted.count)
        for (entry, span) in zip(rewrite.entries, lines.fieldSpans) {
            var moved = entry
            moved.fields = FieldsReference.indexFile(offset: span.offset, length: span.length)
            try? entries.set(span.id, moved)
        }
        state.entries = entries
        // The old snapshot covered the old file: a new one starts from the new file.
        if options.mergeThreshold > 0 { try writeSnapshot(&state) }
    }

    /// A document file found by scanning the documents folder.
    struct ScannedFile {
        enum Content {
            case document(IndexEntry)
            case unreadable(String)
            case missingID
            case misplaced(id: String)
        }
        var file: String
        var content: Content
    }

    /// Reads every document file under `docs/` (files the store does not own are skipped). An
    /// entry keeps the first-stored time `known` has for its ID, and its updated time too when its
    /// hash is the one `known` recorded (else the file's modification time is when it changed).
    func scanDocuments(projection: Projection, known: EntryTable?) throws(StoreError) -> [ScannedFile] {
        var scanned: [ScannedFile] = []
        try scanDocuments(projection: projection, known: known) { (_, files) throws(StoreError) in scanned.append(contentsOf: files) }
        return scanned
    }

    /// The buckets of `docs/`, sorted.
    func documentBuckets() throws(StoreError) -> [String] {
        var buckets: [String] = []
        for bucket in (try fileSystem.entries(ofFolder: path(FileNames.documents)) ?? []).sorted() where FileNames.isBucket(bucket) {
            if try fileSystem.status(of: path(FileNames.documents + "/" + bucket))?.isFolder == true { buckets.append(bucket) }
        }
        return buckets
    }

    /// Reads the document files a bucket at a time, handing each bucket's to `visit` (so only one
    /// bucket's files are in memory at once), sorted by name.
    ///
    /// A bucket's files are read in the order of their inode numbers (the order the file system
    /// laid them out, as tar's and git's readers do), several at a time (`ConcurrentReads`): a
    /// cold disk then serves them at its rate, not at one read's latency, and the parsing shares
    /// the cores. `known` gives the first-stored and updated times of a rebuild; `check`, which
    /// compares only contents, passes nil (no look-up per file).
    func scanDocuments(
        projection: Projection, known: EntryTable?, visit: (_ bucket: String, _ files: [ScannedFile]) throws(StoreError) -> Void
    ) throws(StoreError) {
        for bucket in try documentBuckets() {
            let bucketPath = FileNames.documents + "/" + bucket
            let names = (try fileSystem.inodeEntries(ofFolder: path(bucketPath)) ?? [])
                .filter { $0.name.hasSuffix(FileNames.documentExtension) && !$0.name.hasPrefix(".") }
                .sorted { $0.inode != $1.inode ? $0.inode < $1.inode : UTF8Bytes.precedes($0.name, $1.name) }
            let results = ConcurrentReads.shared.map(names.count) { i -> Result<ScannedFile?, StoreError> in
                do throws(StoreError) {
                    return .success(try self.scanDocument(bucketPath + "/" + names[i].name, projection: projection, known: known))
                } catch {
                    return .failure(error)
                }
            }
            var scanned: [ScannedFile] = []
            scanned.reserveCapacity(results.count)
            for result in results {
                if let file = try result.get() { scanned.append(file) }
            }
            scanned.sort { UTF8Bytes.precedes($0.file, $1.file) }
            try visit(bucket, scanned)
        }
    }

    /// What a document file holds, or nil when it is gone.
    private func scanDocument(_ relative: String, projection: Projection, known: EntryTable?) throws(StoreError) -> ScannedFile? {
        let bytes: [UInt8]
        do {
            guard let read = try documentFile(relative) else { return nil }
            bytes = read
        } catch {
            // A FIFO, a device or a folder in a document's place is a problem of that file
            // (never read, never waited on), not the end of the scan.
            guard case .io(_, "read", let message) = error else { throw error }
            return ScannedFile(file: relative, content: .unreadable(message))
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            return ScannedFile(file: relative, content: .unreadable(error.description))
        }
        guard document.isObject else {
            return ScannedFile(file: relative, content: .unreadable("a document must be a JSON object, not \(document.typeName)"))
        }
        guard case .string(let id)? = document["_id"], DocumentStore.problem(withID: id) == nil else {
            return ScannedFile(file: relative, content: .missingID)
        }
        guard FileNames.documentPath(for: id) == relative else { return ScannedFile(file: relative, content: .misplaced(id: id)) }
        let modified = known == nil ? Timestamp(milliseconds: 0) : try fileSystem.status(of: path(relative))?.modified ?? .now()
        let hash = FNV1a64.hash(bytes)
        let previous = try known.flatMap { (known) throws(StoreError) in try table(try known.entry(DocumentID(id))) }
        let entry = IndexEntry(
            id: id, hash: hash, size: bytes.count,
            storedAt: previous?.storedAt ?? modified,
            updatedAt: previous.flatMap { $0.hash == hash ? $0.updatedAt : nil } ?? modified,
            fields: .inline(projection.fieldsJSON(of: document)))
        return ScannedFile(file: relative, content: .document(entry))
    }

    /// Replaces the entries with ones derived from the documents; with `persist`, also the file
    /// (with `keepingOldIndex`, the old index file is first copied to the quarantine folder).
    func rebuildEntries(_ state: inout State, persist: Bool, keepingOldIndex: Bool = false) throws(StoreError) {
        let scanned = try scanDocuments(projection: state.projection, known: state.entries)
        state.entries = EntryTable()
        for file in scanned {
            if case .document(let entry) = file.content { try? state.entries.set(DocumentID(entry.id), entry) }
        }
        guard persist else {
            state.index.lines = state.entries.count
            return
        }
        let indexPath = path(FileNames.index)
        if keepingOldIndex, try fileSystem.status(of: indexPath) != nil {
            // Copied a chunk at a time: an unreadable index may be gigabytes of anything.
            let folderName = FileNames.quarantine + "/" + Timestamp.now().compactName
            try fileSystem.createFolder(path(folderName))
            let copy = path(folderName + "/" + FileNames.index)
            try fileSystem.write([], to: copy)
            var offset = 0
            while let chunk = try fileSystem.contents(of: indexPath, from: offset, limit: 16 << 20), !chunk.isEmpty {
                try fileSystem.append(chunk, to: copy)
                offset += chunk.count
            }
        }
        try writeIndex(&state, renumbered: true)
    }

    /// Compares the documents with the index. Reads every document file.
    ///
    /// Never waits for a writer. While another process commits a batch, its documents may be in
    /// place before their index lines: those named in its journal are not problems, and anything
    /// found is confirmed by a second pass after picking up the writer's progress.
    /// `progress`, when given, hears how many of the document buckets are read (of how many).
    public func check(progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws(StoreError) -> [StoreProblem] {
        try checkDocuments(progress: progress) + sideFileProblems() + snapshotProblems(projection: projection)
    }

    private func checkDocuments(progress: ((Int, Int) -> Void)?) throws(StoreError) -> [StoreProblem] {
        if let lock = try? fileSystem.lockExclusively(path(FileNames.lock), timeout: 0) {
            defer { lock.release() }
            return try withState(lockHeld: true) { (state: inout State) throws(StoreError) -> [StoreProblem] in
                try self.refresh(&state, lockHeld: true)
                return try self.checkLocked(&state, writerActive: false, progress: progress)
            }
        }
        return try withState { (state: inout State) throws(StoreError) -> [StoreProblem] in
            try self.refresh(&state)
            let journalBefore = try self.journalIDs()
            let first = try self.checkLocked(&state, writerActive: true, progress: progress)
            if first.isEmpty { return [] }
            try self.refresh(&state)
            let inFlight = journalBefore.union(try self.journalIDs())
            let second = try self.checkLocked(&state, writerActive: true)
            return second.filter { problem in
                first.contains { $0.kind == problem.kind && $0.file == problem.file }
                    && !(problem.id.map { inFlight.contains(DocumentID($0)) } ?? false)
            }
        }
    }

    /// The IDs named in the journal of a batch being written (empty when there is none).
    func journalIDs() throws(StoreError) -> Set<DocumentID> {
        try journal.read() ?? []
    }

    func checkLocked(_ state: inout State, writerActive: Bool, progress: ((Int, Int) -> Void)? = nil) throws(StoreError) -> [StoreProblem] {
        var problems: [StoreProblem] = []
        if case .unreadable(let line, let reason)? = try indexReadability(metadata: state.metadata) {
            problems.append(StoreProblem(kind: .unreadableIndex, file: FileNames.index, id: nil, detail: "line \(line): \(reason)"))
        }
        // The index's entries by bucket, so each bucket's files are compared with its entries and
        // dropped: memory stays that of one bucket, whatever the store's size. A bucket holds
        // where its entries are (a snapshot ordinal, or -1 - k for the k-th entry changed after
        // it), not the entries: a million of those would be a few hundred MB.
        let changed = try table(try state.entries.changedEntries())
        let snapshot = state.entries.snapshot
        let superseded = state.entries.superseded
        var byBucket: [String: [Int32]] = [:]
        if let snapshot {
            for ordinal in 0..<snapshot.count where !superseded.contains(ordinal) {
                byBucket[FileNames.bucket(for: try table(try snapshot.id(at: ordinal))), default: []].append(Int32(ordinal))
            }
        }
        for (k, entry) in changed.enumerated() { byBucket[FileNames.bucket(for: entry.id), default: []].append(-1 - Int32(k)) }
        func entries(_ places: [Int32]) throws(StoreError) -> [IndexEntry] {
            var result: [IndexEntry] = []
            result.reserveCapacity(places.count)
            for place in places {
                if place < 0 {
                    result.append(changed[Int(-1 - place)])
                } else if let snapshot {
                    result.append(try table(try snapshot.entry(at: Int(place))))
                }
            }
            return result
        }
        let buckets = try documentBuckets()
        var done = 0
        // The entries' fields are read from one mapping of the log, read ahead in order: a read
        // of each entry's line where it lies would be a random read of the disk per document.
        let log = try fileSystem.mappedContents(of: indexFile.path) ?? FileBytes([])
        try scanDocuments(projection: state.projection, known: nil) { (bucket, files) throws(StoreError) in
            try compare(files, with: try entries(byBucket.removeValue(forKey: bucket) ?? []), log: log, into: &problems)
            done += 1
            progress?(done, buckets.count)
        }
        // Entries of buckets without a folder: their files are all missing.
        for places in byBucket.values {
            try compare([], with: try entries(places), log: log, into: &problems)
        }
        let journalExists = try journal.exists
        let temporaries = try fileSystem.entries(ofFolder: path(FileNames.temporary)) ?? []
        if !writerActive && (journalExists || !temporaries.isEmpty) {
            // No writer is at work: these are a crash's.
            problems.append(
                StoreProblem(
                    kind: .unfinishedWrite, file: journalExists ? FileNames.journal : FileNames.temporary,
                    id: nil,
                    detail: "an interrupted write left \(journalExists ? "its journal" : Plural.count(temporaries.count, "temporary file"))"
                ))
        }
        return problems.sorted { ($0.file, $0.kind.rawValue) < ($1.file, $1.kind.rawValue) }
    }

    /// Compares one bucket's files with the index entries that belong in it.
    private func compare(
        _ files: [ScannedFile], with entries: [IndexEntry], log: FileBytes, into problems: inout [StoreProblem]
    ) throws(StoreError) {
        var known: [DocumentID: IndexEntry] = [:]
        for entry in entries { known[DocumentID(entry.id)] = entry }
        var seen: Set<DocumentID> = []
        let scannedFiles = Set(files.map(\.file))
        for file in files {
            switch file.content {
            case .unreadable(let reason):
                problems.append(StoreProblem(kind: .unreadableDocument, file: file.file, id: nil, detail: reason))
            case .missingID:
                problems.append(
                    StoreProblem(kind: .missingID, file: file.file, id: nil, detail: "no _id (a non-empty string) in the document"))
            case .misplaced(let id):
                problems.append(
                    StoreProblem(
                        kind: .misplacedDocument, file: file.file, id: id,
                        detail: "_id \(StoreError.quote(id)) belongs in \(FileNames.documentPath(for: id))"))
            case .document(let found):
                let key = DocumentID(found.id)
                seen.insert(key)
                guard let known = known[key] else {
                    problems.append(StoreProblem(kind: .unindexedDocument, file: file.file, id: found.id, detail: "not in the index"))
                    continue
                }
                if known.hash != found.hash || known.size != found.size {
                    problems.append(
                        StoreProblem(
                            kind: .changedDocument, file: file.file, id: found.id,
                            detail:
                                "content differs from the index (hash \(FNV1a64.hex(found.hash)), size \(found.size); index has \(FNV1a64.hex(known.hash)), \(known.size))"
                        ))
                } else if try !sameFields(known, found, log: log) {
                    problems.append(
                        StoreProblem(
                            kind: .changedDocument, file: file.file, id: found.id, detail: "projected fields in the index are stale"))
                }
            }
        }
        for entry in entries where !seen.contains(DocumentID(entry.id)) && !scannedFiles.contains(entry.file) {
            problems.append(
                StoreProblem(
                    kind: .missingDocument, file: entry.file, id: entry.id,
                    detail: "in the index as \(StoreError.quote(entry.id)) but the file is missing"))
        }
    }

    /// Whether two entries' projected fields are the same bytes, those in the log read from its
    /// mapping (`log`) when they lie within it.
    private func sameFields(_ a: IndexEntry, _ b: IndexEntry, log: FileBytes) throws(StoreError) -> Bool {
        func bytes(_ entry: IndexEntry) throws(StoreError) -> [UInt8] {
            if case .indexFile(let offset, let length) = entry.fields, offset + length <= log.buffer.count {
                return Array(log.buffer[offset..<(offset + length)])
            }
            return try fieldsBytes(of: entry)
        }
        return try bytes(a) == bytes(b)
    }

    /// Whether the index file parses, without touching the state.
    func indexReadability(metadata: StoreMetadata) throws(StoreError) -> IndexFile.Load? {
        // Every line of the log, the part a snapshot covers too; nothing is kept.
        var position = IndexFile.Position()
        return try indexFile.readAll(into: &position, reset: {}, apply: { _ in })
    }

    /// Fixes what `check` finds: unreadable documents and ones without `_id` go to the quarantine
    /// folder, misplaced ones move to their file (or to quarantine when it is taken), leftovers of
    /// crashed writes are removed, and the index is rebuilt from the documents. Nothing is deleted.
    public func repair() throws(StoreError) -> RepairReport {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try state.withLock { (state: inout State) throws(StoreError) -> RepairReport in
            try self.refresh(&state, lockHeld: true)
            let snapshotProblems = try self.snapshotProblems(projection: state.projection)
            let problems = try self.checkLocked(&state, writerActive: false) + snapshotProblems
            var report = RepairReport(quarantined: [], moved: [], rebuiltIndex: false, problems: problems)
            let quarantineFolder = FileNames.quarantine + "/" + Timestamp.now().compactName
            func quarantine(_ file: String) throws(StoreError) {
                let destination = quarantineFolder + "/" + file
                try fileSystem.createFolder(path((destination as NSString).deletingLastPathComponent))
                try fileSystem.rename(path(file), to: path(destination))
                report.quarantined.append((file, destination))
            }
            for problem in problems {
                switch problem.kind {
                case .unreadableDocument, .missingID:
                    try quarantine(problem.file)
                case .misplacedDocument:
                    guard let id = problem.id else { continue }
                    let target = FileNames.documentPath(for: id)
                    if try fileSystem.status(of: path(target)) == nil {
                        try fileSystem.createFolder(path((target as NSString).deletingLastPathComponent))
                        try fileSystem.rename(path(problem.file), to: path(target))
                        report.moved.append((problem.file, target))
                    } else {
                        try quarantine(problem.file)
                    }
                default:
                    break
                }
            }
            // Journal and temporary files: the rebuild below rederives every entry anyway.
            for name in try fileSystem.entries(ofFolder: path(FileNames.temporary)) ?? [] {
                try fileSystem.removeFile(path(FileNames.temporary + "/" + name))
            }
            if !problems.isEmpty {
                let unreadable = problems.contains { $0.kind == .unreadableIndex }
                if !unreadable {
                    // Keep first-stored times from the readable index.
                    try self.loadIndex(&state)
                }
                try self.rebuildEntries(&state, persist: true, keepingOldIndex: unreadable)
                report.rebuiltIndex = true
                // A damaged snapshot is replaced even when no new one is due (it is derived data).
                if !snapshotProblems.isEmpty {
                    if options.mergeThreshold > 0 {
                        try self.writeSnapshot(&state)
                    } else {
                        try fileSystem.removeFile(path(FileNames.snapshot))
                    }
                }
            } else if options.mergeThreshold > 0, state.index.lines > (state.entries.snapshot?.reader.coverage.lines ?? 0) {
                // Nothing to fix, but the snapshot is missing (deleted by hand, say) or behind the
                // log: repair brings it up to date, as the format document promises.
                try self.writeSnapshot(&state)
            }
            try fileSystem.synchronizeAll(containing: folder)
            try journal.remove()
            return report
        }
    }
}

extension DocumentStore {
    /// Changes the projected fields and rebuilds the index from the documents (reading each one),
    /// then records the projection in the metadata file.
    public func changeProjection(to projection: Projection) throws(StoreError) {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            let previous = state.metadata
            state.metadata.projection = projection.withLongPaths(self.schema.longPaths)
            do throws(StoreError) {
                try self.rebuildEntries(&state, persist: true)
                try self.writeDurably(state.metadata.encoded(), to: FileNames.metadata)
            } catch {
                state.metadata = previous
                try? self.reopen(&state, lockHeld: true)
                throw error
            }
        }
    }
}
