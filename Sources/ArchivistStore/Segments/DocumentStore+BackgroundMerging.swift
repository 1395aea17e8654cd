import ArchivistBase

/// Merges off the write path (`docs/ARCHITECTURE.md`, "Merges in the background"), as Lucene's
/// concurrent merge scheduler: a merge is planned under the writers' lock (a moment), built from
/// its immutable inputs without it (writers go on appending, flushing and deleting meanwhile),
/// then installed under the lock again, carrying over what the writes deleted in its inputs
/// while it was built. One merger at a time, by `segments/merge.lock`.
extension DocumentStore {
    /// Whether the merge policy calls for a merge of the live segments now.
    public var isMergeDue: Bool {
        state.withLock { mergeIsDue($0) }
    }

    /// Whether the policy calls for a merge of the state's segments.
    private func mergeIsDue(_ state: State) -> Bool {
        guard let manifest = state.manifest else { return false }
        return mergePolicy.nextMerge(manifest.segments) != nil
    }

    /// Whether this process flushed the tail into a segment since it last asked, and a merge is
    /// due now: what a command that wrote asks before it starts a merger (a read that finds
    /// merges due, say under other settings, starts none).
    public func takeMergeDueAfterFlush() -> Bool {
        state.withLock { state in
            defer { state.flushedSinceAsked = false }
            return state.flushedSinceAsked && mergeIsDue(state)
        }
    }

    /// Whether this store's writes leave due merges to `runDueMerges()` (`Options.mergesInBackground`).
    public var mergesInBackground: Bool { options.mergesInBackground }

    /// Whether a merger (in any process) holds the merge lock now.
    public var isMerging: Bool {
        guard let lock = try? fileSystem.lockExclusively(path(FileNames.mergeLock), timeout: 0) else {
            return (try? fileSystem.status(of: path(FileNames.mergeLock))) != nil
        }
        lock.release()
        return false
    }

    /// Runs the merges the policy calls for, one after another, each built without the writers'
    /// lock (writers wait only while one is planned and while one is installed). Waits up to
    /// `waiting` seconds for another merger to finish first; returns how many merges were
    /// installed (0 when another merger holds the merge lock past `waiting`). A merge whose
    /// inputs another process replaced meanwhile (a merge under the writers' lock, a `compact`) is
    /// dropped and planned again. A failure leaves the folder as it was: segments are derived.
    @discardableResult
    public func runDueMerges(waiting: Double = 0) throws(StoreError) -> Int {
        guard options.usesSegments else { return 0 }
        try fileSystem.createFolder(path(FileNames.segments))
        let mergeLock: any FileLockToken
        do {
            mergeLock = try fileSystem.lockExclusively(path(FileNames.mergeLock), timeout: waiting)
        } catch {
            if case .locked = error { return 0 }
            throw error
        }
        defer { mergeLock.release() }
        try clearMergingFolder()
        var installed = 0
        var planned = 0
        while planned < 64, let pending = try planMerge() {
            planned += 1
            let record: Manifest.Segment?
            do {
                record = try buildMerge(pending)
            } catch {
                try? clearMergingFolder()
                throw error
            }
            if try installMerge(pending, record) { installed += 1 }
            try clearMergingFolder()
        }
        return installed
    }

    /// Removes what an earlier merger left in `segments/merging/` (the merge lock held).
    func clearMergingFolder() throws(StoreError) {
        for name in try fileSystem.entries(ofFolder: path(FileNames.merging)) ?? [] {
            _ = try fileSystem.removeFile(path(FileNames.merging + "/" + name))
        }
    }

    /// Plans the next due merge under the writers' lock: its inputs as they are now, and a number
    /// for the new segment (a manifest with the next number moved past it is installed, so that
    /// no flush takes it). Nil when no merge is due.
    func planMerge() throws(StoreError) -> PendingMerge? {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try withState(lockHeld: true) { (state: inout State) throws(StoreError) -> PendingMerge? in
            try self.refresh(&state, lockHeld: true)
            // A merger that reads no tail leaves an interrupted write to the next writer.
            if self.options.readsTail { try self.recoverLocked(&state) }
            guard var manifest = state.manifest, let numbers = self.mergePolicy.nextMerge(manifest.segments) else { return nil }
            var inputs: [SegmentMerger.Input] = []
            for number in numbers {
                guard let segment = state.entries.segments.first(where: { $0.record.number == number }) else { continue }
                inputs.append(self.mergeInput(segment, masking: []))
            }
            guard !inputs.isEmpty else { return nil }
            let number = manifest.nextNumber
            manifest.nextNumber = number + 1
            try self.install(manifest, &state)
            return PendingMerge(inputs: inputs, number: number, projection: state.projection)
        }
    }

