import ArchivistBase

/// Writes one segment from several (a k-way merge, as LevelDB compacts sorted tables and Lucene
/// merges segments): the live documents' IDs and entries in ID order, each field's dictionary
/// rows in value order with their postings renumbered and merged, the text terms in byte order
/// likewise, and the live tombstones. Nothing is parsed but the dictionary values that must be
/// ordered against each other, and nothing is held per document but each input's map of its
/// ordinals to the new ones (`OrdinalMap`, about 1.5 bytes a document) and the new ID filter
/// (about 10 bits): postings stream into the new file, and the dictionary rows and values, which
/// may be as many as the documents, wait in spill buffers in the spill folder, as do the new
/// file's block checksums (`checksumSpillPath`), not in memory.
struct SegmentMerger {
    /// One segment to merge, with what of it is live.
    struct Input {
        let segment: OpenSegment
        /// Its live documents.
        let documents: OrdinalSet
        /// Its live tombstones (by index among its tombstones).
        let tombstones: OrdinalSet
    }

    /// What a merge wrote.
    struct Summary {
        var documents: Int
        var tombstones: Int
        var documentBytes: Int
        var firstSequence: Int
        var lastSequence: Int
    }

    let inputs: [Input]
    /// Each input's new ordinal of each of its live old ones.
    private let renumbering: [OrdinalMap]
    /// The documents of the new segment.
    let documentCount: Int
    /// Where spill files go, and the file system they are on.
    private let fileSystem: any FileSystem
    private let spillFolder: String
    /// Where the new segment's block checksums spill (`SegmentWriter`'s `hashSpill`).
    var checksumSpillPath: String { spillFolder + "/merge-checksums.spill" }
    /// Steps taken since the inputs' mapped pages were last let go.
    private let steps = StepCounter()

    /// Counts a merge's steps (IDs, rows, terms) so that the inputs' pages are let go every so often.
    private final class StepCounter: @unchecked Sendable {
        var count = 0
    }

    /// How many steps between two drops of the inputs' resident pages.
    static let stepsBetweenDrops = 8_192

    /// The postings of one row or term that count as a step: a value or word in most documents
    /// is read in place from every input, millions of postings, and its pages must go while it
    /// streams, not after (4 to 8 bytes a document of the merge otherwise stayed resident).
    static let postingsPerStep = 64

    /// Counts a step and, every `stepsBetweenDrops`, lets the pages of the inputs' mappings go
    /// (they stay in the page cache): a merge reads each input once, front to back per section,
    /// and what it has read would otherwise stay in its resident memory, the size of its inputs.
    private func step(_ count: Int = 1) {
        steps.count += count
        guard steps.count >= Self.stepsBetweenDrops else { return }
        dropInputPages()
    }

    /// Lets the pages of every input's mapping go.
    private func dropInputPages() {
        steps.count = 0
        for input in inputs { input.segment.mapped.reader.file.dropResidentPages() }
    }

    /// Plans a merge of `inputs`: the new ordinals, by a k-way merge of the live IDs.
    init(_ inputs: [Input], fileSystem: any FileSystem, spillFolder: String) throws(SegmentDamage) {
        self.inputs = inputs
        self.fileSystem = fileSystem
        self.spillFolder = spillFolder
        var renumbering = inputs.map { OrdinalMap(live: $0.documents) }
        var next: UInt32 = 0
        try Self.forEachInOrder(
            inputs.map(\.documents),
            idBytes: { (input, ordinal) throws(SegmentDamage) in
                try inputs[input].segment.mapped.idBytes(at: ordinal)
            }
        ) { input, ordinal in
            renumbering[input].append(next)
            next += 1
            // The plan reads every input's IDs once: their pages go as it passes, as in `step`.
            if next % UInt32(Self.stepsBetweenDrops) == 0 {
                for input in inputs { input.segment.mapped.reader.file.dropResidentPages() }
            }
        }
        for input in inputs { input.segment.mapped.reader.file.dropResidentPages() }
        for index in renumbering.indices { renumbering[index].finish() }
        self.renumbering = renumbering
        documentCount = Int(next)
    }

