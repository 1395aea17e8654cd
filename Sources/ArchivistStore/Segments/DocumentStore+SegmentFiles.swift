import ArchivistBase
import Foundation

/// Opening, flushing and installing segments: the write path's last steps (`docs/ARCHITECTURE.md`).
///
/// A flush writes the tail (the log lines after the segments) into a new segment, records in the
/// older segments' deletes files what the tail superseded, and installs a manifest that names the
/// new set and covers the log to its end; a merge replaces a few segments by one. Every file is
/// written aside, synced and renamed, and the manifest last: a crash at any point leaves the old
/// manifest and its files, or the new ones, never a mix (files no manifest names are removed by
/// the next writer).
extension DocumentStore {
    /// The checksum of what segments depend on besides the documents: the projected paths and the
    /// text fields with their weights.
    static func schemaHash(projection: Projection, textSearch: TextSearch) -> UInt64 {
        var text = "projection\n" + projection.paths.joined(separator: "\n") + "\ntext\n"
        for field in textSearch.fields { text += field.path + "=" + String(field.weight.bitPattern) + "\n" }
        return WordHash.hash(Array(text.utf8))
    }

    /// The manifest's coverage of the log read to `position`.
    func coverage(of position: ChangeLog.Position) throws(StoreError) -> Manifest.Coverage {
        let start = max(0, position.consumed - SegmentFile.Coverage.tailLength)
        let tail = try fileSystem.contents(of: changeLog.path, from: start, limit: position.consumed - start) ?? []
        return Manifest.Coverage(
            identity: position.identity ?? 0, offset: position.consumed, lines: position.lines, sequence: position.sequence,
            tailHash: WordHash.hash(tail))
    }

    // MARK: Opening

    /// Why the folder's segments are not used (for `check` and `stats`), or nil when they are.
    enum SegmentsState: Error, Equatable {
        /// There is no manifest (a new folder, or one whose segments were deleted).
        case missing
        /// The manifest or a file it names cannot be used: why.
        case unusable(String)
    }

    /// The manifest in the folder with its segments opened and their deletions loaded, when they
    /// hold the log as it is: built with this projection and text search, of this log file (its
    /// identity, and the same bytes before the offset they cover). Otherwise why not (derived data:
    /// the next writer builds them again). A segment file that a writer removed between the reads
    /// of the manifest and of the file makes it read the manifest again.
    func currentSegments(projection: Projection) throws(StoreError) -> Result<(Manifest, [OpenSegment]), SegmentsState> {
        try currentSegmentsRead(projection: projection).map { ($0.0, $0.1) }
    }

    /// `currentSegments`, with the manifest's bytes as read (what `refresh` compares the file
    /// with, so that the first refresh after an open does not decode it again).
    func currentSegmentsRead(projection: Projection) throws(StoreError) -> Result<(Manifest, [OpenSegment], [UInt8]), SegmentsState> {
        var attempts = 0
        while true {
            attempts += 1
            guard let bytes = try fileSystem.contents(of: path(FileNames.manifest)) else { return .failure(.missing) }
            let opened = try openSegments(manifestBytes: bytes, projection: projection)
            if case .failure(.unusable(let reason)) = opened, reason.hasSuffix("is missing"), attempts < 5,
                try fileSystem.contents(of: path(FileNames.manifest)) != bytes
            {
                continue
            }
            return opened.map { ($0.0, $0.1, bytes) }
        }
    }