    /// Builds a planned merge into `segments/merging/` (synced), holding no lock but the merge
    /// lock; returns the manifest's record of the new segment, or nil when nothing of the inputs
    /// is live (the merge then only drops them).
    func buildMerge(_ pending: PendingMerge) throws(StoreError) -> Manifest.Segment? {
        try fileSystem.createFolder(path(FileNames.merging))
        let merger = try table(try SegmentMerger(pending.inputs, fileSystem: fileSystem, spillFolder: path(FileNames.merging)))
        let record = try writeMerge(
            merger, number: pending.number, projection: pending.projection, to: pending.aside, through: path(pending.aside + ".new"))
        // What the merge allocated (its cursors, postings, chunks) goes back to the system.
        ProcessMemory.releaseFreePages()
        return record
    }

    /// Installs a built merge under the writers' lock: when the live manifest still names every
    /// input, the documents and tombstones deleted in them since the merge was planned are
    /// deleted in the new segment too (found by ID), the new segment is renamed into
    /// `segments/`, and a manifest names it in its inputs' place. False (nothing changed) when an
    /// input is gone.
    func installMerge(_ pending: PendingMerge, _ built: Manifest.Segment?) throws(StoreError) -> Bool {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        return try withState(lockHeld: true) { (state: inout State) throws(StoreError) -> Bool in
            try self.refresh(&state, lockHeld: true)
            // A merger that reads no tail leaves an interrupted write to the next writer.
            if self.options.readsTail { try self.recoverLocked(&state) }
            guard var manifest = state.manifest, pending.inputsAreLive(in: manifest) else { return false }
            var record = built
            if var merged = record {
                let carried = try self.carriedDeletes(pending, into: merged, current: state.entries.segments)
                if !carried.ordinals.isEmpty {
                    merged.deletesGeneration = 1
                    merged.deletedDocuments = carried.ordinals.count - carried.tombstones
                    merged.deletedTombstones = carried.tombstones
                    merged.liveBytes -= carried.bytes
                    try self.writeSegmentFile(
                        SegmentDeletes(segment: merged.number, ordinals: carried.ordinals).encoded(), named: merged.deletesFileName!)
                }
                try self.fileSystem.rename(self.path(pending.aside), to: self.path(FileNames.segments + "/" + merged.fileName))
                record = merged
            }
            let numbers = Set(pending.inputs.map(\.segment.record.number))
            let position = manifest.segments.firstIndex { numbers.contains($0.number) } ?? manifest.segments.count
            manifest.segments.removeAll { numbers.contains($0.number) }
            if let record { manifest.segments.insert(record, at: min(position, manifest.segments.count)) }
            try self.install(manifest, &state)
            return true
        }
    }

    /// What newer changes deleted in a merge's inputs since it was planned, as ordinals of the new
    /// segment (ascending), with how many are tombstones and the bytes of the documents.
    private func carriedDeletes(
        _ pending: PendingMerge, into record: Manifest.Segment, current: [OpenSegment]
    ) throws(StoreError) -> (ordinals: [UInt32], tombstones: Int, bytes: Int) {
        var ordinals: [UInt32] = []
        var tombstones = 0
        var bytes = 0
        var merged: MappedSegment?
        for input in pending.inputs {
            guard let segment = current.first(where: { $0.record.number == input.segment.record.number }) else { continue }
            for ordinal in segment.deletedOrdinals where !input.segment.isDeleted(ordinal) {
                if merged == nil {
                    guard let file = try fileSystem.mappedContentsForRandomReads(of: path(pending.aside)) else {
                        throw .damagedSnapshot(path: path(pending.aside), reason: "the merged segment is missing")
                    }
                    merged = try table(try MappedSegment(SegmentReader(file)))
                }
                guard let merged else { continue }
                if ordinal < segment.mapped.count {
                    let id = try table(try segment.mapped.id(at: ordinal))
                    guard let new = try table(try merged.ordinal(of: id)) else { continue }
                    ordinals.append(UInt32(new))
                    bytes += try table(try segment.mapped.size(at: ordinal))
                } else {
                    let id = try table(try segment.mapped.tombstone(at: ordinal - segment.mapped.count)).id
                    guard let index = try table(try merged.tombstoneIndex(of: id)) else { continue }
                    ordinals.append(UInt32(merged.count + index))
                    tombstones += 1
                }
            }
        }
        ordinals.sort()
        return (ordinals, tombstones, bytes)
    }
}
