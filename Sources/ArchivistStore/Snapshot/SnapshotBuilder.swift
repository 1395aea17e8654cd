/// Builds a snapshot's sections from the index: the IDs in byte order (a document's place is its
/// ordinal), each document's entry, and per projected field a dictionary of its distinct values in
/// sort order with the documents holding each (the postings), and the text index's terms with their
/// postings and weights (`docs/FORMAT.md`, "index.snapshot").
///
/// The dictionary holds what a `SortedIndex` holds, grouped by value: one row per distinct value
/// (per spelling: equal numbers spelt apart are rows that tie), in `SortableKey` order; walking its rows in order and
/// their postings is walking the sorted index, and a row's postings are what an equality index
/// gives for its value.
enum SnapshotBuilder {
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
    /// The bytes of a row of the terms.
    static let termRowSize = 16

    /// The whole snapshot file of these entries (sorted by ID bytes, every one's fields in the
    /// index file); `columns` reads their projected values by ordinal for the paths it is given.
    static func build(
        entries: [IndexEntry], projection: Projection, textSearch: TextSearch,
        columns: (_ paths: [String]) throws(StoreError) -> [String: [JSONValue?]], coverage: SnapshotFile.Coverage, schemaHash: UInt64
    ) throws(StoreError) -> [UInt8] {
        var writer = SnapshotWriter()
        addIDs(entries, to: &writer)
        addEntries(entries, to: &writer)
        writer.add(.fieldNames, Array(projection.paths.joined(separator: "\n").utf8))
        // One column in memory at a time, then the text fields together.
        for (field, path) in projection.paths.enumerated() {
            let values = try columns([path])[path] ?? [JSONValue?](repeating: nil, count: entries.count)
            addField(values, field: UInt32(field), to: &writer)
        }
        let textColumns = try columns(textSearch.paths.filter(projection.paths.contains))
        addText(count: entries.count, textSearch: textSearch, columns: textColumns, to: &writer)
        return writer.finish(
            documentCount: entries.count, documentBytes: entries.reduce(0) { $0 + $1.size }, coverage: coverage, schemaHash: schemaHash,
            createdAt: .now())
    }

    private static func addIDs(_ entries: [IndexEntry], to writer: inout SnapshotWriter) {
        var offsets = BinaryWriter(capacity: (entries.count + 1) * 8)
        var heap = BinaryWriter(capacity: entries.count * 32)
        for entry in entries {
            offsets.append(UInt64(heap.bytes.count))
            heap.append(contentsOf: entry.id.utf8)
        }
        offsets.append(UInt64(heap.bytes.count))
        writer.add(.idOffsets, offsets.bytes)
        writer.add(.idHeap, heap.bytes)
    }

    private static func addEntries(_ entries: [IndexEntry], to writer: inout SnapshotWriter) {
        var rows = BinaryWriter(capacity: entries.count * entryRowSize)
        for entry in entries {
            guard case .indexFile(let offset, let length) = entry.fields else {
                preconditionFailure("a snapshot holds only entries whose fields are in the index file")
            }
            rows.append(entry.hash)
            rows.append(UInt64(entry.size))
            rows.append(entry.storedAt.milliseconds)
            rows.append(entry.updatedAt.milliseconds)
            rows.append(UInt64(offset))
            rows.append(UInt32(length))
            rows.append(UInt32(0))
        }
        writer.add(.entries, rows.bytes)
    }

    /// One distinct value of a field while its dictionary is built.
    private struct Group {
        var key: SortableKey
        var isMissing: Bool
        var ordinals: [UInt32]
    }