    /// Calls `body` with each (input, ordinal) of the members of `sets`, in the byte order of
    /// their IDs (`idBytes`); an ID in two inputs comes once per input (the caller's sets never
    /// hold one twice: a live ID is in one place).
    private static func forEachInOrder(
        _ sets: [OrdinalSet], idBytes: (Int, Int) throws(SegmentDamage) -> UnsafeRawBufferPointer,
        _ body: (Int, Int) throws(SegmentDamage) -> Void
    ) throws(SegmentDamage) {
        var cursors = sets.map { set -> Int? in Self.nextMember(set, after: -1) }
        while true {
            var best: Int?
            for (input, cursor) in cursors.enumerated() {
                guard let ordinal = cursor else { continue }
                if let current = best, let other = cursors[current] {
                    if ValueOrder.compareBytes(try idBytes(input, ordinal), try idBytes(current, other)) < 0 { best = input }
                } else {
                    best = input
                }
            }
            guard let input = best, let ordinal = cursors[input] else { return }
            try body(input, ordinal)
            cursors[input] = Self.nextMember(sets[input], after: ordinal)
        }
    }

    /// The first member of `set` above `ordinal`.
    private static func nextMember(_ set: OrdinalSet, after ordinal: Int) -> Int? {
        var at = ordinal + 1
        while at < set.capacity {
            let word = set.words[at >> 6] >> UInt64(at & 63)
            if word != 0 { return at + word.trailingZeroBitCount }
            at = (at | 63) + 1
        }
        return nil
    }

    /// Writes the new segment, numbered `number`, to `writer`.
    func write(
        into writer: inout SegmentWriter, number: Int, projection: Projection, schemaHash: UInt64
    ) throws(StoreError) -> Summary {
        let mapped = inputs.map(\.segment.mapped)
        var summary = Summary(documents: documentCount, tombstones: 0, documentBytes: 0, firstSequence: Int.max, lastSequence: 0)
        var filter = IDFilter.Builder(count: documentCount + inputs.reduce(0) { $0 + $1.tombstones.count })
        let idBytes = { (input: Int, ordinal: Int) throws(SegmentDamage) -> UnsafeRawBufferPointer in
            try mapped[input].idBytes(at: ordinal)
        }
        // IDs: the offsets, then the bytes, each a pass of the k-way merge.
        var idOffset: UInt64 = 0
        try stream(
            .idOffsets, into: &writer, sets: inputs.map(\.documents), idBytes: idBytes,
            closing: { chunk in
                chunk.append(idOffset)
            }
        ) { (input, ordinal, chunk) throws(SegmentDamage) in
            chunk.append(idOffset)
            let id = try idBytes(input, ordinal)
            idOffset += UInt64(id.count)
            filter.insert(IDFilter.hash(id))
        }
        try stream(.idHeap, into: &writer, sets: inputs.map(\.documents), idBytes: idBytes) {
            (input, ordinal, chunk) throws(SegmentDamage) in
            chunk.append(contentsOf: try idBytes(input, ordinal))
        }
        try stream(.entries, into: &writer, sets: inputs.map(\.documents), idBytes: idBytes) {
            (input, ordinal, chunk) throws(SegmentDamage) in
            let row = try mapped[input].entryRowBytes(at: ordinal)
            chunk.append(contentsOf: row)
            let reader = BinaryReader(buffer: row)
            summary.documentBytes += Int(reader.uint64(at: 8) ?? 0)
            let sequence = Int(reader.uint64(at: 32) ?? 0)
            summary.firstSequence = min(summary.firstSequence, sequence)
            summary.lastSequence = max(summary.lastSequence, sequence)
        }
        try writer.add(.fieldNames, Array(projection.paths.joined(separator: "\n").utf8))
        // Tombstones: offsets, bytes and rows, each a pass.
        let tombstoneSets = inputs.map(\.tombstones)
        let tombstoneIDs = { (input: Int, index: Int) throws(SegmentDamage) -> UnsafeRawBufferPointer in
            try mapped[input].tombstoneIDBytes(at: index)
        }
        var tombstoneOffset: UInt64 = 0
        try stream(
            .tombstoneOffsets, into: &writer, sets: tombstoneSets, idBytes: tombstoneIDs,
            closing: { chunk in
                chunk.append(tombstoneOffset)
            }
        ) { (input, index, chunk) throws(SegmentDamage) in
            chunk.append(tombstoneOffset)
            let id = try tombstoneIDs(input, index)
            tombstoneOffset += UInt64(id.count)
            filter.insert(IDFilter.hash(id))
            summary.tombstones += 1
        }
        try stream(.tombstoneHeap, into: &writer, sets: tombstoneSets, idBytes: tombstoneIDs) {
            (input, index, chunk) throws(SegmentDamage) in
            chunk.append(contentsOf: try tombstoneIDs(input, index))
        }
        try stream(.tombstoneRows, into: &writer, sets: tombstoneSets, idBytes: tombstoneIDs) {
            (input, index, chunk) throws(SegmentDamage) in
            let tombstone = try mapped[input].tombstone(at: index)
            SegmentBuilder.appendTombstoneRow(tombstone, to: &chunk)
            summary.firstSequence = min(summary.firstSequence, tombstone.sequence)
            summary.lastSequence = max(summary.lastSequence, tombstone.sequence)
        }
        try writer.add(.idFilter, filter.bytes)
        for (number, path) in projection.paths.enumerated() {
            try mergeField(path, number: UInt32(number), into: &writer)
        }
        try mergeText(into: &writer)
        if summary.firstSequence == Int.max { summary.firstSequence = 0 }
        try writer.finish(
            documentCount: documentCount, documentBytes: summary.documentBytes,
            coverage: SegmentFile.Coverage(
                identity: UInt64(number), offset: summary.firstSequence, lines: summary.tombstones, tailHash: 0,
                sequence: summary.lastSequence),
            schemaHash: schemaHash, createdAt: .now())
        return summary
    }

