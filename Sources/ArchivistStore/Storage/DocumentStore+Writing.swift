import ArchivistBase
import Dispatch
import Foundation

extension DocumentStore {
    /// Stores `document` under `id`, adding or replacing it.
    ///
    /// The document must be a JSON object. Its `_id`, when present, must equal `id`; when absent it
    /// is set to `id`, so every file names its own ID.
    @discardableResult
    public func put(_ document: JSONValue, id: String) throws(StoreError) -> UpsertOutcome {
        let prepared = try prepare(document, id: id).get()
        return try commit([.put(id: prepared.id, document: prepared.document)])[0].get()
    }

    /// Stores `document` under its `_id`, or under a new UUID set as its `_id` when it has none.
    @discardableResult
    public func add(_ document: JSONValue) throws(StoreError) -> (id: String, outcome: UpsertOutcome) {
        let prepared = try prepare(document, id: nil).get()
        return (prepared.id, try commit([.put(id: prepared.id, document: prepared.document)])[0].get())
    }

    /// Adds or replaces many documents in one durable batch, each under its `_id` (or a new UUID).
    ///
    /// A document that cannot be stored (not an object, a bad `_id`) is reported in its result and
    /// the others are stored. The batch is synced once.
    public func upsert(_ documents: [JSONValue]) throws(StoreError) -> [UpsertResult] {
        try upsert(prepareUpsert(documents))
    }

    /// Checks and encodes documents for ``upsert(_:)-(PreparedBatch)``: the CPU work of a batch
    /// (file bytes, hashes, index fields), done without the writers' lock, so that a caller can
    /// prepare the next batch on another thread while this one commits.
    public func prepareUpsert(_ documents: [JSONValue]) -> PreparedBatch {
        var batch = PreparedBatch()
        for document in documents {
            switch prepare(document, id: nil) {
            case .success(let prepared):
                batch.positions.append(batch.results.count)
                batch.operations.append(.put(id: prepared.id, document: prepared.document))
                batch.results.append(UpsertResult(id: prepared.id, outcome: .success(.unchanged)))
            case .failure(let error):
                batch.results.append(UpsertResult(id: document["_id"]?.stringValue, outcome: .failure(error)))
            }
        }
        batch.projection = encodingProjection.withLock { $0 }
        batch.encoded = Self.encode(batch.operations, projection: batch.projection, schema: schema)
        return batch
    }

    /// Stores a batch made by ``prepareUpsert(_:)`` in one durable commit (encoded again if the
    /// store's projection changed since).
    public func upsert(_ batch: PreparedBatch) throws(StoreError) -> [UpsertResult] {
        var results = batch.results
        let outcomes = try commit(batch.operations, encoded: batch.encoded, projection: batch.projection)
        for (position, outcome) in zip(batch.positions, outcomes) {
            results[position].outcome = outcome
        }
        return results
    }

    /// Removes documents; the result tells, for each ID, whether there was one to remove.
    @discardableResult
    public func remove(_ ids: [String]) throws(StoreError) -> [Bool] {
        let outcomes = try commit(ids.map { .remove(id: $0) })
        return outcomes.map { (try? $0.get()) == .updated }
    }

    // MARK: Internals

    enum Operation: Sendable {
        case put(id: String, document: JSONValue)
        case remove(id: String)
    }

    struct Prepared {
        var id: String
        var document: JSONValue
    }

    /// Checks a document and settles its ID.
    func prepare(_ document: JSONValue, id: String?) -> Result<Prepared, StoreError> {
        let source = id.map { "ID \(StoreError.quote($0))" } ?? "document"
        guard document.isObject else {
            return .failure(
                .invalidDocument(
                    source: source,
                    reason: "a document must be a JSON object, not \(document.typeName == "array" ? "an" : "a") \(document.typeName)"))
        }
        var finalID = id
        if let given = document["_id"] {
            guard case .string(let text) = given, !text.isEmpty else {
                return .failure(
                    .invalidDocument(
                        source: source,
                        reason:
                            "_id must be a non-empty string, not \(given.typeName == "string" ? "an empty string" : JSONWriter.compactString(given))"
                    ))
            }
            if let id, !UTF8Bytes.equal(text, id) {
                return .failure(
                    .invalidDocument(source: source, reason: "_id \(StoreError.quote(text)) in the document differs from the ID"))
            }
            finalID = text
        }
        let resolved = finalID ?? UUID().uuidString.lowercased()
        if let problem = Self.problem(withID: resolved) {
            return .failure(.invalidID(id: resolved, reason: problem))
        }
        return .success(
            Prepared(id: resolved, document: document["_id"] == nil ? document.setting("_id", to: .string(resolved)) : document))
    }

