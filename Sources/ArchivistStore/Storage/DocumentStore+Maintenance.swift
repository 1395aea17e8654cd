import ArchivistBase
import Foundation

extension DocumentStore {
    /// Counts of the folder.
    public func statistics() throws(StoreError) -> StoreStatistics {
        try withState { (state: inout State) throws(StoreError) -> StoreStatistics in
            try self.refresh(&state)
            try self.table(try state.entries.resolve())
            let documents = try self.table(try state.entries.count)
            let indexBytes = try fileSystem.status(of: path(FileNames.index))?.size ?? 0
            let bytes = try self.table(try state.entries.totalSize())
            let tombstones = try self.table(try state.entries.tombstoneCount())
            var statistics = StoreStatistics(
                documents: documents, documentBytes: bytes, indexBytes: indexBytes,
                indexLines: state.index.lines, deadEntries: max(0, state.index.lines - documents - tombstones),
                formatVersion: state.metadata.format, projection: state.projection.paths)
            statistics.tombstones = tombstones
            if let manifest = state.manifest {
                statistics.segments = manifest.segments.map { record in
                    StoreStatistics.Segment(
                        number: record.number, file: FileNames.segments + "/" + record.fileName, bytes: record.bytes,
                        documents: record.documents, deletedDocuments: record.deletedDocuments, tombstones: record.tombstones,
                        deletedTombstones: record.deletedTombstones, firstSequence: record.firstSequence, lastSequence: record.lastSequence)
                }
                statistics.changesAfterSegments = state.index.lines - manifest.coverage.lines
            } else {
                statistics.changesAfterSegments = state.index.lines
            }
            statistics.lastSequence = state.lastSequence
            statistics.feedStart = state.metadata.feedStart
            return statistics
        }
    }

    /// Rewrites the index with the last change of each ID: one line per live document and, for
    /// every ID whose last change is a removal, that removal (its tombstone), each with its
    /// sequence number, in sequence order. Returns how many lines were dropped.
    ///
    /// The feed's start does not move: `changes(since:)` from any number the folder gave out still
    /// answers with the latest change of every ID changed after it. With `purgeRemovals`, the
    /// tombstones are dropped too (and the segments' records of them), and the feed then starts
    /// after the highest of their numbers (`feedStart`): a follower behind it must read the
    /// documents again.
    ///
    /// The log is read a window at a time and each line kept when it is its ID's last change (a
    /// look-up in the segments, after the tail is flushed into one): nothing is held per
    /// document, whatever the store's size.
    @discardableResult
    public func compact(purgeRemovals: Bool = false) throws(StoreError) -> Int {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try withState(lockHeld: true) { (state: inout State) throws(StoreError) -> Int in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            if options.usesSegments {
                if state.manifest == nil, state.index.lines > options.bulkFlushThreshold {
                    try self.rebuildSegments(&state)
                } else {
                    try self.flush(&state)
                }
                let dropped = try self.compactLog(&state, purgeRemovals: purgeRemovals)
                try self.mergeIfDue(&state)
                return dropped
            }
            return try self.compactLog(&state, purgeRemovals: purgeRemovals)
        }
    }