    /// Writes a section of one item per member of `sets` in ID order, `each` appending an
    /// item's bytes; `closing` appends what follows the last.
    private func stream(
        _ kind: SegmentFile.SectionKind, into writer: inout SegmentWriter, sets: [OrdinalSet],
        idBytes: (Int, Int) throws(SegmentDamage) -> UnsafeRawBufferPointer, closing: ((inout BinaryWriter) -> Void)? = nil,
        _ each: (Int, Int, inout BinaryWriter) throws(SegmentDamage) -> Void
    ) throws(StoreError) {
        try writer.begin(kind)
        var chunk = BinaryWriter(capacity: Self.chunkBytes)
        var failure: StoreError?
        do throws(SegmentDamage) {
            try Self.forEachInOrder(sets, idBytes: idBytes) { (input, ordinal) throws(SegmentDamage) in
                try each(input, ordinal, &chunk)
                step()
                do throws(StoreError) {
                    try Self.flushIfFull(&chunk, into: &writer)
                } catch {
                    failure = error
                    throw SegmentDamage.unreadable("the merge's output failed")
                }
            }
        } catch {
            if let failure { throw failure }
            throw .damagedSnapshot(path: FileNames.segments, reason: error.description)
        }
        closing?(&chunk)
        try writer.append(chunk)
        try writer.end()
        dropInputPages()
    }

    /// The bytes a section's output gathers before it is handed to the writer.
    static let chunkBytes = 1 << 16

    /// Hands `chunk` to `writer` and starts a new one once it holds `chunkBytes`.
    private static func flushIfFull(_ chunk: inout BinaryWriter, into writer: inout SegmentWriter) throws(StoreError) {
        guard chunk.bytes.count >= chunkBytes else { return }
        try writer.append(chunk)
        chunk = BinaryWriter(capacity: chunkBytes)
    }

    // MARK: Fields

