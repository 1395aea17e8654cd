import ArchivistBase
import Dispatch

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Builds a snapshot's sections from the index: the IDs in byte order (a document's place is its
/// ordinal), each document's entry, and per projected field a dictionary of its distinct values in
/// sort order with the documents holding each (the postings), and the text index's terms with their
/// postings and weights (`docs/FORMAT.md`, "index.snapshot").
///
/// The dictionary holds what a `SortedIndex` holds, grouped by value: one row per distinct value
/// (per spelling: equal numbers spelt apart are rows that tie), in `SortableKey` order; walking its rows in order and
/// their postings is walking the sorted index, and a row's postings are what an equality index
/// gives for its value.
enum SegmentBuilder {
    /// A dictionary row's flags.
    enum RowFlag {
        /// The row sorts equal to the one before it (missing and null; objects equal but for
        /// number spellings): a walk merges their postings.
        static let tiesWithPrevious: UInt8 = 1
        /// The row's documents do not have the field (the first row, when any lack it).
        static let missing: UInt8 = 2
        /// The value is a string; the heap holds its UTF-8 bytes (else its compact JSON).
        static let string: UInt8 = 4
        /// Facets leave the row out (missing, and the empty array).
        static let notFacetValue: UInt8 = 8
    }

    /// A field's flags, kept in a trailer row after the last row of its dictionary.
    enum FieldFlag {
        /// Some document has an array among its sort keys: ranges and equality are left to a scan.
        static let nestedArrays: UInt64 = 1
        /// Some document has more than one value at the path, or an array: a condition on the whole
        /// value (`$size`, `$all`, `$ne`...) cannot be answered one dictionary row at a time.
        static let arrayValued: UInt64 = 2
    }

    /// The bytes of a row of the dictionary.
    static let dictionaryRowSize = 32
    /// The bytes of a row of the entries.
    static let entryRowSize = 48
    /// The bytes of a row of the tombstones (layout 4).
    static let tombstoneRowSize = 24
    /// The bytes of a row of the terms.
    static let termRowSize = 16

    /// Reads the projected values at `paths` of the entries at `positions` (by position in
    /// the range, so values[path]![0] is the value of the range's first entry).
    typealias Columns = (_ paths: [String], _ positions: Range<Int>) throws(StoreError) -> [String: [JSONValue?]]

    /// How many documents' text a build holds in memory at a time.
    static let textChunk = 65_536

    /// What a segment is made of: its documents' entries (sorted by ID bytes, each with its
    /// sequence number), the digest of each one's fields (`WordHash` of the bytes of its index
    /// line's `fields`), and its tombstones (sorted by ID bytes).
    struct Contents {
        var entries: [IndexEntry]
        var digests: [UInt64]
        var tombstones: [MappedSegment.Tombstone] = []

        /// The lowest and highest sequence number of the entries and tombstones.
        var sequenceRange: (first: Int, last: Int) {
            let numbers = entries.map(\.sequence) + tombstones.map(\.sequence)
            return (numbers.min() ?? 0, numbers.max() ?? 0)
        }
    }

    /// The whole segment file (layout 4) of `contents`, numbered `number`; `columns` reads the
    /// entries' projected values for the paths it is given.
    static func build(
        _ contents: Contents, number: Int, projection: Projection, textSearch: TextSearch, columns: Columns, schemaHash: UInt64
    ) throws(StoreError) -> [UInt8] {
        try SegmentWriter.bytes { (writer) throws(StoreError) in
            try build(
                into: &writer, contents, number: number, projection: projection, textSearch: textSearch, columns: columns,
                schemaHash: schemaHash)
        }
    }

