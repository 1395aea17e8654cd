/// Writes a new snapshot from an old one and the changes after it, without reading the documents
/// the changes did not touch (as LevelDB compacts sorted tables and Lucene merges segments): the
/// IDs and entries are merged in ID order; each field's dictionary rows are copied with their
/// postings renumbered, the changed documents' values merged in; the text index's terms likewise.
/// Only the changed documents' index lines are parsed. The result is the snapshot `SnapshotBuilder`
/// would build from every entry, byte for byte but for its creation time.
enum SnapshotMerger {
    /// Where a document of the new snapshot comes from: an ordinal of the old one (0 and up) or
    /// an index into the changed entries (-1 for the first, -2 for the second...).
    typealias Source = Int32

    /// Merges `old` (less its `superseded` ordinals) with the changed entries `added` (sorted by
    /// ID bytes, none in the old snapshot but superseded ones); `columns` reads the changed
    /// entries' projected values by position.
    static func merge(
        _ old: MappedSnapshot, superseded: Set<Int>, added: [IndexEntry], into writer: inout SnapshotWriter,
        projection: Projection, textSearch: TextSearch,
        columns: SnapshotBuilder.Columns, coverage: SnapshotFile.Coverage, schemaHash: UInt64
    ) throws(StoreError) {
        let plan = try damage { () throws(SnapshotDamage) in try Plan(old, superseded: superseded, added: added) }
        try writeIDs(plan, old: old, added: added, to: &writer)
        try writeEntries(plan, old: old, added: added, to: &writer)
        try writer.add(.fieldNames, Array(projection.paths.joined(separator: "\n").utf8))
        for (number, path) in projection.paths.enumerated() {
            guard let field = try damage({ () throws(SnapshotDamage) in try old.field(path) }) else {
                throw .damagedSnapshot(path: FileNames.snapshot, reason: "snapshot field \(path) missing")
            }
            let values = try columns([path], 0..<added.count)[path] ?? [JSONValue?](repeating: nil, count: added.count)
            let changes = SnapshotBuilder.groups(of: values, ordinals: { plan.addedToNew[$0] })
            try mergeField(field, changes: changes, plan: plan, number: UInt32(number), to: &writer)
        }
        let changedText = try SnapshotBuilder.textIndex(
            count: added.count, textSearch: textSearch, projection: projection, columns: columns)
        try mergeText(try damage { () throws(SnapshotDamage) in try old.text() }, changes: changedText, plan: plan, to: &writer)
        var documentBytes = old.reader.documentBytes
        for ordinal in superseded { documentBytes -= try damage { () throws(SnapshotDamage) in try old.entry(at: ordinal).size } }
        for entry in added { documentBytes += entry.size }
        try writer.finish(
            documentCount: plan.sources.count, documentBytes: documentBytes, coverage: coverage, schemaHash: schemaHash,
            createdAt: .now())
    }

    /// The new snapshot's order: every document's source, and each old and changed document's
    /// new ordinal.
    struct Plan {
        /// The source of each new ordinal.
        var sources: [Source] = []
        /// The new ordinal of each old one (`UInt32.max`: superseded).
        var oldToNew: [UInt32]
        /// The new ordinal of each changed entry.
        var addedToNew: [UInt32]

        init(_ old: MappedSnapshot, superseded: Set<Int>, added: [IndexEntry]) throws(SnapshotDamage) {
            oldToNew = [UInt32](repeating: UInt32.max, count: old.count)
            addedToNew = [UInt32](repeating: 0, count: added.count)
            sources.reserveCapacity(old.count - superseded.count + added.count)
            var next = 0
            for ordinal in 0..<old.count where !superseded.contains(ordinal) {
                let id = try old.idBytes(at: ordinal)
                while next < added.count, Self.precedes(added[next].id, id) {
                    addedToNew[next] = UInt32(sources.count)
                    sources.append(Source(-1 - next))
                    next += 1
                }
                oldToNew[ordinal] = UInt32(sources.count)
                sources.append(Source(ordinal))
            }
            while next < added.count {
                addedToNew[next] = UInt32(sources.count)
                sources.append(Source(-1 - next))
                next += 1
            }
        }