    /// A cursor over one input's dictionary rows of a field.
    private struct RowCursor {
        let input: Int
        let field: SegmentField
        var index = 0
        var row: SegmentField.Row?
        var key: SortableKey?
        var value: JSONValue?

        init(input: Int, field: SegmentField) throws(SegmentDamage) {
            self.input = input
            self.field = field
            try load()
        }

        mutating func load() throws(SegmentDamage) {
            guard index < field.rowCount else {
                row = nil
                key = nil
                value = nil
                return
            }
            let row = try field.row(index)
            self.row = row
            value = try field.value(of: row)
            key = SortableKey(row.isMissing ? nil : value, ordinal: 0)
        }

        mutating func advance() throws(SegmentDamage) {
            index += 1
            try load()
        }
    }

    /// Merges one field's dictionaries: the rows of equal sort keys from every input, grouped by
    /// spelling (the documents without the field together), each group one row whose postings are
    /// its members' renumbered and merged, the groups of a tie in the order a build gives them
    /// (the documents without the field first, then by first document).
    private func mergeField(_ path: String, number: UInt32, into writer: inout SegmentWriter) throws(StoreError) {
        var cursors: [RowCursor] = []
        var nested = false
        var arrays = false
        for (input, item) in inputs.enumerated() {
            guard let field = try damage({ () throws(SegmentDamage) in try item.segment.mapped.field(path) }) else {
                throw .damagedSnapshot(path: FileNames.segments, reason: "segment \(item.segment.record.number) has no field \(path)")
            }
            nested = nested || field.hasNestedArrays
            arrays = arrays || field.isArrayValued
            cursors.append(try damage { () throws(SegmentDamage) in try RowCursor(input: input, field: field) })
        }
        let rows = SpillBuffer(fileSystem: fileSystem, path: spillFolder + "/merge-rows.spill")
        let heap = SpillBuffer(fileSystem: fileSystem, path: spillFolder + "/merge-heap.spill")
        var rowCount = 0
        var postingCount = 0
        var heapBytes = 0
        try writer.begin(.postings, field: number)
        while true {
            // The smallest key among the cursors, then every row that ties with it.
            var smallest: SortableKey?
            for cursor in cursors {
                guard let key = cursor.key else { continue }
                if smallest == nil || key < smallest! { smallest = key }
            }
            guard let smallest else { break }
            struct Group {
                var members: [(input: Int, row: SegmentField.Row, value: JSONValue?)]
                var spelling: DocumentID?
                var isMissing: Bool
                /// Its members' postings, and their smallest new ordinal (nil: none of its documents
                /// is carried over).
                var lists: [(postings: UnsafeBufferPointer<UInt32>, map: OrdinalMap)] = []
                var first: UInt32?
            }
            var groups: [Group] = []
            for position in cursors.indices {
                while let key = cursors[position].key, !(smallest < key), let row = cursors[position].row {
                    let value = cursors[position].value
                    let spelling = row.isMissing ? nil : value.map(SegmentBuilder.spelling)
                    if let at = groups.firstIndex(where: { $0.isMissing == row.isMissing && $0.spelling == spelling }) {
                        groups[at].members.append((cursors[position].input, row, value))
                    } else {
                        groups.append(Group(members: [(cursors[position].input, row, value)], spelling: spelling, isMissing: row.isMissing))
                    }
                    try damage { () throws(SegmentDamage) in try cursors[position].advance() }
                }
            }
            for index in groups.indices {
                groups[index].lists = try postingLists(groups[index].members.map { (cursors[$0.input].field, $0.row, $0.input) })
                groups[index].first = Self.firstMerged(groups[index].lists, ordinal: { $0 })
            }
            groups.removeAll { $0.first == nil }
            groups.sort { a, b in a.isMissing != b.isMissing ? a.isMissing : a.first! < b.first! }
            for (position, group) in groups.enumerated() {
                // The postings stream into the segment a chunk at a time (a value of millions of
                // documents is never held whole), then the row that counts them is spilled.
                var postings = BinaryWriter(capacity: Self.chunkBytes)
                var count = 0
                var last: UInt32?
                try Self.forEachMerged(group.lists, ordinal: { $0 }) { (ordinal, _) throws(StoreError) in
                    guard ordinal != last else { return }
                    last = ordinal
                    postings.append(ordinal)
                    count += 1
                    if count % Self.postingsPerStep == 0 { step() }
                    try Self.flushIfFull(&postings, into: &writer)
                }
                try writer.append(postings)
                let first = group.members[0]
                let field = cursors[first.input].field
                var flags = first.row.flags & ~SegmentBuilder.RowFlag.tiesWithPrevious
                if position > 0 { flags |= SegmentBuilder.RowFlag.tiesWithPrevious }
                let word: UInt64 =
                    switch first.row.rank {
                    case SortableKey.numberRank: first.row.number.bitPattern
                    case SortableKey.dateRank: UInt64(bitPattern: first.row.instant)
                    default: 0
                    }
                let value = Array(try damage { () throws(SegmentDamage) in try field.valueBytes(of: first.row) })
                var row = BinaryWriter(capacity: SegmentBuilder.dictionaryRowSize)
                row.append(UInt8(bitPattern: first.row.rank))
                row.append(flags)
                row.append(UInt8(0))
                row.append(UInt8(0))
                row.append(UInt32(count))
                row.append(word)
                row.append(UInt64(postingCount))
                row.append(UInt32(heapBytes))
                row.append(UInt32(value.count))
                try rows.append(row)
                try heap.append(value)
                heapBytes += value.count
                postingCount += count
                rowCount += 1
                step()
            }
        }
        try writer.end()
        var trailer = BinaryWriter(capacity: 32)
        trailer.append(
            (nested ? SegmentBuilder.FieldFlag.nestedArrays : 0) | (arrays ? SegmentBuilder.FieldFlag.arrayValued : 0))
        trailer.append(UInt64(rowCount))
        trailer.append(UInt64(0))
        trailer.append(UInt64(0))
        try rows.append(trailer)
        try writer.begin(.dictionary, field: number)
        try rows.drain { (chunk) throws(StoreError) in try writer.append(chunk) }
        try writer.end()
        try writer.begin(.dictionaryHeap, field: number)
        try heap.drain { (chunk) throws(StoreError) in try writer.append(chunk) }
        try writer.end()
        dropInputPages()
    }