    /// Writes the segment (layout 4) of `contents` to `writer`, section by section. With
    /// `textColumns` (a reader that may be called from another thread while `columns` is in use),
    /// the text index is built on another thread while the fields are written: on two cores a
    /// build takes about as long as the larger of the two, not their sum.
    static func build(
        into writer: inout SegmentWriter, _ contents: Contents, number: Int, projection: Projection, textSearch: TextSearch,
        columns: Columns, textColumns: Columns? = nil, schemaHash: UInt64
    ) throws(StoreError) {
        let entries = contents.entries
        final class Outcome: @unchecked Sendable { var text: Result<TextIndex, StoreError>? }
        let outcome = Outcome()
        let building = DispatchGroup()
        if let textColumns {
            nonisolated(unsafe) let read = textColumns
            let count = entries.count
            DispatchQueue.global().async(group: building) {
                outcome.text = Result { () throws(StoreError) in
                    try textIndex(count: count, textSearch: textSearch, projection: projection, columns: read)
                }
            }
        }
        // Whatever happens to the fields, the text thread is done before this returns.
        defer { building.wait() }
        try addIDs(entries.map(\.id), offsets: .idOffsets, heap: .idHeap, to: &writer)
        var rows = BinaryWriter(capacity: entries.count * entryRowSize)
        for (entry, digest) in zip(entries, contents.digests) { appendEntryRow(entry, digest: digest, to: &rows) }
        try writer.add(.entries, rows.bytes)
        try writer.add(.fieldNames, Array(projection.paths.joined(separator: "\n").utf8))
        var hashes: [UInt64] = []
        hashes.reserveCapacity(entries.count + contents.tombstones.count)
        for id in entries.map(\.id) + contents.tombstones.map(\.id) {
            var id = id
            hashes.append(id.withUTF8 { IDFilter.hash(UnsafeRawBufferPointer($0)) })
        }
        try addIDs(contents.tombstones.map(\.id), offsets: .tombstoneOffsets, heap: .tombstoneHeap, to: &writer)
        var tombstoneRows = BinaryWriter(capacity: contents.tombstones.count * tombstoneRowSize)
        for tombstone in contents.tombstones { appendTombstoneRow(tombstone, to: &tombstoneRows) }
        try writer.add(.tombstoneRows, tombstoneRows.bytes)
        try writer.add(.idFilter, IDFilter.build(hashes))
        // One column in memory at a time, then the text fields together.
        for (field, path) in projection.paths.enumerated() {
            let values = try columns([path], 0..<entries.count)[path] ?? [JSONValue?](repeating: nil, count: entries.count)
            try addField(groups(of: values, ordinals: { UInt32($0) }), field: UInt32(field), to: &writer)
        }
        building.wait()
        let text: TextIndex
        if let built = outcome.text {
            text = try built.get()
        } else {
            text = try textIndex(count: entries.count, textSearch: textSearch, projection: projection, columns: columns)
        }
        try addText(text, to: &writer)
        let range = contents.sequenceRange
        try writer.finish(
            documentCount: entries.count, documentBytes: entries.reduce(0) { $0 + $1.size },
            coverage: SegmentFile.Coverage(
                identity: UInt64(number), offset: range.first, lines: contents.tombstones.count, tailHash: 0, sequence: range.last),
            schemaHash: schemaHash, createdAt: .now())
    }

    /// The sections of a list of IDs: offsets into a heap, and the heap.
    static func addIDs(
        _ ids: [String], offsets offsetsKind: SegmentFile.SectionKind, heap heapKind: SegmentFile.SectionKind,
        to writer: inout SegmentWriter
    ) throws(StoreError) {
        var offsets = BinaryWriter(capacity: (ids.count + 1) * 8)
        var heap = BinaryWriter(capacity: ids.count * 32)
        for id in ids {
            offsets.append(UInt64(heap.bytes.count))
            heap.append(contentsOf: id.utf8)
        }
        offsets.append(UInt64(heap.bytes.count))
        try writer.add(offsetsKind, offsets.bytes)
        try writer.add(heapKind, heap.bytes)
    }

    /// Appends the 48-byte row of a segment's entry: hash, size, times, sequence number and the
    /// digest of its fields.
    static func appendEntryRow(_ entry: IndexEntry, digest: UInt64, to rows: inout BinaryWriter) {
        rows.append(entry.hash)
        rows.append(UInt64(entry.size))
        rows.append(entry.storedAt.milliseconds)
        rows.append(entry.updatedAt.milliseconds)
        rows.append(UInt64(entry.sequence))
        rows.append(digest)
    }

    /// Appends the 24-byte row of a tombstone: sequence number, time, fields digest.
    static func appendTombstoneRow(_ tombstone: MappedSegment.Tombstone, to rows: inout BinaryWriter) {
        rows.append(UInt64(tombstone.sequence))
        rows.append(tombstone.removedAt.milliseconds)
        rows.append(tombstone.fieldsDigest)
    }

