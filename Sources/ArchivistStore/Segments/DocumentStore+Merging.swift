import ArchivistBase

/// Merging segments and building them again from the log, in memory that does not grow with the
/// store (`docs/ARCHITECTURE.md`, "Merges").
extension DocumentStore {
    /// The merge policy of this store's options.
    var mergePolicy: MergePolicy {
        MergePolicy(factor: options.mergeFactor, base: options.flushThreshold, maxDocuments: options.maxSegmentDocuments)
    }

    /// Runs the merges the policy calls for, one after another (the lock held).
    func mergeIfDue(_ state: inout State) throws(StoreError) {
        var rounds = 0
        while let numbers = mergePolicy.nextMerge(state.manifest?.segments ?? []), rounds < 64 {
            try merge(numbers, &state)
            rounds += 1
        }
    }

    /// Merges the segments numbered `numbers` into one (none when nothing of them is live) and
    /// installs the manifest that names it in their place (the lock held). The tail is left as it
    /// is: what it supersedes of the inputs is left out of the merge, since its lines stay after
    /// the segments' coverage.
    func merge(_ numbers: [Int], _ state: inout State) throws(StoreError) {
        guard var manifest = state.manifest else { return }
        var inputs: [SegmentMerger.Input] = []
        try table(try state.entries.resolve())
        let masked = try table(try state.entries.masks())
        for number in numbers {
            guard let place = state.entries.segments.firstIndex(where: { $0.record.number == number }) else { continue }
            inputs.append(mergeInput(state.entries.segments[place], masking: masked[place]))
        }
        guard !inputs.isEmpty else { return }
        let merger = try table(try SegmentMerger(inputs, fileSystem: fileSystem, spillFolder: path(FileNames.temporary)))
        let merged = Set(inputs.map(\.segment.record.number))
        let position = manifest.segments.firstIndex { merged.contains($0.number) } ?? manifest.segments.count
        manifest.segments.removeAll { merged.contains($0.number) }
        let number = manifest.nextNumber
        if let record = try writeMerge(
            merger, number: number, projection: state.projection, to: FileNames.segments + "/" + Manifest.fileName(number: number))
        {
            manifest.segments.insert(record, at: min(position, manifest.segments.count))
            manifest.nextNumber = number + 1
        }
        try install(manifest, &state)
        // What the merge allocated (its cursors, postings, chunks) goes back to the system.
        ProcessMemory.releaseFreePages()
    }

    /// One segment as a merge's input: its live documents (less `masked`) and live tombstones.
    func mergeInput(_ segment: OpenSegment, masking masked: Set<Int>) -> SegmentMerger.Input {
        var tombstones = OrdinalSet(capacity: segment.mapped.tombstoneCount, full: true)
        for index in 0..<segment.mapped.tombstoneCount where segment.isDeleted(segment.mapped.count + index) {
            tombstones.remove(index)
        }
        return SegmentMerger.Input(segment: segment, documents: segment.live(masking: masked), tombstones: tombstones)
    }

    /// Writes what `merger` merges as segment `number` to `relative` (aside in `tmp/`, or in
    /// `aside` when given; synced, renamed) and returns the manifest's record of it; nil when
    /// nothing of the inputs is live (the merge only drops them).
    func writeMerge(
        _ merger: SegmentMerger, number: Int, projection: Projection, to relative: String, through aside: String? = nil
    ) throws(StoreError) -> Manifest.Segment? {
        guard merger.documentCount > 0 || merger.inputs.contains(where: { $0.tombstones.count > 0 }) else { return nil }
        let schemaHash = Self.schemaHash(projection: projection, textSearch: schema.textSearch)
        var summary = SegmentMerger.Summary(documents: 0, tombstones: 0, documentBytes: 0, firstSequence: 0, lastSequence: 0)
        let written = try writeStreamed(to: relative, through: aside, spillingChecksumsTo: merger.checksumSpillPath) {
            (writer) throws(StoreError) in
            summary = try merger.write(into: &writer, number: number, projection: projection, schemaHash: schemaHash)
        }
        return Manifest.Segment(
            number: number, documents: summary.documents, tombstones: summary.tombstones, bytes: written.bytes,
            firstSequence: summary.firstSequence, lastSequence: summary.lastSequence, footerHash: written.footerHash,
            liveBytes: summary.documentBytes)
    }

    /// Builds the segments again from the log (the lock held): its lines are read a chunk at a
    /// time into the tail, which is flushed into a segment each time it holds `bulkFlushThreshold`
    /// changes, and merged as the policy says: the memory of one flush, whatever the log's size.
    /// Used when the segments are missing, stale or damaged, and by migrations.
    func rebuildSegments(_ state: inout State) throws(StoreError) {
        try removeUnlistedSegmentFiles(keeping: nil)
        state.manifest = nil
        state.entries = EntryTable()
        state.refusesSegments = false
        var position = ChangeLog.Position()
        var damage: SegmentDamage?
        while true {
            // The tail is moved out while a chunk is applied to it, not copied (a copy's first
            // change would copy it whole, and the copy would live on through the flush and the
            // merges), as `refresh` does.
            var entries = EntryTable()
            swap(&entries, &state.entries)
            let read: Result<Bool, ChangeLog.Load>
            do {
                read = try changeLog.readChunk(&position) { line in
                    do throws(SegmentDamage) { try entries.apply(line) } catch { damage = error }
                }
            } catch {
                swap(&entries, &state.entries)
                throw error
            }
            swap(&entries, &state.entries)
            if let damage { throw .damagedSnapshot(path: path(FileNames.segments), reason: damage.description) }
            switch read {
            case .failure(.unreadable(let line, let reason)):
                throw .invalidFile(path: changeLog.path, reason: "line \(line): \(reason)")
            case .failure:
                throw .invalidFile(path: changeLog.path, reason: "unreadable")
            case .success(let more):
                state.index = position
                if !more || state.entries.tailCount >= options.bulkFlushThreshold {
                    try flush(&state)
                    try mergeIfDue(&state)
                }
                if !more { return }
            }
        }
    }
}
