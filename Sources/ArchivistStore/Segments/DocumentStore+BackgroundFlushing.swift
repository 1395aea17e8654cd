import ArchivistBase
import Foundation

/// A bulk import's flushes built beside its writes (`docs/ARCHITECTURE.md`, "Flushes beside the
/// writes"): at the commit that brings the tail to the threshold, the tail as it is (its entries,
/// its removals, how far the log was read) is handed to another thread, which writes its segment
/// into `segments/flushing/` while the next batches commit; a later commit installs it under the
/// writers' lock, as a merge is installed: what it supersedes in older segments deleted, the file
/// renamed into `segments/`, a manifest that names it and covers the log as far as the flushed
/// tail, and the lines after that read again as the tail. The log stays the truth throughout: a
/// flush that fails, is dropped or dies with its process leaves the tail in the log, for the next.
extension DocumentStore {
    /// Whether this commit's flush may be built in the background: a bulk import's, into a folder
    /// that has a manifest to install it in.
    func mayFlushInBackground(_ state: State) -> Bool {
        options.flushesInBackground && options.readsTail && state.deferFlushes && state.manifest != nil && !state.refusesSegments
    }

    /// Plans a flush of the tail and starts its build on another thread (the lock held): its
    /// number is reserved in the manifest, so that no other flush or merge takes it. False when
    /// the tail holds nothing to flush.
    func planBackgroundFlush(_ state: inout State) throws(StoreError) -> Bool {
        guard var manifest = state.manifest, state.pendingFlush == nil else { return false }
        let entries = try table(try state.entries.changedEntries())
        let removals = state.entries.tailRemovals()
        guard !entries.isEmpty || !removals.isEmpty else { return false }
        try clearAbandonedFlushes()
        try fileSystem.createFolder(path(FileNames.flushing))
        let number = manifest.nextNumber
        manifest.nextNumber = number + 1
        try writeManifest(manifest, &state)
        let flush = PendingFlush(
            number: number, position: state.index, coverage: manifest.coverage, projection: state.projection,
            ids: entries.map(\.id) + removals.map(\.id), processIdentifier: Self.processIdentifier)
        let index = state.index
        let projection = state.projection
        let aside = path(flush.aside + ".new")
        DispatchQueue.global(qos: .utility).async {
            let result = Result { () throws(StoreError) -> Manifest.Segment in
                try self.writeSegment(
                    number: number, entries: entries, removals: removals, index: index, projection: projection, to: flush.aside,
                    through: aside)
            }
            if case .failure = result { _ = try? self.fileSystem.removeFile(aside) }
            flush.finish(result)
        }
        state.pendingFlush = flush
        if options.waitsForBackgroundFlushes, case .failure(let error) = flush.result() {
            state.pendingFlush = nil
            throw error
        }
        return true
    }

    /// Installs the flush this process builds in the background once it is built (waiting for it
    /// when `waiting`), the lock held. A flush whose folder changed under it since it was planned
    /// (another flush, a compaction, a rebuild: the manifest's coverage is not the one it was
    /// planned against) is dropped, its file removed: its tail is still in the log. A build that
    /// failed is dropped and its error thrown, as a flush's would be. An installed one is followed
    /// by the merges due, as any flush.
    func installBackgroundFlush(_ state: inout State, waiting: Bool) throws(StoreError) {
        guard let flush = state.pendingFlush, waiting || flush.isFinished else { return }
        state.pendingFlush = nil
        let record: Manifest.Segment
        switch flush.result() {
        case .success(let built): record = built
        case .failure(let error): throw error
        }
        guard var manifest = state.manifest, manifest.coverage == flush.coverage, !state.refusesSegments,
            state.index.identity == flush.position.identity, state.index.consumed >= flush.position.consumed,
            state.projection == flush.projection
        else {
            _ = try? fileSystem.removeFile(path(flush.aside))
            return
        }
        do {
            manifest.segments = try supersede(flush.ids, in: state.entries, manifest: manifest, tailMasks: false)
            try fileSystem.rename(path(flush.aside), to: path(FileNames.segments + "/" + record.fileName))
        } catch {
            _ = try? fileSystem.removeFile(path(flush.aside))
            throw error
        }
        manifest.segments.append(record)
        manifest.coverage = try coverage(of: flush.position)
        try install(manifest, &state)
        state.flushedSinceAsked = true
        ProcessMemory.releaseFreePages()
        try mergeAfterFlush(&state)
    }

    /// Waits for the flush this process builds in the background and installs it (under the
    /// writers' lock): what a bulk import does when its last batch is in, so that the folder it
    /// leaves has its segment.
    public func finishBackgroundFlush() throws(StoreError) {
        guard state.withLock({ $0.pendingFlush != nil }) else { return }
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        try withState(lockHeld: true) { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            try self.installBackgroundFlush(&state, waiting: true)
        }
    }

    /// Removes the files of `segments/flushing/` that processes which have ended left (the lock
    /// held). This process's own are left alone: another store of the folder in it may be
    /// building one, and a build of its own removes what it wrote when it fails or is dropped.
    func clearAbandonedFlushes() throws(StoreError) {
        for name in try fileSystem.entries(ofFolder: path(FileNames.flushing)) ?? [] {
            if let builder = PendingFlush.builder(ofAside: name) {
                if builder == Self.processIdentifier || kill(builder, 0) == 0 || errno == EPERM { continue }
            }
            _ = try fileSystem.removeFile(path(FileNames.flushing + "/" + name))
        }
    }
}