    /// The digest of an entry's fields as a segment records it.
    static func fieldsDigest(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { WordHash.striped($0) }
    }

    /// One distinct value (one spelling) of a field while its dictionary is built: its sort key
    /// and its documents' ordinals, ascending.
    struct Group {
        var key: SortableKey
        var isMissing: Bool
        var ordinals: [UInt32]
    }

    /// A field's groups in dictionary order, with the field's flags.
    struct FieldGroups {
        var groups: [Group] = []
        var hasNestedArrays = false
        var isArrayValued = false
    }

    /// What tells two values apart in a dictionary: a string's text, else its compact JSON (so
    /// `879` and `879.0` are two rows, which sort as ties, and a facet shows each spelling).
    static func spelling(_ value: JSONValue) -> DocumentID {
        if case .string(let text) = value { return DocumentID("s" + text) }
        return DocumentID(JSONWriter.compactString(value))
    }

    /// The groups of a column of values (by position), the documents numbered by `ordinals`
    /// (ascending with the position).
    static func groups(of values: [JSONValue?], ordinals: (Int) -> UInt32) -> FieldGroups {
        var result = FieldGroups()
        var groups: [Group] = []
        var groupOf: [DocumentID: Int] = [:]
        var missing: [UInt32] = []
        for (position, value) in values.enumerated() {
            let ordinal = ordinals(position)
            let found = Projection.resolvedValues(value)
            if !result.isArrayValued, found.count > 1 || found.contains(where: \.isArray) { result.isArrayValued = true }
            let (keys, hasNested) = SortedIndex.keys(of: found)
            result.hasNestedArrays = result.hasNestedArrays || hasNested
            if keys.isEmpty {
                missing.append(ordinal)
                continue
            }
            for key in keys {
                let exact = spelling(key)
                if let group = groupOf[exact] {
                    if groups[group].ordinals.last != ordinal { groups[group].ordinals.append(ordinal) }
                } else {
                    groupOf[exact] = groups.count
                    groups.append(Group(key: SortableKey(key, ordinal: 0), isMissing: false, ordinals: [ordinal]))
                }
            }
        }
        if !missing.isEmpty { groups.append(Group(key: SortableKey(nil, ordinal: 0), isMissing: true, ordinals: missing)) }
        // Dictionary order: `SortableKey` order, the documents without the field first among
        // ties; groups that tie keep the order of their first documents (the sort is stable, and
        // groups are made in ordinal order). The groups' places are sorted, not the groups (each holds an array of postings), and
        // through a buffer, so comparing two does not copy them.
        result.groups = sortedGroups(groups)
        return result
    }

    /// Groups in dictionary order. What the comparisons need is laid out first (ranks, numbers,
    /// instants, and the strings' bytes in one heap), so comparing two groups touches no String
    /// and no reference count; only ties and the values of rank 4 go to `SortableKey`'s `<`.
    static func sortedGroups(_ groups: [Group]) -> [Group] {
        var ranks: [Int8] = []
        var numbers: [Double] = []
        var instants: [Int64] = []
        var spans: [(start: Int, count: Int)] = []
        var heap: [UInt8] = []
        ranks.reserveCapacity(groups.count)
        numbers.reserveCapacity(groups.count)
        instants.reserveCapacity(groups.count)
        spans.reserveCapacity(groups.count)
        for group in groups {
            ranks.append(group.key.rank)
            numbers.append(group.key.number)
            instants.append(group.key.instant)
            if group.key.rank == SortableKey.stringRank, case .string(let text)? = group.key.value {
                spans.append((heap.count, text.utf8.count))
                heap.append(contentsOf: text.utf8)
            } else {
                spans.append((0, 0))
            }
        }
        var order = Array(groups.indices)
        heap.withUnsafeBufferPointer { heap in
            groups.withUnsafeBufferPointer { buffer in
                order.sort { a, b in
                    let order = compare(a, b, ranks: ranks, numbers: numbers, instants: instants, spans: spans, heap: heap, groups: buffer)
                    if order != 0 { return order < 0 }
                    return buffer[a].isMissing && !buffer[b].isMissing
                }
            }
        }
        return order.map { groups[$0] }
    }