        /// Whether `id` comes before the ID bytes `other` (byte order).
        static func precedes(_ id: String, _ other: UnsafeRawBufferPointer) -> Bool {
            var id = id
            return id.withUTF8 { ValueOrder.compareBytes(UnsafeRawBufferPointer($0), other) < 0 }
        }

        /// The old postings renumbered, the superseded left out (still ascending: the order of
        /// the documents that stay does not change).
        func renumbered(_ ordinals: UnsafeBufferPointer<UInt32>) -> [UInt32] {
            var result: [UInt32] = []
            result.reserveCapacity(ordinals.count)
            for ordinal in ordinals {
                let mapped = oldToNew[Int(ordinal)]
                if mapped != UInt32.max { result.append(mapped) }
            }
            return result
        }
    }

    private static func writeIDs(_ plan: Plan, old: MappedSnapshot, added: [IndexEntry], to writer: inout SnapshotWriter) throws(StoreError)
    {
        // Offsets first (a pass over the lengths), then the bytes, each streamed.
        try writer.begin(.idOffsets)
        var chunk = BinaryWriter(capacity: 1 << 16)
        var offset: UInt64 = 0
        for source in plan.sources {
            chunk.append(offset)
            offset += UInt64(try length(of: source, old: old, added: added))
            if chunk.bytes.count >= 1 << 16 {
                try writer.append(chunk)
                chunk = BinaryWriter(capacity: 1 << 16)
            }
        }
        chunk.append(offset)
        try writer.append(chunk)
        try writer.end()
        try writer.begin(.idHeap)
        chunk = BinaryWriter(capacity: 1 << 16)
        for source in plan.sources {
            if source >= 0 {
                chunk.append(contentsOf: try damage { () throws(SnapshotDamage) in try old.idBytes(at: Int(source)) })
            } else {
                chunk.append(contentsOf: added[Int(-1 - source)].id.utf8)
            }
            if chunk.bytes.count >= 1 << 16 {
                try writer.append(chunk)
                chunk = BinaryWriter(capacity: 1 << 16)
            }
        }
        try writer.append(chunk)
        try writer.end()
    }

    private static func length(of source: Source, old: MappedSnapshot, added: [IndexEntry]) throws(StoreError) -> Int {
        if source >= 0 { return try damage { () throws(SnapshotDamage) in try old.idBytes(at: Int(source)).count } }
        return added[Int(-1 - source)].id.utf8.count
    }

    private static func writeEntries(
        _ plan: Plan, old: MappedSnapshot, added: [IndexEntry], to writer: inout SnapshotWriter
    ) throws(StoreError) {
        try writer.begin(.entries)
        var chunk = BinaryWriter(capacity: 1 << 16)
        for source in plan.sources {
            if source >= 0 {
                // The old row as it is: its fields' offset in the same index file still holds.
                chunk.append(contentsOf: try damage { () throws(SnapshotDamage) in try old.entryRowBytes(at: Int(source)) })
            } else {
                SnapshotBuilder.appendEntryRow(added[Int(-1 - source)], to: &chunk)
            }
            if chunk.bytes.count >= 1 << 16 {
                try writer.append(chunk)
                chunk = BinaryWriter(capacity: 1 << 16)
            }
        }
        try writer.append(chunk)
        try writer.end()
    }

    /// A dictionary row while a run of ties is merged: an old row (its renumbered postings) or a
    /// changed value's group, or both when they spell the value alike.
    private struct Member {
        var oldRow: SnapshotField.Row?
        var group: SnapshotBuilder.Group?
        var ordinals: [UInt32]
        var isMissing: Bool
    }