    private func openSegments(
        manifestBytes bytes: [UInt8], projection: Projection
    ) throws(StoreError) -> Result<
        (Manifest, [OpenSegment]), SegmentsState
    > {
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(bytes, path: path(FileNames.manifest))
        } catch {
            return .failure(.unusable(error.errorDescription ?? "unreadable"))
        }
        let schemaHash = Self.schemaHash(projection: projection, textSearch: schema.textSearch)
        guard manifest.schemaHash == schemaHash else {
            return .failure(.unusable("built with another projection or text search"))
        }
        let coverage = manifest.coverage
        if coverage.offset > 0 || !manifest.segments.isEmpty {
            guard let status = try fileSystem.status(of: changeLog.path), status.identity == coverage.identity,
                status.size >= coverage.offset
            else { return .failure(.unusable("made of another index.jsonl (compacted, rebuilt or replaced since)")) }
            let position = ChangeLog.Position(
                identity: coverage.identity, consumed: coverage.offset, lines: coverage.lines, sequence: coverage.sequence)
            guard try self.coverage(of: position).tailHash == coverage.tailHash else {
                return .failure(.unusable("index.jsonl differs before the point the segments cover"))
            }
        }
        var segments: [OpenSegment] = []
        for record in manifest.segments {
            let file = FileNames.segments + "/" + record.fileName
            guard let bytes = try fileSystem.mappedContentsForRandomReads(of: path(file)) else {
                return .failure(.unusable("\(file) is missing"))
            }
            let mapped: MappedSegment
            do throws(SegmentDamage) {
                mapped = try MappedSegment(SegmentReader(bytes))
            } catch {
                return .failure(.unusable("\(file): \(error.description)"))
            }
            guard mapped.isSegmentFile, mapped.number == record.number, mapped.count == record.documents,
                mapped.tombstoneCount == record.tombstones, mapped.reader.footer.checksum == record.footerHash,
                mapped.reader.footer.schemaHash == schemaHash, mapped.paths == projection.paths
            else { return .failure(.unusable("\(file) is not the segment the manifest names")) }
            var deletes: SegmentDeletes?
            if let name = record.deletesFileName {
                let deletesFile = FileNames.segments + "/" + name
                guard let bytes = try fileSystem.contents(of: path(deletesFile)) else {
                    return .failure(.unusable("\(deletesFile) is missing"))
                }
                do throws(SegmentDamage) {
                    deletes = try SegmentDeletes.decode(bytes, segment: record.number, limit: mapped.count + mapped.tombstoneCount)
                } catch {
                    return .failure(.unusable("\(deletesFile): \(error.description)"))
                }
                let documents = deletes!.ordinals.filter { Int($0) < mapped.count }.count
                guard documents == record.deletedDocuments, deletes!.ordinals.count - documents == record.deletedTombstones else {
                    return .failure(.unusable("\(deletesFile) does not hold what the manifest says"))
                }
            }
            segments.append(OpenSegment(record: record, mapped: mapped, deletes: deletes))
        }
        return .success((manifest, segments))
    }

    /// Starts the state from the current segments and the log lines after them; false (the state
    /// untouched) when there are no usable segments or the log after them cannot be followed.
    func loadFromSegments(_ state: inout State) throws(StoreError) -> Bool {
        let opened = state.opened
        state.opened = nil
        guard options.usesSegments, !state.refusesSegments else { return false }
        let manifest: Manifest
        let segments: [OpenSegment]
        let manifestBytes: [UInt8]
        if let opened {
            (manifest, segments, manifestBytes) = opened
        } else {
            guard case .success(let found) = try currentSegmentsRead(projection: state.projection) else { return false }
            (manifest, segments, manifestBytes) = found
        }
        var entries = EntryTable(segments: segments)
        let coverage = manifest.coverage
        var position = ChangeLog.Position(
            identity: coverage.offset == 0 && segments.isEmpty ? nil : coverage.identity, consumed: coverage.offset,
            lines: coverage.lines, sequence: coverage.sequence)
        var damage: SegmentDamage?
        var lines = 0
        // A merger (`Options.readsTail` false) stops at the segments' coverage.
        let progress =
            options.readsTail
            ? try changeLog.follow(&position) { line in
                lines += 1
                do throws(SegmentDamage) { try entries.apply(line) } catch { damage = error }
            } : .current
        state.linesFollowed += lines
        guard progress != .replaced, damage == nil else { return false }
        state.entries = entries
        state.index = position
        state.manifest = manifest
        state.manifestBytes = manifestBytes
        return true
    }

    /// The bytes of one segment (numbered `number`) of every live entry, built in memory from the
    /// log: what a flush of the whole store would write (for tests, and small stores).
    func segmentBytes(number: Int = 1, tombstones: [MappedSegment.Tombstone] = []) throws(StoreError) -> [UInt8] {
        try withState { (state: inout State) throws(StoreError) -> [UInt8] in
            try self.refresh(&state)
            let entries = try self.table(try state.entries.sorted())
            let digests = try self.fieldsDigests(of: entries, index: state.index)
            return try SegmentBuilder.build(
                SegmentBuilder.Contents(entries: entries, digests: digests, tombstones: tombstones), number: number,
                projection: state.projection, textSearch: schema.textSearch,
                columns: { (paths, positions) throws(StoreError) in
                    try self.readColumns(paths, of: positions.count == entries.count ? entries : Array(entries[positions]), &state)
                }, schemaHash: Self.schemaHash(projection: state.projection, textSearch: schema.textSearch))
        }
    }

    // MARK: Flushing

    /// Writes the tail into a new segment when it holds `flushThreshold` changes or more
    /// (`bulkFlushThreshold` during a bulk import) (the lock held), then merges what the policy
    /// calls for. A failure leaves the segments as they were (the tail stays in the log, and the
    /// next writer flushes it).
    func flushIfDue(_ state: inout State) {
        let threshold = state.deferFlushes ? options.bulkFlushThreshold : options.flushThreshold
        guard options.usesSegments, options.flushThreshold > 0 else { return }
        do {
            if state.pendingFlush != nil {
                // A flush built in the background is installed at the first commit after it is
                // built; a commit waits for it only once the tail has grown by another threshold
                // (the memory of two tails at most), or once the import no longer defers.
                try installBackgroundFlush(
                    &state,
                    waiting: options.waitsForBackgroundFlushes || !state.deferFlushes || state.entries.tailCount >= 2 * threshold)
                if state.pendingFlush != nil { return }
            }
            guard state.entries.tailCount >= threshold else { return }
            if mayFlushInBackground(state), try planBackgroundFlush(&state) { return }
            try flushAndMerge(&state)
            state.lastFlushFailure = nil
        } catch {
            // The commit before it stands: segments are only ever an accelerator.
            state.lastFlushFailure = error
        }
    }

    /// Writes the tail into a new segment and merges what the policy calls for (the lock held).
    /// Without usable segments and with a large tail, the segments are built from the log a chunk
    /// at a time; a merge that finds a segment damaged has them built again from the log (derived
    /// data), rather than leaving every later writer to find the damage again.
    func flushAndMerge(_ state: inout State) throws(StoreError) {
        // A flush this process builds in the background goes in first (its tail is older); one
        // that cannot is dropped: the flush below covers its tail as well.
        if state.pendingFlush != nil { try? installBackgroundFlush(&state, waiting: true) }
        if state.manifest == nil, state.entries.tailCount > options.bulkFlushThreshold {
            try rebuildSegments(&state)
        } else {
            try flush(&state)
        }
        try mergeAfterFlush(&state)
    }

    /// Runs the merges the policy calls for after a flush: all of them, unless a merger in the
    /// background takes them (then only once `mergeFactor × 6` segments wait).
    func mergeAfterFlush(_ state: inout State) throws(StoreError) {
        if options.mergesInBackground, (state.manifest?.segments.count ?? 0) < options.mergeFactor * 6 { return }
        do {
            try mergeIfDue(&state)
        } catch {
            guard case .damagedSnapshot = error else { throw error }
            try rebuildSegments(&state)
        }
    }

    /// Writes the tail into a new segment and installs it (the lock held, the log read to its end).
    func flush(_ state: inout State) throws(StoreError) {
        if !state.entries.hasSegments && state.manifest == nil {
            // The first segment of a folder, or one whose segments were unusable: leftovers of
            // earlier ones are not this manifest's.
            try removeUnlistedSegmentFiles(keeping: nil)
        }
        var manifest: Manifest
        if let current = state.manifest {
            manifest = current
        } else {
            manifest = Manifest(
                schemaHash: Self.schemaHash(projection: state.projection, textSearch: schema.textSearch),
                coverage: try coverage(of: ChangeLog.Position()), nextNumber: 1, segments: [])
        }
        let entries = try table(try state.entries.changedEntries())
        let removals = state.entries.tailRemovals()
        if !entries.isEmpty || !removals.isEmpty {
            let number = manifest.nextNumber
            let record = try writeSegment(
                number: number, entries: entries, removals: removals, index: state.index, projection: state.projection)
            manifest.nextNumber = number + 1
            manifest.segments = try supersede(entries.map(\.id) + removals.map(\.id), in: state.entries, manifest: manifest)
            manifest.segments.append(record)
        }
        manifest.coverage = try coverage(of: state.index)
        try install(manifest, &state)
        state.flushedSinceAsked = true
        // The tail's build (its postings, dictionaries and entries) is freed: let the heap go.
        ProcessMemory.releaseFreePages()
    }

    /// Builds segment `number` of the tail's entries and removals, their lines read from the log
    /// as of `index` (a file aside, synced, renamed to `relative`: by default its place in
    /// `segments/`), and returns the manifest's record of it. It reads no state: a background
    /// flush calls it without the lock.
    func writeSegment(
        number: Int, entries: [IndexEntry], removals: [ChangeLog.Removal], index: ChangeLog.Position, projection: Projection,
        to relative: String? = nil, through aside: String? = nil
    ) throws(StoreError) -> Manifest.Segment {
        let digests = try fieldsDigests(of: entries, index: index)
        var tombstones: [MappedSegment.Tombstone] = []
        for removal in removals {
            let digest = try removal.fields.map { (fields) throws(StoreError) in
                SegmentBuilder.fieldsDigest(
                    try changeLog.fieldsBytes(
                        of: IndexEntry(id: removal.id, hash: 0, size: 0, storedAt: .now(), updatedAt: .now(), fields: fields)))
            }
            tombstones.append(
                MappedSegment.Tombstone(
                    id: removal.id, sequence: removal.sequence, removedAt: removal.removedAt ?? Timestamp(milliseconds: 0),
                    fieldsDigest: digest ?? 0))
        }
        let contents = SegmentBuilder.Contents(entries: entries, digests: digests, tombstones: tombstones)
        // Every projected value of the flush read in one pass over its lines (a flush is bounded:
        // its columns are), not one pass a field.
        let all = try readColumns(projection.paths, of: entries, index: index)
        let columns: SegmentBuilder.Columns = { (paths, positions) throws(StoreError) in
            var result: [String: [JSONValue?]] = [:]
            for path in paths {
                guard let column = all[path] else { continue }
                result[path] = positions.count == column.count ? column : Array(column[positions])
            }
            return result
        }
        let schemaHash = Self.schemaHash(projection: projection, textSearch: schema.textSearch)
        let file = relative ?? FileNames.segments + "/" + Manifest.fileName(number: number)
        let textSearch = schema.textSearch
        let written = try writeStreamed(to: file, through: aside) { (writer) throws(StoreError) in
            try SegmentBuilder.build(
                into: &writer, contents, number: number, projection: projection, textSearch: textSearch, columns: columns,
                textColumns: entries.count >= 4096 ? columns : nil, schemaHash: schemaHash)
        }
        let range = contents.sequenceRange
        return Manifest.Segment(
            number: number, documents: entries.count, tombstones: tombstones.count, bytes: written.bytes,
            firstSequence: range.first, lastSequence: range.last, footerHash: written.footerHash,
            liveBytes: entries.reduce(0) { $0 + $1.size })
    }

    /// The digest of each entry's fields (`SegmentBuilder.fieldsDigest`), read from the log (one
    /// mapping of it) or memory.
    func fieldsDigests(of entries: [IndexEntry], index: ChangeLog.Position) throws(StoreError) -> [UInt64] {
        let needsFile = entries.contains { if case .indexFile = $0.fields { return true } else { return false } }
        let log = needsFile ? try fileSystem.mappedContentsForRandomReads(of: changeLog.path) ?? FileBytes([]) : FileBytes([])
        var digests: [UInt64] = []
        digests.reserveCapacity(entries.count)
        for entry in entries {
            switch entry.fields {
            case .indexFile(let offset, let length) where offset + length <= log.buffer.count:
                digests.append(
                    WordHash.striped(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(log.buffer)[offset..<(offset + length)])))
            case .logLine(let digest):
                digests.append(digest)
            default:
                digests.append(SegmentBuilder.fieldsDigest(try changeLog.fieldsBytes(of: entry)))
            }
        }
        return digests
    }

    /// The segments' records once what the IDs' changes supersede is deleted: each live document
    /// the tail masked and each live tombstone of one of `ids`. A segment with new deletions gets
    /// a new generation of its deletes file (written, synced, renamed into `segments/`).
    /// With `tailMasks` false, only the live documents of `ids` are deleted, not every one the
    /// tail masks: a flush built in the background covers the log only as far as its own tail,
    /// and what the lines after that supersede is theirs to delete when they are flushed.
    func supersede(
        _ ids: [String], in entries: EntryTable, manifest: Manifest, tailMasks: Bool = true
    ) throws(StoreError) -> [Manifest.Segment] {
        var records = manifest.segments
        var masked: [Set<Int>]
        if tailMasks {
            masked = try table(try entries.masks())
        } else {
            masked = [Set<Int>](repeating: [], count: entries.segments.count)
            for case let (place, ordinal)? in try table(try entries.locateAll(ids.map { DocumentID($0) })) { masked[place].insert(ordinal) }
        }
        for (place, segment) in entries.segments.enumerated() {
            var more = masked[place].map { UInt32($0) }
            var bytes = 0
            for ordinal in masked[place] { bytes += try table(try segment.mapped.size(at: ordinal)) }
            var tombstones = 0
            if segment.mapped.tombstoneCount > 0 {
                // As `EntryTable.locateAll`: a flush's many look-ups let the segment's pages go.
                let drops = ids.count >= EntryTable.lookupsBetweenDrops
                defer { if drops { segment.mapped.reader.file.dropResidentPages() } }
                for (step, id) in ids.enumerated() {
                    if drops, step > 0, step % EntryTable.lookupsBetweenDrops == 0 { segment.mapped.reader.file.dropResidentPages() }
                    var id = id
                    let hash = id.withUTF8 { IDFilter.hash(UnsafeRawBufferPointer($0)) }
                    guard try table(try segment.mapped.mayContain(idHash: hash)),
                        let index = try table(try segment.mapped.tombstoneIndex(of: id))
                    else { continue }
                    let ordinal = segment.mapped.count + index
                    if !segment.isDeleted(ordinal) {
                        more.append(UInt32(ordinal))
                        tombstones += 1
                    }
                }
            }
            guard !more.isEmpty else { continue }
            var record = segment.record
            let deletes = SegmentDeletes(segment: record.number, ordinals: segment.deletedOrdinals.map { UInt32($0) }).adding(more)
            record.deletesGeneration += 1
            record.deletedDocuments += masked[place].count
            record.deletedTombstones += tombstones
            record.liveBytes -= bytes
            try writeSegmentFile(deletes.encoded(), named: record.deletesFileName!)
            guard let position = records.firstIndex(where: { $0.number == record.number }) else { continue }
            records[position] = record
        }
        return records
    }

    // MARK: Installing

    /// Writes a file of `segments/` whole: aside in `tmp/`, synced, renamed (the folder synced by
    /// the manifest's install).
    func writeSegmentFile(_ bytes: [UInt8], named name: String) throws(StoreError) {
        try fileSystem.createFolder(path(FileNames.segments))
        let temporary = try temporaryPath(for: FileNames.segments + "/" + name)
        do {
            try fileSystem.write(bytes, to: temporary)
            try fileSystem.synchronize(temporary)
            try fileSystem.rename(temporary, to: path(FileNames.segments + "/" + name))
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error
        }
    }

    /// Streams a segment file written by `body` to `tmp/` (or to `aside`, a path), a MiB at a
    /// time, syncs it and renames it to `relative`; returns its size and footer checksum. With
    /// `spillingChecksumsTo` (a merge's output), the block checksums past the first 65,536 (512 KiB)
    /// wait in that file, not in memory.
    func writeStreamed(
        to relative: String, through aside: String? = nil, spillingChecksumsTo hashSpillPath: String? = nil,
        _ body: (inout SegmentWriter) throws(StoreError) -> Void
    ) throws(StoreError) -> (bytes: Int, footerHash: UInt64) {
        try fileSystem.createFolder(path(FileNames.segments))
        let temporary: String
        if let aside { temporary = aside } else { temporary = try temporaryPath(for: relative) }
        try fileSystem.write([], to: temporary)
        let fileSystem = self.fileSystem
        final class Pending: @unchecked Sendable {
            var bytes: [UInt8] = []
            var total = 0
        }
        let pending = Pending()
        func flush() throws(StoreError) {
            guard !pending.bytes.isEmpty else { return }
            try fileSystem.append(pending.bytes, to: temporary)
            pending.total += pending.bytes.count
            pending.bytes.removeAll(keepingCapacity: true)
        }
        let footer: SegmentFooter?
        do {
            let hashSpill = hashSpillPath.map { SpillBuffer(fileSystem: fileSystem, path: $0, limit: 1 << 19) }
            var writer = SegmentWriter(hashSpill: hashSpill) { (bytes) throws(StoreError) in
                pending.bytes.append(contentsOf: bytes)
                if pending.bytes.count >= 1 << 20 { try flush() }
            }
            try body(&writer)
            footer = writer.footer
            try flush()
            try fileSystem.synchronize(temporary)
            try fileSystem.rename(temporary, to: path(relative))
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error
        }
        return (pending.total, footer?.checksum ?? 0)
    }

    /// Writes `manifest` (aside in `tmp/`, synced, renamed, the folder synced) and records it as
    /// the state's, without opening its segments: what a change of its next number alone needs.
    func writeManifest(_ manifest: Manifest, _ state: inout State) throws(StoreError) {
        try fileSystem.createFolder(path(FileNames.segments))
        try fileSystem.synchronize(path(FileNames.segments))
        let temporary = try temporaryPath(for: FileNames.manifest)
        let bytes = manifest.encoded()
        do {
            try fileSystem.write(bytes, to: temporary)
            try fileSystem.synchronize(temporary)
            try fileSystem.rename(temporary, to: path(FileNames.manifest))
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error
        }
        try fileSystem.synchronize(path(FileNames.segments))
        state.manifest = manifest
        state.manifestBytes = bytes
    }

    /// Installs a manifest (after the files it names are in place and synced) that covers the log
    /// as far as the state has read it: the segments folder is synced, the manifest written aside,
    /// synced and renamed, the folder synced again; then the state starts from it (with an empty
    /// tail) and the files it no longer names are removed.
    func install(_ manifest: Manifest, _ state: inout State) throws(StoreError) {
        try writeManifest(manifest, &state)
        state.refusesSegments = false
        switch try currentSegments(projection: state.projection) {
        case .success(let (installed, segments)) where installed == manifest:
            // After a flush the manifest covers the log as far as the state has read it; after a
            // merge the tail (the lines after the coverage, up to where the state had read) is
            // read again onto the new segments.
            let previous = state.index
            var entries = EntryTable(segments: segments)
            var position = ChangeLog.Position(
                identity: manifest.coverage.identity, consumed: manifest.coverage.offset, lines: manifest.coverage.lines,
                sequence: manifest.coverage.sequence)
            if options.readsTail, position.consumed < previous.consumed {
                var damage: SegmentDamage?
                while position.consumed < previous.consumed {
                    let read = try changeLog.readChunk(&position, limit: previous.consumed - position.consumed) { line in
                        do throws(SegmentDamage) { try entries.apply(line) } catch { damage = error }
                    }
                    guard case .success(true) = read else { break }
                }
                if let damage { throw .damagedSnapshot(path: path(FileNames.segments), reason: damage.description) }
            }
            state.entries = entries
            state.index = position
        case .success:
            throw .damagedSnapshot(path: path(FileNames.manifest), reason: "changed while it was installed")
        case .failure(.missing):
            throw .damagedSnapshot(path: path(FileNames.manifest), reason: "missing after it was installed")
        case .failure(.unusable(let reason)):
            throw .damagedSnapshot(path: path(FileNames.manifest), reason: reason)
        }
        try removeUnlistedSegmentFiles(keeping: manifest)
    }

    /// Removes the files of `segments/` that `manifest` does not name (all but it when nil): the
    /// segments a merge replaced, old generations of deletes files, leftovers of a crash.
    func removeUnlistedSegmentFiles(keeping manifest: Manifest?) throws(StoreError) {
        var names: Set<String> = ["manifest.json"]
        for record in manifest?.segments ?? [] {
            names.insert(record.fileName)
            if let deletes = record.deletesFileName { names.insert(deletes) }
        }
        for name in try fileSystem.entries(ofFolder: path(FileNames.segments)) ?? [] where !names.contains(name) {
            guard name.hasSuffix(".seg") || name.hasSuffix(".del") || manifest == nil && name == "manifest.json" else { continue }
            _ = try fileSystem.removeFile(path(FileNames.segments + "/" + name))
        }
    }

    /// Writes every change of the log into segments now (under the writers' lock), so that
    /// opening the store reads nothing of the log; with `ifDue`, only when the tail has grown
    /// past the flush threshold.
    public func merge(ifDue: Bool = false) throws(StoreError) {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            // A bulk import's last flush, built in the background, may leave too little for another
            // (one that cannot go in is dropped: the flush below covers its tail).
            if state.pendingFlush != nil { try? self.installBackgroundFlush(&state, waiting: true) }
            if ifDue, state.entries.tailCount < max(1, options.flushThreshold) { return }
            try self.flushAndMerge(&state)
        }
    }

    /// Merges the segments numbered `numbers` (every segment when nil) into one now, whatever the
    /// policy says (under the writers' lock; the tail is left as it is).
    func mergeSegments(_ numbers: [Int]? = nil) throws(StoreError) {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.refresh(&state, lockHeld: true)
            try self.recoverLocked(&state)
            try self.merge(numbers ?? state.entries.segments.map(\.record.number), &state)
        }
    }

    /// Why the last automatic flush or merge failed, or nil (such a failure does not fail the
    /// write it followed; the next writer tries again).
    public var lastMergeFailure: StoreError? {
        state.withLock { $0.lastFlushFailure }
    }

    /// Whether writes leave flushing to `merge()` (a bulk import sets it for its batches, then
    /// merges once).
    public var defersMerges: Bool {
        get { state.withLock { $0.deferFlushes } }
        set { state.withLock { $0.deferFlushes = newValue } }
    }
}