    /// Orders groups `a` and `b` as their `SortableKey`s order (0: they tie).
    @inline(__always)
    private static func compare(
        _ a: Int, _ b: Int, ranks: [Int8], numbers: [Double], instants: [Int64], spans: [(start: Int, count: Int)],
        heap: UnsafeBufferPointer<UInt8>, groups: UnsafeBufferPointer<Group>
    ) -> Int {
        let rank = ranks[a]
        if rank != ranks[b] { return rank < ranks[b] ? -1 : 1 }
        switch rank {
        case SortableKey.numberRank:
            return numbers[a] < numbers[b] ? -1 : (numbers[a] > numbers[b] ? 1 : 0)
        case SortableKey.dateRank where instants[a] != instants[b]:
            return instants[a] < instants[b] ? -1 : 1
        case SortableKey.stringRank:
            let (x, y) = (spans[a], spans[b])
            let common = min(x.count, y.count)
            if common > 0, let base = heap.baseAddress {
                let order = memcmp(base + x.start, base + y.start, common)
                if order != 0 { return order < 0 ? -1 : 1 }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case SortableKey.dateRank, 4:
            if groups[a].key < groups[b].key { return -1 }
            return groups[b].key < groups[a].key ? 1 : 0
        default:
            return 0
        }
    }

    /// A field's dictionary as it is written: rows, values and postings, then its trailer.
    struct DictionaryOutput {
        private(set) var rows = BinaryWriter()
        private(set) var heap = BinaryWriter()
        private(set) var postings = BinaryWriter()
        private(set) var rowCount = 0
        private var postingCount = 0

        /// Appends a row; `value` is the heap's bytes of its value.
        mutating func appendRow(
            rank: Int8, flags: UInt8, sortWord: UInt64, value: UnsafeRawBufferPointer, ordinals: UnsafeBufferPointer<UInt32>
        ) {
            rows.append(UInt8(bitPattern: rank))
            rows.append(flags)
            rows.append(UInt8(0))
            rows.append(UInt8(0))
            rows.append(UInt32(ordinals.count))
            rows.append(sortWord)
            rows.append(UInt64(postingCount))
            rows.append(UInt32(heap.bytes.count))
            rows.append(UInt32(value.count))
            heap.append(contentsOf: value)
            for ordinal in ordinals { postings.append(ordinal) }
            postingCount += ordinals.count
            rowCount += 1
        }

        /// Appends the row of a group; `ties` when it sorts equal to the row before it.
        mutating func appendRow(_ group: Group, ties: Bool) {
            let (valueBytes, isString) = encodedValue(group.key.value)
            var flags: UInt8 = ties ? RowFlag.tiesWithPrevious : 0
            if group.isMissing { flags |= RowFlag.missing | RowFlag.notFacetValue }
            if isString { flags |= RowFlag.string }
            if group.key.value == .array([]) { flags |= RowFlag.notFacetValue }
            valueBytes.withUnsafeBytes { value in
                group.ordinals.withUnsafeBufferPointer { ordinals in
                    appendRow(rank: group.key.rank, flags: flags, sortWord: sortWord(group.key), value: value, ordinals: ordinals)
                }
            }
        }

        /// Writes the three sections of the field, the flags in a trailer after the last row.
        mutating func write(field: UInt32, hasNestedArrays: Bool, isArrayValued: Bool, to writer: inout SegmentWriter) throws(StoreError) {
            rows.append((hasNestedArrays ? FieldFlag.nestedArrays : 0) | (isArrayValued ? FieldFlag.arrayValued : 0))
            rows.append(UInt64(rowCount))
            rows.append(UInt64(0))
            rows.append(UInt64(0))
            // Postings first, as a merge writes them (it streams them while the rows wait).
            try writer.add(.postings, field: field, postings.bytes)
            try writer.add(.dictionary, field: field, rows.bytes)
            try writer.add(.dictionaryHeap, field: field, heap.bytes)
        }
    }

    private static func addField(_ field: FieldGroups, field number: UInt32, to writer: inout SegmentWriter) throws(StoreError) {
        var output = DictionaryOutput()
        for (position, group) in field.groups.enumerated() {
            output.appendRow(group, ties: position > 0 && !(field.groups[position - 1].key < group.key))
        }
        try output.write(field: number, hasNestedArrays: field.hasNestedArrays, isArrayValued: field.isArrayValued, to: &writer)
    }

    /// A value as the dictionary's heap holds it: a string's UTF-8 bytes, else its compact JSON.
    static func encodedValue(_ value: JSONValue?) -> ([UInt8], Bool) {
        switch value {
        case nil: return ([], false)
        case .string(let text)?: return (Array(text.utf8), true)
        case let other?: return (JSONWriter.compactBytes(other), false)
        }
    }

    /// The number (as its bits) or the instant a row sorts by.
    static func sortWord(_ key: SortableKey) -> UInt64 {
        switch key.rank {
        case SortableKey.numberRank: return key.number.bitPattern
        case SortableKey.dateRank: return UInt64(bitPattern: key.instant)
        default: return 0
        }
    }

    /// The text index of `count` documents, their text fields read `chunk` documents at a
    /// time (the values of every document's text at once would outweigh the index).
    static func textIndex(
        count: Int, textSearch: TextSearch, projection: Projection, columns: Columns, chunk: Int = textChunk
    ) throws(StoreError) -> TextIndex {
        let paths = textSearch.paths.filter(projection.paths.contains)
        var loaded: (positions: Range<Int>, values: [String: [JSONValue?]]) = (0..<0, [:])
        var failure: StoreError?
        let index = TextIndex(count: count) { ordinal in
            if !loaded.positions.contains(ordinal) {
                let positions = ordinal..<min(count, ordinal + chunk)
                do throws(StoreError) {
                    loaded = (positions, try columns(paths, positions))
                } catch {
                    failure = failure ?? error
                    loaded = (positions, [:])
                }
            }
            let at = ordinal - loaded.positions.lowerBound
            return textSearch.fields.map { field in (Projection.resolvedValues(loaded.values[field.path]?[at] ?? nil), field.weight) }
        }
        if let failure { throw failure }
        return index
    }

    /// The terms of a text index in byte order.
    static func sortedTerms(_ index: TextIndex) -> [String] {
        index.allPostings.keys.sorted { UTF8Bytes.precedes($0, $1) }
    }

    /// The text sections as they are written: the postings streamed to the writer term by term,
    /// the terms' rows and bytes kept until `finish`.
    struct TextOutput {
        private var rows = BinaryWriter()
        private var heap = BinaryWriter()
        private var postingCount = 0

        /// Opens the postings section.
        init(writer: inout SegmentWriter) throws(StoreError) {
            try writer.begin(.textPostings)
        }

        /// Appends a term with its postings: (ordinal, weight bits) pairs, ordinals ascending.
        mutating func append<Term: Collection>(term: Term, postings: [SIMD2<UInt32>], to writer: inout SegmentWriter) throws(StoreError)
        where Term.Element == UInt8 {
            guard !postings.isEmpty else { return }
            rows.append(UInt32(heap.bytes.count))
            rows.append(UInt32(term.count))
            rows.append(UInt32(postingCount))
            rows.append(UInt32(postings.count))
            heap.append(contentsOf: term)
            var bytes = BinaryWriter(capacity: postings.count * 8)
            for posting in postings {
                bytes.append(posting[0])
                bytes.append(posting[1])
            }
            try writer.append(bytes)
            postingCount += postings.count
        }

        /// Closes the postings and writes the terms.
        mutating func finish(to writer: inout SegmentWriter) throws(StoreError) {
            try writer.end()
            try writer.add(.terms, rows.bytes)
            try writer.add(.termHeap, heap.bytes)
        }
    }

    private static func addText(_ index: TextIndex, to writer: inout SegmentWriter) throws(StoreError) {
        var output = try TextOutput(writer: &writer)
        for term in sortedTerms(index) {
            let list = index.allPostings[term] ?? []
            let postings = list.map { SIMD2<UInt32>(UInt32($0.ordinal), $0.weight.bitPattern) }
            try output.append(term: term.utf8, postings: postings, to: &writer)
        }
        try output.finish(to: &writer)
    }
}