    /// The postings of some rows (of several inputs) with each input's map of new ordinals.
    private func postingLists(
        _ members: [(field: SegmentField, row: SegmentField.Row, input: Int)]
    ) throws(StoreError) -> [(postings: UnsafeBufferPointer<UInt32>, map: OrdinalMap)] {
        var lists: [(postings: UnsafeBufferPointer<UInt32>, map: OrdinalMap)] = []
        for member in members {
            let postings = try damage { () throws(SegmentDamage) in try member.field.ordinals(of: member.row) }
            lists.append((postings, renumbering[member.input]))
        }
        return lists
    }

    /// The smallest new ordinal among postings lists (each ascending, read in place), or nil
    /// when none of them is carried over.
    static func firstMerged<Element>(
        _ lists: [(postings: UnsafeBufferPointer<Element>, map: OrdinalMap)], ordinal: (Element) -> UInt32
    ) -> UInt32? {
        var first: UInt32?
        for list in lists {
            for posting in list.postings {
                guard let new = list.map[Int(ordinal(posting))] else { continue }
                if first == nil || new < first! { first = new }
                break
            }
        }
        return first
    }

    /// Calls `body` with each carried-over posting of `lists` (each ascending by its old
    /// ordinal, read in place) in ascending order of its new ordinal (a k-way merge: each
    /// input's map keeps its order): the new ordinal and the posting. Equal new ordinals come
    /// once per list, the earlier list first. Nothing is copied.
    static func forEachMerged<Element>(
        _ lists: [(postings: UnsafeBufferPointer<Element>, map: OrdinalMap)], ordinal: (Element) -> UInt32,
        _ body: (UInt32, Element) throws(StoreError) -> Void
    ) throws(StoreError) {
        var heads = [Int](repeating: 0, count: lists.count)
        var values = [UInt32?](repeating: nil, count: lists.count)
        func load(_ k: Int) {
            let list = lists[k]
            var at = heads[k]
            while at < list.postings.count {
                if let new = list.map[Int(ordinal(list.postings[at]))] {
                    heads[k] = at
                    values[k] = new
                    return
                }
                at += 1
            }
            heads[k] = at
            values[k] = nil
        }
        for k in lists.indices { load(k) }
        while true {
            var best: Int?
            for k in lists.indices {
                guard let value = values[k] else { continue }
                if best == nil || value < values[best!]! { best = k }
            }
            guard let k = best else { return }
            try body(values[k]!, lists[k].postings[heads[k]])
            heads[k] += 1
            load(k)
        }
    }