    /// Merges a field's old dictionary with the changed documents' groups (in dictionary order).
    private static func mergeField(
        _ field: SnapshotField, changes: SnapshotBuilder.FieldGroups, plan: Plan, number: UInt32, to writer: inout SnapshotWriter
    ) throws(StoreError) {
        var output = SnapshotBuilder.DictionaryOutput()
        let groups = changes.groups
        var row = 0
        var next = 0
        while row < field.rowCount || next < groups.count {
            // The next run of rows that tie: old rows only (before the next group), groups only
            // (before the next old row), or both.
            var oldRun: Range<Int> = row..<row
            var groupRun: Range<Int> = next..<next
            if next == groups.count {
                oldRun = row..<(try damage { () throws(SnapshotDamage) in try tieRunEnd(field, from: row) })
            } else {
                let key = groups[next].key
                // The first old row at or after the group's key.
                let at = try damage { () throws(SnapshotDamage) in
                    try partition(field, from: row) { (candidate) throws(SnapshotDamage) in try field.compare(candidate, key) >= 0 }
                }
                if at > row {
                    // Old rows before the group; a run stops at `at` (the row there sorts after them).
                    oldRun = row..<min(at, try damage { () throws(SnapshotDamage) in try tieRunEnd(field, from: row) })
                } else {
                    var groupEnd = next + 1
                    while groupEnd < groups.count, !(key < groups[groupEnd].key) { groupEnd += 1 }
                    groupRun = next..<groupEnd
                    var ties = false
                    if row < field.rowCount {
                        ties = try damage { () throws(SnapshotDamage) in try field.compare(try field.row(row), key) == 0 }
                    }
                    if ties { oldRun = row..<(try damage { () throws(SnapshotDamage) in try tieRunEnd(field, from: row) }) }
                }
            }
            try appendRun(field, oldRun, groups[groupRun], plan: plan, to: &output)
            row = oldRun.upperBound
            next = groupRun.upperBound
        }
        try output.write(
            field: number, hasNestedArrays: field.hasNestedArrays || changes.hasNestedArrays,
            isArrayValued: field.isArrayValued || changes.isArrayValued, to: &writer)
    }

    /// The end of the run of old rows that tie with row `start`.
    private static func tieRunEnd(_ field: SnapshotField, from start: Int) throws(SnapshotDamage) -> Int {
        var end = start + 1
        while end < field.rowCount, try field.row(end).tiesWithPrevious { end += 1 }
        return end
    }

    /// The first row from `start` where `isAfter` turns true (false then true along the rows).
    private static func partition(
        _ field: SnapshotField, from start: Int, _ isAfter: (SnapshotField.Row) throws(SnapshotDamage) -> Bool
    ) throws(SnapshotDamage) -> Int {
        // Galloping first: the next group is usually near.
        var low = start
        var step = 1
        var high = start
        while high < field.rowCount, !(try isAfter(try field.row(high))) {
            low = high + 1
            high = start + step
            step *= 2
        }
        high = min(high, field.rowCount)
        while low < high {
            let mid = (low + high) / 2
            if try isAfter(try field.row(mid)) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Writes a run of rows that tie: old rows renumbered, changed groups merged into the old row
    /// of the same spelling or added, empty rows left out, the run in the order a build gives
    /// (the documents without the field first, then by first document).
    private static func appendRun(
        _ field: SnapshotField, _ oldRun: Range<Int>, _ groupRun: ArraySlice<SnapshotBuilder.Group>, plan: Plan,
        to output: inout SnapshotBuilder.DictionaryOutput
    ) throws(StoreError) {
        var members: [Member] = []
        for index in oldRun {
            let oldRow = try damage { () throws(SnapshotDamage) in try field.row(index) }
            let ordinals = plan.renumbered(try damage { () throws(SnapshotDamage) in try field.ordinals(of: oldRow) })
            members.append(Member(oldRow: oldRow, group: nil, ordinals: ordinals, isMissing: oldRow.isMissing))
        }
        for group in groupRun {
            var merged = false
            for position in members.indices where members[position].group == nil {
                guard let oldRow = members[position].oldRow, oldRow.isMissing == group.isMissing else { continue }
                var same = group.isMissing
                if !same {
                    let stored = try damage { () throws(SnapshotDamage) in try field.value(of: oldRow) }
                    same = stored.map(SnapshotBuilder.spelling) == group.key.value.map(SnapshotBuilder.spelling)
                }
                if same {
                    members[position].group = group
                    members[position].ordinals = union(members[position].ordinals, group.ordinals)
                    merged = true
                    break
                }
            }
            if !merged { members.append(Member(oldRow: nil, group: group, ordinals: group.ordinals, isMissing: group.isMissing)) }
        }
        members.removeAll { $0.ordinals.isEmpty }
        if members.count > 1 {
            members.sort { a, b in
                if a.isMissing != b.isMissing { return a.isMissing }
                return a.ordinals[0] < b.ordinals[0]
            }
        }
        for (position, member) in members.enumerated() {
            let ties = position > 0
            if let oldRow = member.oldRow {
                var flags = oldRow.flags & ~SnapshotBuilder.RowFlag.tiesWithPrevious
                if ties { flags |= SnapshotBuilder.RowFlag.tiesWithPrevious }
                let word: UInt64 =
                    switch oldRow.rank {
                    case SortableKey.numberRank: oldRow.number.bitPattern
                    case SortableKey.dateRank: UInt64(bitPattern: oldRow.instant)
                    default: 0
                    }
                let value = try damage { () throws(SnapshotDamage) in try field.valueBytes(of: oldRow) }
                member.ordinals.withUnsafeBufferPointer { ordinals in
                    output.appendRow(rank: oldRow.rank, flags: flags, sortWord: word, value: value, ordinals: ordinals)
                }
            } else if var group = member.group {
                group.ordinals = member.ordinals
                output.appendRow(group, ties: ties)
            }
        }
    }

    /// The union of two ascending lists of ordinals.
    static func union(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                result.append(a[i])
                i += 1
            } else if i == a.count || b[j] < a[i] {
                result.append(b[j])
                j += 1
            } else {
                result.append(a[i])
                i += 1
                j += 1
            }
        }
        return result
    }