    /// Why an ID cannot be used, or nil when it can.
    static func problem(withID id: String) -> String? {
        if id.isEmpty { return "must not be empty" }
        if id.utf8.count > 4096 { return "longer than 4096 bytes" }
        if id.utf8.contains(0) { return "must not contain a NUL character" }
        return nil
    }

    /// Runs a batch under the write lock: temporary files, journal, sync, renames, index, sync.
    ///
    /// For each operation: a put yields added/updated/unchanged; a remove yields `.updated` when
    /// a document was removed and `.unchanged` when there was none.
    func commit(_ operations: [Operation]) throws(StoreError) -> [Result<UpsertOutcome, StoreError>] {
        if operations.isEmpty { return [] }
        // Serializing and hashing is most of the CPU work of a batch: do it on all cores before
        // taking the lock.
        let projection = encodingProjection.withLock { $0 }
        return try commit(operations, encoded: Self.encode(operations, projection: projection, schema: schema), projection: projection)
    }

    /// Commits operations encoded with `projection` (encoded again if the store's has changed).
    func commit(
        _ operations: [Operation], encoded: [Encoded?], projection: Projection
    ) throws(StoreError) -> [Result<UpsertOutcome, StoreError>] {
        if operations.isEmpty { return [] }
        var projection = projection
        var encoded = encoded
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try withState(lockHeld: true) { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            if state.projection != projection {
                projection = state.projection
                encodingProjection.withLock { $0 = state.projection }
                encoded = Self.encode(operations, projection: projection, schema: schema)
            }
            let outcomes = try self.commitLocked(operations, encoded, &state)
            self.flushIfDue(&state)
            return outcomes
        }
    }

    /// A document's file bytes, their hash, its projected fields and its file's path in the folder.
    struct Encoded: Sendable {
        var bytes: [UInt8]
        var hash: UInt64
        var fieldsJSON: [UInt8]
        var file: String
    }