    private static func addField(_ values: [JSONValue?], field: UInt32, to writer: inout SnapshotWriter) {
        var groups: [Group] = []
        var groupOf: [DocumentID: Int] = [:]
        var missing: [UInt32] = []
        var nested = false
        var arrayValued = false
        for (ordinal, value) in values.enumerated() {
            let found = Projection.resolvedValues(value)
            if !arrayValued, found.count > 1 || found.contains(where: \.isArray) { arrayValued = true }
            let (keys, hasNested) = SortedIndex.keys(of: found)
            nested = nested || hasNested
            if keys.isEmpty {
                missing.append(UInt32(ordinal))
                continue
            }
            for key in keys {
                // One row per spelling: `879` and `879.0` are equal (and sort as ties), but a facet
                // shows the spelling of the first document that has it.
                let exact: DocumentID
                if case .string(let text) = key {
                    exact = DocumentID("s" + text)
                } else {
                    exact = DocumentID(JSONWriter.compactString(key))
                }
                if let group = groupOf[exact] {
                    if groups[group].ordinals.last != UInt32(ordinal) { groups[group].ordinals.append(UInt32(ordinal)) }
                } else {
                    groupOf[exact] = groups.count
                    groups.append(Group(key: SortableKey(key, ordinal: 0), isMissing: false, ordinals: [UInt32(ordinal)]))
                }
            }
        }
        if !missing.isEmpty { groups.append(Group(key: SortableKey(nil, ordinal: 0), isMissing: true, ordinals: missing)) }
        // Sort order; a missing field sorts with null (before it, as it has no value). The groups'
        // places are sorted, not the groups (each holds an array of postings).
        var order = Array(groups.indices)
        order.sort { a, b in
            if groups[a].key < groups[b].key { return true }
            if groups[b].key < groups[a].key { return false }
            return groups[a].isMissing && !groups[b].isMissing
        }
        groups = order.map { groups[$0] }
        var rows = BinaryWriter(capacity: (groups.count + 1) * dictionaryRowSize)
        var heap = BinaryWriter()
        var postings = BinaryWriter(capacity: values.count * 4)
        var start = 0
        for (position, group) in groups.enumerated() {
            let ties = position > 0 && !(groups[position - 1].key < group.key)
            let (valueBytes, isString) = encodedValue(group.key.value)
            var flags: UInt8 = ties ? RowFlag.tiesWithPrevious : 0
            if group.isMissing { flags |= RowFlag.missing | RowFlag.notFacetValue }
            if isString { flags |= RowFlag.string }
            if group.key.value == .array([]) { flags |= RowFlag.notFacetValue }
            rows.append(UInt8(bitPattern: group.key.rank))
            rows.append(flags)
            rows.append(UInt8(0))
            rows.append(UInt8(0))
            rows.append(UInt32(group.ordinals.count))
            rows.append(sortWord(group.key))
            rows.append(UInt64(start))
            rows.append(UInt32(heap.bytes.count))
            rows.append(UInt32(valueBytes.count))
            heap.append(contentsOf: valueBytes)
            for ordinal in group.ordinals { postings.append(ordinal) }
            start += group.ordinals.count
        }
        // The field's flags, after the last row.
        rows.append((nested ? FieldFlag.nestedArrays : 0) | (arrayValued ? FieldFlag.arrayValued : 0))
        rows.append(UInt64(groups.count))
        rows.append(UInt64(0))
        rows.append(UInt64(0))
        writer.add(.dictionary, field: field, rows.bytes)
        writer.add(.dictionaryHeap, field: field, heap.bytes)
        writer.add(.postings, field: field, postings.bytes)
    }

    /// A value as the dictionary's heap holds it: a string's UTF-8 bytes, else its compact JSON.
    private static func encodedValue(_ value: JSONValue?) -> ([UInt8], Bool) {
        switch value {
        case nil: return ([], false)
        case .string(let text)?: return (Array(text.utf8), true)
        case let other?: return (JSONWriter.compactBytes(other), false)
        }
    }

    /// The number (as its bits) or the instant a row sorts by.
    private static func sortWord(_ key: SortableKey) -> UInt64 {
        switch key.rank {
        case SortableKey.numberRank: return key.number.bitPattern
        case SortableKey.dateRank: return UInt64(bitPattern: key.instant)
        default: return 0
        }
    }

    private static func addText(count: Int, textSearch: TextSearch, columns: [String: [JSONValue?]], to writer: inout SnapshotWriter) {
        let index = TextIndex(count: count) { ordinal in
            textSearch.fields.map { field in (Projection.resolvedValues(columns[field.path]?[ordinal] ?? nil), field.weight) }
        }
        var rows = BinaryWriter()
        var heap = BinaryWriter()
        var postings = BinaryWriter()
        var start = 0
        for (term, list) in index.allPostings.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            rows.append(UInt32(heap.bytes.count))
            rows.append(UInt32(term.utf8.count))
            rows.append(UInt32(start))
            rows.append(UInt32(list.count))
            heap.append(contentsOf: term.utf8)
            for posting in list {
                postings.append(UInt32(posting.ordinal))
                postings.append(posting.weight)
            }
            start += list.count
        }
        writer.add(.terms, rows.bytes)
        writer.add(.termHeap, heap.bytes)
        writer.add(.textPostings, postings.bytes)
    }
}
