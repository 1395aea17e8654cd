import ArchivistBase
import Foundation

extension DocumentStore {
    /// What opening this store migrated, or nil when the folder already had the current format
    /// (only the process that migrates a folder sees it, so it is said once).
    public var migration: FormatMigration? {
        state.withLock { $0.migration }
    }

    /// Brings a folder of an older format to the current one, under the writers' lock.
    ///
    /// Formats 2 to 4 add only derived data (the snapshot, then the segments that replace it),
    /// so migrating builds the segments from the log (a chunk at a time), removes the old
    /// `index.snapshot`, then records the new format in `archivist.json`; the documents and
    /// `index.jsonl` are not touched. Every file is written aside, synced and renamed: a crash
    /// before the metadata's rename leaves a folder of the old format (with or without its
    /// segments), which the next open migrates again.
    func migrateIfNeeded() throws(StoreError) {
        // A merger leaves the migration to the next writer (`Options.readsTail`).
        guard options.readsTail, state.withLock({ $0.metadata.format }) < StoreMetadata.currentFormat else { return }
        let lock: any FileLockToken
        do {
            lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        } catch  where error.isReadOnlyFolder {
            // A folder that cannot be written (a read-only mount, another user's folder) is read
            // as it is: this build reads every older format, and the first writer migrates it.
            return
        }
        defer { lock.release() }
        try withState(lockHeld: true) { (state: inout State) throws(StoreError) in
            // Another process may have migrated the folder (or written to it) while this one waited.
            try self.reopen(&state, lockHeld: true)
            let from = state.metadata.format
            guard from < StoreMetadata.currentFormat else { return }
            let builds = options.usesSegments && (state.manifest == nil || state.entries.tailCount > 0)
            if builds {
                if state.manifest == nil { try self.rebuildSegments(&state) } else { try self.flush(&state) }
            }
            if try fileSystem.status(of: path(FileNames.snapshot)) != nil {
                try fileSystem.removeFile(path(FileNames.snapshot))
            }
            var metadata = state.metadata
            metadata.format = StoreMetadata.currentFormat
            try self.writeDurably(metadata.encoded(), to: FileNames.metadata)
            state.metadata = metadata
            state.migration = FormatMigration(
                from: from, to: metadata.format, documents: try table(try state.entries.count),
                builtSnapshot: builds || state.builtSegmentsAtOpen)
        }
    }
}

extension StoreError {
    /// Whether the error is the system's refusal to write: a read-only file system, or no
    /// permission.
    var isReadOnlyFolder: Bool {
        guard case .io(_, _, let message) = self else { return false }
        return [EROFS, EACCES, EPERM].contains { message == String(cString: strerror($0)).lowercased() }
    }
}