    // MARK: Text

    /// Merges the text indexes: terms in byte order, each term's postings renumbered and merged.
    private func mergeText(into writer: inout SegmentWriter) throws(StoreError) {
        var texts: [SegmentText] = []
        for input in inputs { texts.append(try damage { () throws(SegmentDamage) in try input.segment.mapped.text() }) }
        var heads = [Int](repeating: 0, count: texts.count)
        let rows = SpillBuffer(fileSystem: fileSystem, path: spillFolder + "/merge-terms.spill")
        let heap = SpillBuffer(fileSystem: fileSystem, path: spillFolder + "/merge-term-heap.spill")
        var postingCount = 0
        var heapBytes = 0
        try writer.begin(.textPostings)
        while true {
            // The terms point into the mapped inputs, which outlive the merge.
            var smallest: UnsafeRawBufferPointer?
            var current: [(input: Int, postings: UnsafeBufferPointer<SIMD2<UInt32>>)] = []
            for (input, text) in texts.enumerated() where heads[input] < text.termCount {
                let (term, postings) = try damage { () throws(SegmentDamage) in try text.term(at: heads[input]) }
                let order = smallest.map { ValueOrder.compareBytes(term, $0) } ?? -1
                if order < 0 {
                    smallest = term
                    current = [(input, postings)]
                } else if order == 0 {
                    current.append((input, postings))
                }
            }
            guard let smallest else { break }
            let term = Array(smallest)
            var lists: [(postings: UnsafeBufferPointer<SIMD2<UInt32>>, map: OrdinalMap)] = []
            for (input, postings) in current {
                heads[input] += 1
                lists.append((postings, renumbering[input]))
            }
            // The postings stream into the segment a chunk at a time: a common word's millions
            // of postings are never held whole.
            var bytes = BinaryWriter(capacity: Self.chunkBytes)
            var merged = 0
            try Self.forEachMerged(lists, ordinal: { $0[0] }) { (ordinal, posting) throws(StoreError) in
                bytes.append(ordinal)
                bytes.append(posting[1])
                merged += 1
                if merged % Self.postingsPerStep == 0 { step() }
                try Self.flushIfFull(&bytes, into: &writer)
            }
            guard merged > 0 else { continue }
            try writer.append(bytes)
            var row = BinaryWriter(capacity: SegmentBuilder.termRowSize)
            row.append(UInt32(heapBytes))
            row.append(UInt32(term.count))
            row.append(UInt32(postingCount))
            row.append(UInt32(merged))
            try rows.append(row)
            try heap.append(term)
            heapBytes += term.count
            postingCount += merged
            step()
        }
        try writer.end()
        dropInputPages()
        try writer.begin(.terms)
        try rows.drain { (chunk) throws(StoreError) in try writer.append(chunk) }
        try writer.end()
        try writer.begin(.termHeap)
        try heap.drain { (chunk) throws(StoreError) in try writer.append(chunk) }
        try writer.end()
    }

    // MARK: Errors

    /// Runs a read of the inputs, reporting damage as a store error (the merge then fails and
    /// leaves the segments as they were).
    private func damage<T>(_ body: () throws(SegmentDamage) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .damagedSnapshot(path: FileNames.segments, reason: error.description)
        }
    }
}