    /// Encodes the puts of a batch (nil for removes), in parallel for large batches; `schema` names
    /// their files.
    static func encode(_ operations: [Operation], projection: Projection, schema: StoreSchema) -> [Encoded?] {
        let slots = ParallelSlots<Encoded?>(count: operations.count, initial: nil)
        let workers = operations.count >= 64 ? ProcessInfo.processInfo.activeProcessorCount : 1
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var index = worker
            while index < operations.count {
                if case .put(let id, let document) = operations[index] {
                    let bytes = JSONWriter.prettyBytes(document)
                    slots.set(
                        index,
                        Encoded(
                            bytes: bytes, hash: FNV1a64.hash(bytes), fieldsJSON: projection.fieldsJSON(of: document),
                            file: FileNames.documentPath(for: id, in: schema)))
                }
                index += workers
            }
        }
        return slots.values
    }

    /// A batch staged under the lock: for each ID it touches, in the order first touched, its new
    /// entry (nil for a removal) and bytes, written to a temporary file; and each operation's outcome.
    struct StagedBatch {
        struct Pending {
            /// The new entry, or nil for a removal.
            var entry: IndexEntry?
            var bytes: [UInt8]?
            var temporary: String?
            /// The document's file, relative to the folder (nil: worked out from the ID).
            var file: String? = nil
            /// A removal's line, once written (its number, time and the removed fields).
            var removal: ChangeLog.Removal? = nil
        }

        var pending: [DocumentID: Pending] = [:]
        var order: [DocumentID] = []
        var outcomes: [Result<UpsertOutcome, StoreError>] = []
        var temporaryFolderReady = false

        /// The entry an ID has once the operations staged so far apply.
        func current(_ key: DocumentID, in entries: EntryTable) throws(SegmentDamage) -> IndexEntry? {
            if let planned = pending[key] { return planned.entry }
            return try entries.entry(key)
        }

        /// The IDs whose entry the batch changes (a removal of an ID that had none changes nothing).
        func changes(against entries: EntryTable) throws(SegmentDamage) -> [DocumentID] {
            var changed: [DocumentID] = []
            for key in order {
                guard let planned = pending[key] else { continue }
                if planned.entry != nil {
                    changed.append(key)
                } else if try entries.entry(key) != nil {
                    changed.append(key)
                }
            }
            return changed
        }

        func discardTemporaries(on fileSystem: any FileSystem) {
            for planned in pending.values {
                if let temporary = planned.temporary { _ = try? fileSystem.removeFile(temporary) }
            }
        }
    }

    /// Commits a batch with the lock held: stage it (temporary files), write the journal and sync,
    /// install it (renames, index lines, sync), then drop the journal.
    func commitLocked(
        _ operations: [Operation], _ encoded: [Encoded?], _ state: inout State
    ) throws(StoreError) -> [Result<UpsertOutcome, StoreError>] {
        let now = Timestamp.now()
        var batch = try stage(operations, encoded, now: now, &state)
        // A batch that changes nothing writes nothing.
        let changes = try table(try batch.changes(against: state.entries))
        if changes.isEmpty {
            batch.discardTemporaries(on: fileSystem)
            return batch.outcomes
        }
        // 1. The journal names every ID the batch touches; with the temporary files it is made
        //    durable before any document is replaced.
        try journal.write(changes)
        try fileSystem.synchronizeAll(containing: folder)
        do throws(StoreError) {
            try install(changes, &batch, now: now, &state)
        } catch {
            // Leave the folder consistent before reporting: rederive the touched entries.
            try? recoverLocked(&state)
            throw error
        }
        for key in changes {
            try table(try state.entries.set(key, batch.pending[key]!.entry))
            if let removal = batch.pending[key]!.removal { state.entries.recordRemoval(removal) }
        }
        try journal.remove()
        return batch.outcomes
    }

    /// Decides each operation's outcome and writes each changed document to a temporary file.
    /// On failure the temporary files written so far are removed.
    private func stage(
        _ operations: [Operation], _ encoded: [Encoded?], now: Timestamp,
        _ state: inout State
    ) throws(StoreError) -> StagedBatch {
        var batch = StagedBatch()
        batch.outcomes.reserveCapacity(operations.count)
        do throws(StoreError) {
            for (operation, encoding) in zip(operations, encoded) {
                countLookups(&state)
                switch operation {
                case .put(let id, _):
                    batch.outcomes.append(.success(try stagePut(id: id, encoding!, now: now, &batch, &state)))
                case .remove(let id):
                    let key = DocumentID(id)
                    guard try table(try batch.current(key, in: state.entries)) != nil else {
                        batch.outcomes.append(.success(.unchanged))
                        continue
                    }
                    if let temporary = batch.pending[key]?.temporary { try fileSystem.removeFile(temporary) }
                    if batch.pending[key] == nil { batch.order.append(key) }
                    batch.pending[key] = StagedBatch.Pending(entry: nil, bytes: nil, temporary: nil)
                    batch.outcomes.append(.success(.updated))
                }
            }
        } catch {
            batch.discardTemporaries(on: fileSystem)
            throw error
        }
        return batch
    }

    /// Counts a write's look-up of an ID in the segments and, every
    /// `EntryTable.lookupsBetweenDrops`, lets the segments' mapped pages go (they stay in the page
    /// cache). Each look-up touches a block of the ID filter in every segment and, for the 1 to 2%
    /// the filter lets through, a binary search's pages, and every fault maps the 64 KiB around
    /// it: a bulk import's tail of 32,768 look-ups held some 140 MB of them at 3M, growing with
    /// the number and the size of the segments.
    private func countLookups(_ state: inout State) {
        guard state.entries.hasSegments else { return }
        state.lookupsSinceDrop += 1
        if state.lookupsSinceDrop >= EntryTable.lookupsBetweenDrops {
            state.entries.dropResidentPages()
            state.lookupsSinceDrop = 0
        }
    }

    /// This process's ID, which names its temporary files (asked once: a bulk import names one a
    /// document, and each `ProcessInfo` answer is a system call).
    static let processIdentifier = ProcessInfo.processInfo.processIdentifier

    /// Stages one put: unchanged when the same bytes are stored (or staged) already, else the
    /// bytes go to a temporary file (the one this batch already has for the ID, if any).
    private func stagePut(
        id: String, _ encoding: Encoded, now: Timestamp, _ batch: inout StagedBatch,
        _ state: inout State
    ) throws(StoreError) -> UpsertOutcome {
        let key = DocumentID(id)
        let bytes = encoding.bytes
        let existing = try table(try batch.current(key, in: state.entries))
        if let existing, existing.hash == encoding.hash, existing.size == bytes.count {
            var stored = batch.pending[key]?.bytes
            if stored == nil { stored = try documentFile(documentPath(for: existing.id)) }
            if stored == bytes { return .unchanged }
        }
        // An update's time is after the first-stored time, so that a changes feed tells an update
        // (`updated_at` > `stored_at`) from an addition (equal) even within a millisecond.
        let entry = IndexEntry(
            id: id, hash: encoding.hash, size: bytes.count, storedAt: existing?.storedAt ?? now,
            updatedAt: existing.map { Timestamp.later(now, than: $0.storedAt) } ?? now, fields: .inline(encoding.fieldsJSON))
        let temporaryFolder = path(FileNames.temporary)
        if !batch.temporaryFolderReady {
            try fileSystem.createFolder(temporaryFolder)
            batch.temporaryFolderReady = true
        }
        let temporary: String
        if let reused = batch.pending[key]?.temporary {
            temporary = reused
        } else {
            state.temporaryCounter += 1
            temporary = "\(temporaryFolder)/\(Self.processIdentifier)-\(state.temporaryCounter).json"
        }
        try fileSystem.write(bytes, to: temporary)
        if batch.pending[key] == nil { batch.order.append(key) }
        batch.pending[key] = StagedBatch.Pending(entry: entry, bytes: bytes, temporary: temporary, file: encoding.file)
        return existing == nil ? .added : .updated
    }

    /// Renames each changed document into place (or unlinks it), appends the index lines, and
    /// makes both durable with one sync; only then is the batch done.
    private func install(
        _ changes: [DocumentID], _ batch: inout StagedBatch, now: Timestamp,
        _ state: inout State
    ) throws(StoreError) {
        var lines = ChangeLog.Batch(firstSequence: state.lastSequence + 1)
        for key in changes {
            let planned = batch.pending[key]!
            let relative = planned.file ?? documentPath(for: key.rawValue)
            if let entry = planned.entry {
                let bucket = FileNames.bucket(ofDocumentPath: relative)
                if !state.knownBuckets.contains(bucket) {
                    try fileSystem.createFolder(path(FileNames.documents + "/" + bucket))
                    state.knownBuckets.insert(bucket)
                }
                try fileSystem.rename(planned.temporary!, to: path(relative))
                batch.pending[key]!.entry!.sequence = lines.nextSequence
                lines.append(entry, fields: try fieldsBytes(of: entry), file: relative)
            } else {
                let removed = try table(try state.entries.entry(key))
                try fileSystem.removeFile(path(relative))
                let fields = try removed.map { (entry) throws(StoreError) in try fieldsBytes(of: entry) }
                batch.pending[key]!.removal = ChangeLog.Removal(
                    id: key.rawValue, sequence: lines.nextSequence, removedAt: now, fields: fields.map { .inline($0) })
                lines.appendRemoval(of: key.rawValue, at: now, fields: fields)
            }
        }
        for (key, reference) in try appendToIndex(lines, &state) {
            batch.pending[key]!.entry!.fields = reference
        }
        try fileSystem.synchronizeAll(containing: folder)
    }

    /// Appends complete lines to the index, records them as consumed, and returns where in the
    /// file each new entry's fields now are.
    func appendToIndex(_ lines: ChangeLog.Batch, _ state: inout State) throws(StoreError) -> [(DocumentID, FieldsReference)] {
        try changeLog.append(lines, at: &state.index)
    }

    /// Finishes what a crashed writer left (called with the lock held): cuts a torn last index
    /// line, rederives the entries of the journal's IDs from their files, and removes temporary files.
    func recoverLocked(_ state: inout State) throws(StoreError) {
        let temporaries = try fileSystem.entries(ofFolder: path(FileNames.temporary)) ?? []
        let tornTail = try changeLog.cutTornTail(after: state.index)
        guard try journal.exists || !temporaries.isEmpty || tornTail else { return }
        var lines = ChangeLog.Batch(firstSequence: state.lastSequence + 1)
        let now = Timestamp.now()
        var numbered: [(DocumentID, Int)] = []
        var removals: [ChangeLog.Removal] = []
        let replayed = try journal.replay { (key: DocumentID) throws(StoreError) in
            if let line = try self.rederivedLine(for: key, &state) {
                switch line {
                case .entry(let derived):
                    numbered.append((key, lines.nextSequence))
                    lines.append(derived, fields: try fieldsBytes(of: derived), file: self.documentPath(for: derived.id))
                case .removal(let removal):
                    removals.append(ChangeLog.Removal(id: removal.id, sequence: lines.nextSequence, removedAt: now))
                    lines.appendRemoval(of: removal.id, at: now)
                }
            }
        }
        if lines.count > 0 {
            for (key, reference) in try appendToIndex(lines, &state) { state.entries.setFields(key, reference) }
            for (key, sequence) in numbered { state.entries.setSequence(key, sequence) }
            for removal in removals { state.entries.recordRemoval(removal) }
        }
        for name in temporaries {
            try fileSystem.removeFile(path(FileNames.temporary + "/" + name))
        }
        try fileSystem.synchronizeAll(containing: folder)
        if replayed { try journal.remove() }
    }

    /// Rederives the entry of a journal's ID from its file and sets it in the state; returns the
    /// index line that records the change, or nil when the index already agrees (or the file is
    /// unreadable: left for check to report and repair to quarantine).
    private func rederivedLine(for key: DocumentID, _ state: inout State) throws(StoreError) -> ChangeLog.Line? {
        let id = key.rawValue
        let known = try table(try state.entries.entry(key))
        let derived: IndexEntry?
        switch try derivedEntry(forID: id, storedAt: known?.storedAt, projection: state.projection) {
        case .entry(let entry): derived = entry
        case .missing: derived = nil
        case .unreadable: return nil
        }
        if derived == nil && known == nil { return nil }
        if let derived, let known, derived.hasSameContent(as: known),
            try fieldsBytes(of: derived) == fieldsBytes(of: known)
        {
            return nil
        }
        try table(try state.entries.set(key, derived))
        return derived.map { .entry($0) } ?? .removal(ChangeLog.Removal(id: id))
    }

    enum Derivation {
        case entry(IndexEntry)
        case missing
        case unreadable
    }

    /// The entry a document file calls for: none when the file is missing, and `.unreadable` when
    /// it cannot be parsed or names another ID (such a file is left in place for `check` to report
    /// and `repair` to quarantine).
    func derivedEntry(forID id: String, storedAt: Timestamp?, projection: Projection) throws(StoreError) -> Derivation {
        let relative = documentPath(for: id)
        let read: [UInt8]?
        do {
            read = try documentFile(relative)
        } catch {
            // Not a file that can be read (too large, a FIFO): left for check and repair.
            guard case .io(_, "read", _) = error else { throw error }
            return .unreadable
        }
        guard let bytes = read else { return .missing }
        guard let document = try? JSONParser.parse(bytes),
            case .string(let storedID)? = document["_id"], UTF8Bytes.equal(storedID, id)
        else { return .unreadable }
        let modified = try fileSystem.status(of: path(relative))?.modified ?? .now()
        return .entry(
            IndexEntry(
                id: id, hash: FNV1a64.hash(bytes), size: bytes.count, storedAt: storedAt ?? modified,
                updatedAt: storedAt.map { Timestamp.later(modified, than: $0) } ?? modified,
                fields: .inline(projection.fieldsJSON(of: document))))
    }
}
