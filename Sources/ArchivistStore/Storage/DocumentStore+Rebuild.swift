import ArchivistBase

/// A rebuild of the log from the documents that keeps every number the changes feed gave out
/// (`repair` of a readable index, `index add` and `index drop`): `docs/FORMAT.md`, "Sequence
/// numbers".
extension DocumentStore {
    /// Writes a new log from the documents and the old log (which the state was read from, to its
    /// end), the lock held, and installs it; the caller then builds the segments again.
    ///
    /// A document whose content (hash and size) is its live entry's keeps that entry's number and
    /// times, its fields derived again from it (with the state's projection); a changed or new
    /// document gets a new number above every number given out; an ID whose live entry has no
    /// document any more gets a new removal line (with the fields the entry held); the
    /// tombstones (an ID's last change being a removal) of IDs without a document are kept as
    /// they are. So `changes(since:)` from any number the folder gave out answers, after the
    /// rebuild, with the latest change of every ID changed after it, and the feed's start stays.
    ///
    /// The documents are read once, a bucket at a time (as `scanDocuments` reads them); the lines
    /// that keep their number wait in a temporary file in runs sorted by number, one a bucket,
    /// and are merged with a walk of the old log in number order (`SequenceRuns`). What is held
    /// in memory is one bucket's documents and the IDs that changed, not the store.
    /// Returns the problems of the files that are not a document in its place (`fileProblem`).
    func rebuildKeepingNumbers(_ state: inout State) throws(StoreError) -> [StoreProblem] {
        let entries = state.entries
        let end = state.index.consumed
        let floor = state.lastSequence
        let output = try temporaryPath(for: FileNames.index)
        let kept = SequenceRuns(fileSystem: fileSystem, path: try temporaryPath(for: FileNames.index + ".kept"))
        let fresh = SpillBuffer(fileSystem: fileSystem, path: try temporaryPath(for: FileNames.index + ".fresh"))
        let gone = SpillBuffer(fileSystem: fileSystem, path: try temporaryPath(for: FileNames.index + ".gone"))
        defer {
            kept.discard()
            fresh.discard()
            gone.discard()
        }
        // The IDs the log knows (a live entry or a tombstone) whose document is new or changed.
        var changed: Set<DocumentID> = []
        var findings: [StoreProblem] = []
        var next = floor + 1
        do throws(StoreError) {
            try fileSystem.write([], to: output)
            // 1. The documents: each one keeps its line's number, or gets a new one.
            try scanDocuments(projection: state.projection, known: entries) { (_, files) throws(StoreError) in
                var run: [(sequence: Int, bytes: [UInt8])] = []
                var batch = ChangeLog.Batch(firstSequence: next)
                for file in files {
                    guard case .document(let entry) = file.content else {
                        if let problem = fileProblem(file) { findings.append(problem) }
                        continue
                    }
                    let key = DocumentID(entry.id)
                    let fields = try fieldsBytes(of: entry)
                    if let live = try table(try entries.entry(key)), live.sequence > 0, live.hash == entry.hash, live.size == entry.size {
                        var same = entry
                        same.storedAt = live.storedAt
                        same.updatedAt = live.updatedAt
                        let line = ChangeLog.entryLine(same, sequence: live.sequence, fields: fields, file: documentPath(for: same.id))
                        run.append((live.sequence, line))
                        continue
                    }
                    if try table(try entries.lastChange(key)) != nil { changed.insert(key) }
                    batch.append(entry, fields: fields, file: file.file)
                }
                try kept.addRun(run)
                // A look-up per document: the segments' pages are let go after each bucket.
                entries.dropResidentPages()
                if batch.count > 0 {
                    try fresh.append(batch.bytes)
                    next = batch.nextSequence
                }
            }
            // 2. The old log in number order: each ID's last change, merged with the lines kept.
            var merge = try kept.merged()
            var pending: [UInt8] = []
            pending.reserveCapacity(1 << 20)
            var removals = ChangeLog.Batch(firstSequence: next)
            var failure: StoreError?
            var numbersStated = false
            var walk = LastChangeWalk(entries)
            let walked = try changeLog.forEachLine(end: end) { line, bytes, sequence, offset in
                do throws(StoreError) {
                    if let first = merge.nextSequence, first < sequence {
                        throw .io(path: changeLog.path, operation: "read", message: "no line numbered \(first) (the index changed)")
                    }
                    let key = DocumentID(line.id)
                    let verdict = try table(try walk.verdict(key, at: sequence))
                    switch line {
                    case .entry(let entry):
                        guard verdict == .liveEntry else { return true }
                        if merge.nextSequence == sequence {
                            pending.append(contentsOf: try merge.take())
                            pending.append(0x0A)
                        } else if !changed.contains(key) {
                            // Its document is gone: a removal, with the fields the entry held.
                            var fields: [UInt8]?
                            if case .indexFile(let at, let length) = entry.fields, at - offset >= 0, at - offset + length <= bytes.count {
                                fields = Array(bytes[(at - offset)..<(at - offset + length)])
                            }
                            removals.appendRemoval(of: entry.id, at: .now(), fields: fields)
                            if removals.bytes.count >= 1 << 20 {
                                try gone.append(removals.bytes)
                                removals = ChangeLog.Batch(firstSequence: removals.nextSequence)
                            }
                        }
                    case .removal:
                        // A tombstone stays while its ID has no document.
                        guard verdict == .tombstone, !changed.contains(key) else { return true }
                        ChangeLog.appendKept(
                            bytes, lineOffset: offset, sequence: sequence, numbersStated: &numbersStated, to: &pending, schema: schema)
                    }
                    if pending.count >= 1 << 20 {
                        try fileSystem.append(pending, to: output)
                        pending.removeAll(keepingCapacity: true)
                    }
                } catch {
                    failure = error
                    return false
                }
                return true
            }
            if let failure { throw failure }
            guard walked.consumed == end, merge.nextSequence == nil else {
                throw .io(path: changeLog.path, operation: "read", message: "the index changed while it was rebuilt")
            }
            try fileSystem.append(pending, to: output)
            // 3. The new and changed documents, then the removals, numbered after every old number.
            try fresh.drain { (chunk) throws(StoreError) in try fileSystem.append(chunk, to: output) }
            try gone.append(removals.bytes)
            try gone.drain { (chunk) throws(StoreError) in try fileSystem.append(chunk, to: output) }
            next = removals.nextSequence
            var metadata = state.metadata
            metadata.sequenceFloor = max(metadata.sequenceFloor, floor, next - 1)
            // Written first (with the projection the new file is made with, for `index add` and
            // `drop`): a crash between the two renames leaves a floor too high for the old file,
            // so numbers are skipped, never given twice.
            try writeDurably(metadata.encoded(), to: FileNames.metadata)
            state.metadata = metadata
            try install(output, as: FileNames.index)
        } catch {
            _ = try? fileSystem.removeFile(output)
            throw error
        }
        return findings
    }
}