    /// Rewrites the log keeping each ID's last change (with `purgeRemovals`, only the live
    /// documents' lines), in order, the lock held and the log read to its end (with segments,
    /// they cover it all). The metadata is written first when it changes (the floor, and the feed's
    /// start after purged tombstones); then the new file is renamed into place. With segments,
    /// the purged tombstones are deleted from them and the manifest covers the new file; without,
    /// the new file is read again. Returns how many lines were dropped.
    private func compactLog(_ state: inout State, purgeRemovals: Bool) throws(StoreError) -> Int {
        let end = state.index.consumed
        let temporary = try temporaryPath(for: FileNames.index)
        try fileSystem.write([], to: temporary)
        var pending: [UInt8] = []
        pending.reserveCapacity(1 << 20)
        var purged = 0
        var entryLines = 0
        var tombstoneLines = 0
        var last = 0
        var failure: StoreError?
        // Lines written before format 3 state no number (they are a prefix of the file): they are
        // written with the number of their place, which the new file no longer gives them.
        var numbersStated = false
        // Whether each line is its ID's last change, from the segments' numbers read in order
        // (not a look-up per line).
        var walk = LastChangeWalk(state.entries)
        let old = try changeLog.forEachLine(end: end) { line, bytes, sequence, offset in
            do throws(StoreError) {
                let verdict = try self.table(try walk.verdict(DocumentID(line.id), at: sequence))
                switch line {
                case .removal:
                    guard verdict == .tombstone else { return true }
                    if purgeRemovals {
                        purged = max(purged, sequence)
                        return true
                    }
                    tombstoneLines += 1
                case .entry:
                    guard verdict == .liveEntry else { return true }
                    entryLines += 1
                }
                ChangeLog.appendKept(
                    bytes, lineOffset: offset, sequence: sequence, numbersStated: &numbersStated, to: &pending, schema: schema)
                last = sequence
                if pending.count >= 1 << 20 {
                    try fileSystem.append(pending, to: temporary)
                    pending.removeAll(keepingCapacity: true)
                }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure {
            _ = try? fileSystem.removeFile(temporary)
            throw failure
        }
        let live = try table(try state.entries.count)
        guard old.consumed == end, entryLines == live else {
            _ = try? fileSystem.removeFile(temporary)
            throw .damagedSnapshot(
                path: path(FileNames.segments),
                reason:
                    "the segments hold \(Plural.count(live, "live document")), the log \(entryLines): run 'archivist repair'"
            )
        }
        let highest = state.lastSequence
        var metadata = state.metadata
        metadata.sequenceFloor = max(metadata.sequenceFloor, highest)
        metadata.feedStart = max(metadata.feedStart, purged)
        do {
            try fileSystem.append(pending, to: temporary)
            if metadata != state.metadata {
                // A crash between the two renames leaves a floor and a feed start that are too
                // high for the old file: numbers are skipped, never given twice.
                try writeDurably(metadata.encoded(), to: FileNames.metadata)
                state.metadata = metadata
            }
            try install(temporary, as: FileNames.index)
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error
        }
        let dropped = old.lines - entryLines - tombstoneLines
        guard var manifest = state.manifest else {
            // The whole log read again (the entries pointed into the old file).
            try removeUnlistedSegmentFiles(keeping: nil)
            state.index = ChangeLog.Position()
            _ = try loadIndex(&state)
            return dropped
        }
        let size = try fileSystem.status(of: changeLog.path)?.size ?? 0
        state.index = ChangeLog.Position(
            identity: try fileSystem.status(of: changeLog.path)?.identity, consumed: size, lines: entryLines + tombstoneLines,
            sequence: last)
        // The segments' entries and tombstones carry their numbers, which the file keeps; purged
        // removals are gone from the log, and so are their tombstones. The manifest covers the
        // new file.
        if purgeRemovals {
            for segment in state.entries.segments where segment.mapped.tombstoneCount > 0 {
                let live = (0..<segment.mapped.tombstoneCount).filter { !segment.isDeleted(segment.mapped.count + $0) }
                guard !live.isEmpty, let position = manifest.segments.firstIndex(where: { $0.number == segment.record.number }) else {
                    continue
                }
                var record = manifest.segments[position]
                let deletes = SegmentDeletes(segment: record.number, ordinals: segment.deletedOrdinals.map { UInt32($0) })
                    .adding(live.map { UInt32(segment.mapped.count + $0) })
                record.deletesGeneration += 1
                record.deletedTombstones += live.count
                try writeSegmentFile(deletes.encoded(), named: record.deletesFileName!)
                manifest.segments[position] = record
            }
        }
        manifest.coverage = try coverage(of: state.index)
        try install(manifest, &state)
        return dropped
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
    /// the cores.
    /// `known` gives the first-stored and updated times of a rebuild; `check`, which compares
    /// only contents, passes nil (no look-up per file).
    func scanDocuments(
        projection: Projection, known: EntryTable?, visit: (_ bucket: String, _ files: [ScannedFile]) throws(StoreError) -> Void
    ) throws(StoreError) {
        try scanDocuments(projection: projection, known: known, piece: nil, ahead: Self.scanAhead) {
            (bucket, files, _) throws(StoreError) in try visit(bucket, files)
        }
    }

    /// `scanDocuments`, handing on at most `piece` files at a time (nil: a whole bucket), each
    /// piece sorted by name, with `isLast` true for a bucket's last piece (an empty bucket is one
    /// empty piece); up to `ahead` documents (and always the next piece) are read ahead. A scan
    /// that needs no order across a bucket (`check`) holds a piece and what is read ahead, not a
    /// bucket, whose files grow with the store (`docs/` has 256 buckets).
    func scanDocuments(
        projection: Projection, known: EntryTable?, piece: Int?, ahead limit: Int,
        visit: (_ bucket: String, _ files: [ScannedFile], _ isLast: Bool) throws(StoreError) -> Void
    ) throws(StoreError) {
        let buckets = try documentBuckets()
        // The buckets are read on another thread, ahead of the one `visit` is given, up to
        // `limit` documents (and always the next piece): what `visit` does with one (compare,
        // write a log, build a segment) shares the time of the reads of the next ones.
        let ahead = ScanAhead()
        let producer = Thread { [self] in
            reading: for bucket in buckets {
                guard ahead.waitForRoom(limit: limit) else { break }
                let names: [(name: String, inode: UInt64)]
                do throws(StoreError) {
                    names = try self.bucketNames(bucket)
                } catch {
                    _ = ahead.put(bucket, .failure(error), isLast: true)
                    break
                }
                let size = max(1, piece ?? names.count)
                var start = 0
                repeat {
                    if start > 0 { guard ahead.waitForRoom(limit: limit) else { break reading } }
                    let end = min(names.count, start + size)
                    let read = Result<[ScannedFile], StoreError> { () throws(StoreError) in
                        try self.readFiles(names[start..<end], of: bucket, projection: projection, known: known)
                    }
                    guard ahead.put(bucket, read, isLast: end == names.count) else { break reading }
                    start = end
                } while start < names.count
            }
            ahead.finish()
        }
        producer.stackSize = 8 << 20
        producer.start()
        defer { ahead.stopAndWait() }
        while let (bucket, read, isLast) = ahead.take() {
            try visit(bucket, try read.get(), isLast)
        }
    }

    /// How many scanned documents may wait, read ahead, for `visit` (about 20 MB of entries: more
    /// than are read while a bulk flush builds its segment).
    static let scanAhead = 32_768

    /// A bucket's document files, in the order of their inode numbers (the order the file system
    /// laid them out).
    private func bucketNames(_ bucket: String) throws(StoreError) -> [(name: String, inode: UInt64)] {
        (try fileSystem.inodeEntries(ofFolder: path(FileNames.documents + "/" + bucket)) ?? [])
            .filter { $0.name.hasSuffix(FileNames.documentExtension) && !$0.name.hasPrefix(".") }
            .sorted { $0.inode != $1.inode ? $0.inode < $1.inode : UTF8Bytes.precedes($0.name, $1.name) }
    }

    /// Files of a bucket (`bucketNames`' order), read several at a time, sorted by name.
    private func readFiles(
        _ names: ArraySlice<(name: String, inode: UInt64)>, of bucket: String, projection: Projection, known: EntryTable?
    ) throws(StoreError) -> [ScannedFile] {
        let bucketPath = FileNames.documents + "/" + bucket
        let names = Array(names)
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
        return scanned
    }

    /// What a document file holds, or nil when it is gone.
    func scanDocument(_ relative: String, projection: Projection, known: EntryTable?) throws(StoreError) -> ScannedFile? {
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
        guard documentPath(for: id) == relative else { return ScannedFile(file: relative, content: .misplaced(id: id)) }
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
    ///
    /// Persisted with `keepingNumbers` (the state read from a readable log, to its end), every
    /// number the feed gave out stays (`rebuildKeepingNumbers`). Persisted without it (the old log
    /// unreadable or missing), the new log is written a bucket of documents at a time, each
    /// document numbered above every number the old file holds, and the feed then starts after
    /// them (`feedStart`). Either way the segments are then built from it again (a chunk at a
    /// time): nothing is held per document. Without `persist` (a reader that cannot take the
    /// lock), the entries are kept in memory.
    func rebuildEntries(_ state: inout State, persist: Bool, keepingOldIndex: Bool = false, keepingNumbers: Bool = false) throws(StoreError)
    {
        guard persist else {
            let scanned = try scanDocuments(projection: state.projection, known: state.entries)
            state.entries = EntryTable()
            state.manifest = nil
            for file in scanned {
                if case .document(let entry) = file.content { try? state.entries.set(DocumentID(entry.id), entry) }
            }
            state.index.lines = try table(try state.entries.count)
            return
        }
        if keepingNumbers {
            let findings = try rebuildKeepingNumbers(&state)
            try reloadAfterRebuild(&state)
            state.documentsScan = DocumentsScan(identity: state.index.identity, consumed: state.index.consumed, problems: findings)
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
        // Every number the old file holds, read leniently: the new ones come after them.
        var floor = state.lastSequence
        if try fileSystem.status(of: indexPath) != nil {
            let end = try fileSystem.status(of: indexPath)?.size ?? 0
            _ = try changeLog.forEachLine(end: end, invalid: { _, _ in true }) { _, _, sequence, _ in
                floor = max(floor, sequence)
                return true
            }
        }
        let temporary = try temporaryPath(for: FileNames.index)
        try fileSystem.write([], to: temporary)
        var next = floor + 1
        var findings: [StoreProblem] = []
        // With segments, the state follows the new log as it is written aside and flushes its
        // tail into a segment at each bulk threshold (merging as the policy says): the building
        // shares the time of the reads instead of following them. The manifests it installs name
        // the file aside (its identity): none is used unless the rename below happens.
        let building = options.usesSegments
        let known = state.entries
        if building {
            try removeUnlistedSegmentFiles(keeping: nil)
            state.manifest = nil
            state.entries = EntryTable()
            state.index = ChangeLog.Position()
            state.refusesSegments = false
        }
        do {
            try withLogAside(String(temporary.dropFirst(folder.count + 1)), bound: building) { () throws(StoreError) in
                try scanDocuments(projection: state.projection, known: known) { (_, files) throws(StoreError) in
                    var batch = ChangeLog.Batch(firstSequence: next)
                    var added: [IndexEntry] = []
                    for file in files {
                        guard case .document(let entry) = file.content else {
                            if let problem = fileProblem(file) { findings.append(problem) }
                            continue
                        }
                        batch.append(entry, fields: try fieldsBytes(of: entry), file: file.file)
                        if building { added.append(entry) }
                    }
                    guard batch.count > 0 else { return }
                    if building {
                        let references = try changeLog.append(batch, at: &state.index)
                        for (i, reference) in references.enumerated() {
                            var entry = added[i]
                            entry.fields = reference.1
                            entry.sequence = next + i
                            do throws(SegmentDamage) {
                                try state.entries.apply(.entry(entry))
                            } catch {
                                throw .damagedSnapshot(path: path(FileNames.segments), reason: error.description)
                            }
                        }
                        if state.entries.tailCount >= options.bulkFlushThreshold {
                            try flush(&state)
                            try mergeIfDue(&state)
                        }
                    } else {
                        try fileSystem.append(batch.bytes, to: temporary)
                    }
                    next = batch.nextSequence
                }
                if building {
                    try flush(&state)
                    try mergeIfDue(&state)
                }
            }
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            if building {
                state.manifest = nil
                state.entries = EntryTable()
                state.index = ChangeLog.Position()
                _ = try? loadIndex(&state)
            }
            throw error
        }
        var metadata = state.metadata
        metadata.sequenceFloor = max(metadata.sequenceFloor, next - 1)
        metadata.feedStart = max(metadata.feedStart, floor)
        do {
            // A crash between the two renames leaves a floor and a feed start that are too high
            // for the old file: numbers are skipped, never given twice.
            try writeDurably(metadata.encoded(), to: FileNames.metadata)
            state.metadata = metadata
            try install(temporary, as: FileNames.index)
            state.renumberedFeedStart = metadata.feedStart
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error
        }
        if building {
            // The same file, now in place: the segments' manifest covers it to its end.
            try refresh(&state, lockHeld: true)
        } else {
            try reloadAfterRebuild(&state)
        }
        state.documentsScan = DocumentsScan(identity: state.index.identity, consumed: state.index.consumed, problems: findings)
    }

    /// Runs `body` with this thread's `changeLog` being `file` (relative to the folder) when
    /// `bound`.
    private func withLogAside(_ file: String, bound: Bool, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        guard bound else { return try body() }
        do {
            try Self.$logAside.withValue(LogAside(folder: folder, file: file)) { try body() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .io(path: path(file), operation: "rebuild", message: "\(error)")
        }
    }

    /// Starts the state from a log just written whole: the segments built from it again (or, in a
    /// store without them, the log read).
    private func reloadAfterRebuild(_ state: inout State) throws(StoreError) {
        state.manifest = nil
        state.entries = EntryTable()
        state.index = ChangeLog.Position()
        if options.usesSegments {
            try rebuildSegments(&state)
            // The tail the rebuild leaves (empty) and the log read to its end.
            try refresh(&state, lockHeld: true)
        } else {
            try removeUnlistedSegmentFiles(keeping: nil)
            _ = try loadIndex(&state)
        }
    }

    /// Whether the document files are as the rebuild that made `scan` found them, told from their
    /// status alone (as git tells a clean work tree from its index): as many files as live entries
    /// and problem files, each entry's file of the entry's size with the modification time the
    /// rebuild recorded as its update, each problem file still there. A status a file, no read.
    func documentsUnchanged(since scan: DocumentsScan, entries: EntryTable) throws(StoreError) -> Bool {
        var files = 0
        for bucket in try documentBuckets() {
            for name in try fileSystem.entries(ofFolder: path(FileNames.documents + "/" + bucket)) ?? []
            where name.hasSuffix(FileNames.documentExtension) && !name.hasPrefix(".") {
                files += 1
            }
        }
        guard files == (try table(try entries.count)) + scan.problems.count else { return false }
        for problem in scan.problems where try fileSystem.status(of: path(problem.file)) == nil { return false }
        var unchanged = true
        try table(
            try entries.forEachLive { entry in
                guard let status = (try? self.fileSystem.status(of: self.path(self.documentPath(for: entry.id)))) ?? nil,
                    !status.isFolder, status.size == entry.size, status.modified == entry.updatedAt
                else {
                    unchanged = false
                    return false
                }
                return true
            })
        return unchanged
    }

    /// Fixes what `check` finds: unreadable documents and ones without `_id` go to the quarantine
    /// folder, misplaced ones move to their file (or to quarantine when it is taken), leftovers of
    /// crashed writes are removed, and the index is rebuilt from the documents. Nothing is deleted.
    public func repair() throws(StoreError) -> RepairReport {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try state.withLock { (state: inout State) throws(StoreError) -> RepairReport in
            // When this process rebuilt the log from the documents before (opening a folder whose
            // index was missing or unreadable), what that read found stands for them while the log
            // is the one it wrote and every file is as it found it; a rebuild in this repair (under
            // its lock) is trusted as it is.
            let earlierScan = state.documentsScan
            state.documentsScan = nil
            try self.refresh(&state, lockHeld: true)
            var known: [StoreProblem]?
            if let scan = earlierScan, scan.identity == state.index.identity, scan.consumed == state.index.consumed,
                try self.documentsUnchanged(since: scan, entries: state.entries)
            {
                known = scan.problems
            }
            let problems = try self.checkLocked(&state, writerActive: false, documents: known)
            var changed = !problems.isEmpty
            var documentsChecked: [StoreProblem]?
            let segmentsOnly = !problems.isEmpty && problems.allSatisfy { $0.kind == .damagedSnapshot }
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
                    let target = documentPath(for: id)
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
            let segmentsWanted = options.usesSegments
            if segmentsOnly {
                // Derived data only: built again from the log, every number kept.
                if segmentsWanted { try self.rebuildSegments(&state) } else { try self.removeUnlistedSegmentFiles(keeping: nil) }
                report.rebuiltIndex = true
            } else if !problems.isEmpty {
                let indexExists = try fileSystem.status(of: changeLog.path) != nil
                if problems.contains(where: { $0.kind == .unreadableIndex }) || !indexExists {
                    // Nothing to keep: every document is numbered again, and the feed starts after
                    // every old number.
                    try self.rebuildEntries(&state, persist: true, keepingOldIndex: true)
                } else {
                    // The readable index gives each unchanged document its number and times (the
                    // segments, when damaged, are built from it first).
                    if segmentsWanted, problems.contains(where: { $0.kind == .damagedSnapshot }) {
                        try self.rebuildSegments(&state)
                    } else {
                        try self.loadIndex(&state)
                    }
                    try self.refresh(&state, lockHeld: true)
                    try self.rebuildEntries(&state, persist: true, keepingNumbers: true)
                }
                report.rebuiltIndex = true
            } else if segmentsWanted, state.manifest == nil || state.entries.tailCount > 0 {
                // Nothing to fix, but the segments are missing (deleted by hand, say) or behind the
                // log: repair brings them up to date, as the format document promises.
                if state.manifest == nil { try self.rebuildSegments(&state) } else { try self.flush(&state) }
                try self.mergeIfDue(&state)
                changed = true
                // Derived files only: the documents stand as the check above found them (clean).
                documentsChecked = []
            }
            if state.renumberedFeedStart != nil {
                // Here, or when this process opened the store (an unreadable index is rebuilt
                // then): said once.
                report.rebuiltIndex = true
                report.renumbered = true
                state.renumberedFeedStart = nil
            }
            report.feedStart = state.metadata.feedStart
            try fileSystem.synchronizeAll(containing: folder)
            try journal.remove()
            // What is left: the check again, after a change (the documents not read again when
            // a rebuild in this repair just read them all for this log).
            if changed {
                try self.refresh(&state, lockHeld: true)
                report.remaining = try self.checkLocked(
                    &state, writerActive: false, documents: state.freshDocumentProblems ?? documentsChecked)
            }
            return report
        }
    }
}

extension DocumentStore {
    /// Changes the projected fields and rebuilds the index from the documents (reading each one),
    /// then records the projection in the metadata file. Every line keeps its number: a
    /// document's line is written again with the new projection's fields (a document changed by
    /// hand since its last commit gets a new number), removals stay; the feed's start does not
    /// move.
    public func changeProjection(to projection: Projection) throws(StoreError) {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            let previous = state.metadata
            state.metadata.projection = projection.withLongPaths(self.schema.longPaths)
            do throws(StoreError) {
                try self.rebuildEntries(&state, persist: true, keepingNumbers: true)
                try self.writeDurably(state.metadata.encoded(), to: FileNames.metadata)
            } catch {
                state.metadata = previous
                try? self.reopen(&state, lockHeld: true)
                throw error
            }
        }
    }
}