    /// Merges the old text index with the changed documents' (terms in byte order).
    private static func mergeText(_ text: SnapshotText, changes: TextIndex, plan: Plan, to writer: inout SnapshotWriter) throws(StoreError)
    {
        var output = try SnapshotBuilder.TextOutput(writer: &writer)
        let changedTerms = SnapshotBuilder.sortedTerms(changes)
        var next = 0
        func changedPostings(_ term: String) -> [SIMD2<UInt32>] {
            (changes.allPostings[term] ?? []).map { SIMD2<UInt32>(plan.addedToNew[Int($0.ordinal)], $0.weight.bitPattern) }
        }
        for index in 0..<text.termCount {
            let (term, postings) = try damage { () throws(SnapshotDamage) in try text.term(at: index) }
            // Changed terms before this one.
            while next < changedTerms.count {
                var changed = changedTerms[next]
                let order = changed.withUTF8 { ValueOrder.compareBytes(UnsafeRawBufferPointer($0), term) }
                if order >= 0 { break }
                try output.append(term: changed.utf8, postings: changedPostings(changed), to: &writer)
                next += 1
            }
            var renumbered: [SIMD2<UInt32>] = []
            renumbered.reserveCapacity(postings.count)
            for posting in postings {
                let mapped = plan.oldToNew[Int(posting[0])]
                if mapped != UInt32.max { renumbered.append(SIMD2(mapped, posting[1])) }
            }
            if next < changedTerms.count {
                var changed = changedTerms[next]
                if changed.withUTF8({ ValueOrder.compareBytes(UnsafeRawBufferPointer($0), term) }) == 0 {
                    renumbered = unionPostings(renumbered, changedPostings(changed))
                    next += 1
                }
            }
            try output.append(term: term, postings: renumbered, to: &writer)
        }
        while next < changedTerms.count {
            try output.append(term: changedTerms[next].utf8, postings: changedPostings(changedTerms[next]), to: &writer)
            next += 1
        }
        try output.finish(to: &writer)
    }

    /// The union of two lists of postings by ascending ordinal (no ordinal is in both: a changed
    /// document's old postings were left out).
    static func unionPostings(_ a: [SIMD2<UInt32>], _ b: [SIMD2<UInt32>]) -> [SIMD2<UInt32>] {
        DocumentStore.merge(a, b, needed: a.count + b.count) { $0[0] < $1[0] }
    }

    /// Runs a read of the old snapshot, reporting damage as a store error (the store then reads
    /// the log and builds a new snapshot from it).
    private static func damage<T>(_ body: () throws(SnapshotDamage) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .damagedSnapshot(path: FileNames.snapshot, reason: error.description)
        }
    }
}
