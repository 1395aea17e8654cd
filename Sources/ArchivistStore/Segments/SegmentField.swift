import ArchivistBase

/// One projected field of a snapshot: its dictionary (distinct values in sort order, each with
/// its documents) read in place. Answers what the in-memory hash and sorted indexes answer.
struct SegmentField {
    /// One dictionary row.
    struct Row {
        /// The `SortableKey` rank.
        var rank: Int8
        var flags: UInt8
        /// How many documents hold the value.
        var count: Int
        /// The number (rank 1) or instant (rank 2) it sorts by.
        var number: Double
        var instant: Int64
        /// Where its postings start (in ordinals, from the start of the postings).
        var postingsStart: Int
        var valueOffset: Int
        var valueLength: Int

        var isMissing: Bool { flags & SegmentBuilder.RowFlag.missing != 0 }
        var tiesWithPrevious: Bool { flags & SegmentBuilder.RowFlag.tiesWithPrevious != 0 }
        var isFacetValue: Bool { flags & SegmentBuilder.RowFlag.notFacetValue == 0 }
    }

    private let reader: SegmentReader
    /// The dictionary's rows, read (and their blocks checked) one at a time: a lookup's binary
    /// search checks the few blocks it probes, not a dictionary of a million dates.
    private let dictionary: SegmentFile.Section
    private let heap: SegmentFile.Section
    private let postings: SegmentFile.Section
    /// The number of distinct values (rows).
    let rowCount: Int
    /// Whether some document has an array among its sort keys (then ranges and equality are left to a scan).
    let hasNestedArrays: Bool
    /// Whether some document has several values at the path, or an array.
    let isArrayValued: Bool
    private let documentCount: Int

    init(_ reader: SegmentReader, field: UInt32, documentCount: Int) throws(SegmentDamage) {
        guard let dictionary = reader.section(.dictionary, field: field), let heap = reader.section(.dictionaryHeap, field: field),
            let postings = reader.section(.postings, field: field),
            dictionary.length >= 32, (dictionary.length - 32) % SegmentBuilder.dictionaryRowSize == 0
        else { throw .unreadable("snapshot field \(field): sections missing") }
        self.reader = reader
        self.heap = heap
        self.postings = postings
        self.documentCount = documentCount
        self.dictionary = dictionary
        let trailer = BinaryReader(buffer: try reader.bytes(of: dictionary, at: dictionary.length - 32, count: 32))
        rowCount = (dictionary.length - 32) / SegmentBuilder.dictionaryRowSize
        guard trailer.uint64(at: 8) == UInt64(rowCount) else { throw .unreadable("snapshot field \(field): row count mismatch") }
        hasNestedArrays = (trailer.uint64(at: 0) ?? 0) & SegmentBuilder.FieldFlag.nestedArrays != 0
        isArrayValued = (trailer.uint64(at: 0) ?? 0) & SegmentBuilder.FieldFlag.arrayValued != 0
    }

    /// Row `index` (0 ..< rowCount).
    func row(_ index: Int) throws(SegmentDamage) -> Row {
        guard index >= 0, index < rowCount else { throw .unreadable("snapshot dictionary row \(index) out of bounds") }
        let bytes = try reader.bytes(
            of: dictionary, at: index * SegmentBuilder.dictionaryRowSize, count: SegmentBuilder.dictionaryRowSize)
        return try decodeRow(BinaryReader(buffer: bytes), index: index)
    }

    /// Rows read in runs (a read, and its blocks checked, per run of rows rather than per row):
    /// how a walk over a whole dictionary (a timeline's dates) reads it.
    static let rowsPerRead = 2048

    /// Calls `body` with each row of `range` in order (`state`, the row's index and the row),
    /// until it returns false; the rows are read `rowsPerRead` at a time.
    func forEachRow<State>(
        in range: Range<Int>, into state: inout State, _ body: (inout State, Int, Row) throws(SegmentDamage) -> Bool
    ) throws(SegmentDamage) {
        guard range.lowerBound >= 0, range.upperBound <= rowCount else {
            throw .unreadable("snapshot dictionary rows \(range) out of bounds")
        }
        let size = SegmentBuilder.dictionaryRowSize
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(range.upperBound, start + Self.rowsPerRead)
            let bytes = try reader.bytes(of: dictionary, at: start * size, count: (end - start) * size)
            for index in start..<end {
                let row = try decodeRow(
                    BinaryReader(buffer: UnsafeRawBufferPointer(rebasing: bytes[((index - start) * size)..<((index - start + 1) * size)])),
                    index: index)
                guard try body(&state, index, row) else { return }
            }
            start = end
        }
    }

    /// A row from its bytes (at the start of `r`), its postings and value checked to lie in
    /// their sections.
    private func decodeRow(_ r: BinaryReader, index: Int) throws(SegmentDamage) -> Row {
        guard let rank = r.uint8(at: 0), let flags = r.uint8(at: 1),
            let count = r.uint32(at: 4), let word = r.uint64(at: 8), let start = r.uint64(at: 16),
            let valueOffset = r.uint32(at: 24), let valueLength = r.uint32(at: 28),
            start <= UInt64(postings.length / 4), UInt64(count) <= UInt64(postings.length / 4) - start,
            UInt64(valueOffset) + UInt64(valueLength) <= UInt64(heap.length)
        else { throw .unreadable("snapshot dictionary row \(index) out of bounds") }
        let signed = Int8(bitPattern: rank)
        return Row(
            rank: signed, flags: flags, count: Int(count),
            number: signed == SortableKey.numberRank ? Double(bitPattern: word) : 0,
            instant: signed == SortableKey.dateRank ? Int64(bitPattern: word) : 0,
            postingsStart: Int(start), valueOffset: Int(valueOffset), valueLength: Int(valueLength))
    }

    /// The value of a row (nil for the row of documents without the field).
    func value(of row: Row) throws(SegmentDamage) -> JSONValue? {
        if row.isMissing { return nil }
        let bytes = try reader.bytes(of: heap, at: row.valueOffset, count: row.valueLength)
        if row.flags & SegmentBuilder.RowFlag.string != 0 {
            guard let text = UTF8Bytes.string(validating: bytes.bindMemory(to: UInt8.self)) else {
                throw .unreadable("snapshot value is not UTF-8")
            }
            return .string(text)
        }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw .unreadable("snapshot value: \(error)")
        }
    }

    /// The heap's bytes of a row's value (a string's UTF-8, else compact JSON; empty when missing).
    func valueBytes(of row: Row) throws(SegmentDamage) -> UnsafeRawBufferPointer {
        try reader.bytes(of: heap, at: row.valueOffset, count: row.valueLength)
    }

    /// The ordinals of a row, ascending.
    func ordinals(of row: Row) throws(SegmentDamage) -> UnsafeBufferPointer<UInt32> {
        let bytes = try reader.bytes(of: postings, at: row.postingsStart * 4, count: row.count * 4)
        return bytes.bindMemory(to: UInt32.self)
    }

    /// The ordinals of consecutive rows, row after row (each row's ascending), in one read.
    func ordinals(ofRows range: Range<Int>) throws(SegmentDamage) -> UnsafeBufferPointer<UInt32> {
        let span = try postingSpan(ofRows: range)
        guard !span.isEmpty else { return UnsafeBufferPointer(start: nil, count: 0) }
        let bytes = try reader.bytes(of: postings, at: span.lowerBound * 4, count: span.count * 4)
        return bytes.bindMemory(to: UInt32.self)
    }

    /// How many postings the rows of `range` hold: on a field of one value per document, how
    /// many documents have those values.
    func postingCount(ofRows range: Range<Int>) throws(SegmentDamage) -> Int {
        try postingSpan(ofRows: range).count
    }

    /// Where the postings of consecutive rows lie (the postings of consecutive rows are
    /// consecutive), in ordinals from the start of the postings; only the first and last rows are read.
    private func postingSpan(ofRows range: Range<Int>) throws(SegmentDamage) -> Range<Int> {
        guard !range.isEmpty else { return 0..<0 }
        let first = try row(range.lowerBound)
        let last = try row(range.upperBound - 1)
        let end = last.postingsStart + last.count
        guard end >= first.postingsStart else { throw .unreadable("snapshot postings out of order") }
        return first.postingsStart..<end
    }

    // MARK: Lookups

    /// The first row where `isAfter` turns true (it must be false then true along the rows);
    /// searched within `window` only, the answer clamped to it (its start when `isAfter` holds
    /// for all its rows, its end when for none).
    func partition(in window: Range<Int>? = nil, _ isAfter: (Row) throws(SegmentDamage) -> Bool) throws(SegmentDamage) -> Int {
        var low = window?.lowerBound ?? 0, high = window?.upperBound ?? rowCount
        while low < high {
            let mid = (low + high) / 2
            if try isAfter(try row(mid)) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Orders a row against a value as `SortableKey` orders them (ignoring ordinals).
    func compare(_ row: Row, _ key: SortableKey) throws(SegmentDamage) -> Int {
        if row.rank != key.rank { return row.rank < key.rank ? -1 : 1 }
        switch row.rank {
        case SortableKey.numberRank: return row.number < key.number ? -1 : (row.number > key.number ? 1 : 0)
        case SortableKey.dateRank where row.instant != key.instant: return row.instant < key.instant ? -1 : 1
        case SortableKey.dateRank, SortableKey.stringRank, 4:
            return ValueOrder.compareSortKeys(try value(of: row), key.value)
        default: return 0
        }
    }

    /// The indexes of the rows whose value is `value` as `=` tells values apart (exactly the
    /// equality index's documents for it).
    func rowIndexes(equalTo value: JSONValue) throws(SegmentDamage) -> [Int] {
        let key = SortableKey(value, ordinal: 0)
        let wanted = QueryIndex.exactKey(value)
        var position = try partition { (row) throws(SegmentDamage) in try compare(row, key) >= 0 }
        var found: [Int] = []
        while position < rowCount {
            let candidate = try row(position)
            if try compare(candidate, key) != 0 { break }
            if let stored = try self.value(of: candidate), QueryIndex.exactKey(stored) == wanted { found.append(position) }
            position += 1
        }
        return found
    }

    /// The ordinals (each once, ascending) whose value may satisfy a comparison, and whether
    /// exactly those do; nil when the field cannot narrow it. As `SortedIndex.range`.
    func range(_ condition: Condition) throws(SegmentDamage) -> (ordinals: [UInt32], isExact: Bool)? {
        guard !hasNestedArrays, let (bounds, isExact) = try rowRanges(condition) else { return nil }
        var marks = [Bool](repeating: false, count: documentCount)
        var total = 0
        for range in bounds where !range.isEmpty {
            for index in range {
                for ordinal in try ordinals(of: try row(index)) where !marks[Int(ordinal)] {
                    marks[Int(ordinal)] = true
                    total += 1
                }
            }
        }
        var result: [UInt32] = []
        result.reserveCapacity(total)
        for (ordinal, marked) in marks.enumerated() where marked { result.append(UInt32(ordinal)) }
        return (result, isExact)
    }

    /// The rows a comparison may hold for, as ranges of rows (nil when the dictionary cannot say).
    func rowRangesFor(_ condition: Condition, within window: Range<Int>? = nil) throws(SegmentDamage) -> ([Range<Int>], Bool)? {
        try rowRanges(condition, within: window)
    }

    /// The rows a comparison may hold for, as ranges of rows, and whether exactly those hold;
    /// with a `window`, those among its rows only (each bound searched within it: a walk from
    /// one end of the dictionary reads the blocks near that end, not a search's from the middle).
    private func rowRanges(_ condition: Condition, within window: Range<Int>? = nil) throws(SegmentDamage) -> ([Range<Int>], Bool)? {
        let query: JSONValue
        switch condition {
        case .gt(let v), .gte(let v), .lt(let v), .lte(let v), .eq(let v): query = v
        default: return nil
        }
        func at(_ isAfter: (Row) -> Bool) throws(SegmentDamage) -> Int { try partition(in: window) { isAfter($0) } }
        switch query {
        case .number(let literal):
            guard let q = Double(literal) else { return nil }
            let rank = SortableKey.numberRank
            let start = try at { $0.rank >= rank }
            let end = try at { $0.rank > rank }
            let lower = { (strict: Bool) throws(SegmentDamage) in
                try at { $0.rank > rank || ($0.rank == rank && (strict ? $0.number > q : $0.number >= q)) }
            }
            let upper = { (strict: Bool) throws(SegmentDamage) in
                try at { $0.rank > rank || ($0.rank == rank && (strict ? $0.number >= q : $0.number > q)) }
            }
            let bounds: (Int, Int)
            switch condition {
            case .gt: bounds = (try lower(true), end)
            case .gte: bounds = (try lower(false), end)
            case .lt: bounds = (start, try upper(true))
            case .lte: bounds = (start, try upper(false))
            default: bounds = (try lower(false), try upper(false))
            }
            return ([bounds.0..<max(bounds.0, bounds.1)], true)
        case .string(let text):
            let dateStart = try at { $0.rank >= SortableKey.dateRank }
            let datesEnd = try at { $0.rank > SortableKey.dateRank }
            let stringsEnd = try at { $0.rank > SortableKey.stringRank }
            guard let interval = ISODate.interval(of: text) else { return ([dateStart..<stringsEnd], false) }
            let instant = { (limit: Int64) throws(SegmentDamage) in
                try at { $0.rank > SortableKey.dateRank || ($0.rank == SortableKey.dateRank && $0.instant >= limit) }
            }
            let dates: (Int, Int)
            switch condition {
            case .gt: dates = (try instant(interval.end), datesEnd)
            case .gte: dates = (try instant(interval.start), datesEnd)
            case .lt: dates = (dateStart, try instant(interval.start))
            case .lte: dates = (dateStart, try instant(interval.end))
            default: dates = (try instant(interval.start), try instant(interval.end))
            }
            // Strings that are not dates compare as text with a date query: they stay candidates.
            return ([dates.0..<max(dates.0, dates.1), datesEnd..<stringsEnd], datesEnd == stringsEnd)
        default:
            return nil
        }
    }

    /// Visits each ordinal once in sort order (ties by ordinal), until `body` returns false. As
    /// `SortedIndex.walk`: ascending meets a document at its least value, descending at its greatest.
    func walk(descending: Bool, _ body: (UInt32) -> Bool) throws(SegmentDamage) {
        try walkRows(descending: descending) { ordinal, _ in body(ordinal) }
    }

    /// `walk`, with the row each document is met at (its sort key's row).
    func walkRows(descending: Bool, _ body: (UInt32, Int) -> Bool) throws(SegmentDamage) {
        try walkRows(in: 0..<rowCount, descending: descending, body)
    }

    /// `walkRows` over the rows of `range` only (not splitting a group of rows that sort equal,
    /// as `rowRangesFor` gives ranges).
    func walkRows(in range: Range<Int>, descending: Bool, _ body: (UInt32, Int) -> Bool) throws(SegmentDamage) {
        // A document of a field of one value per document is in one row: nothing to skip.
        var seen = [Bool](repeating: false, count: isArrayValued || hasNestedArrays ? documentCount : 0)
        var end = descending ? range.upperBound : range.lowerBound
        while descending ? end > range.lowerBound : end < range.upperBound {
            // A group of rows that sort equal, from `start` up to `stop`.
            var start = end, stop = end
            if descending {
                start = end - 1
                while start > range.lowerBound, try row(start).tiesWithPrevious { start -= 1 }
                stop = end
                end = start
            } else {
                stop = end + 1
                while stop < range.upperBound, try row(stop).tiesWithPrevious { stop += 1 }
                end = stop
            }
            var group: [(ordinal: UInt32, row: Int)] = []
            for index in start..<stop {
                for ordinal in try ordinals(of: try row(index)) { group.append((ordinal, index)) }
            }
            if stop - start > 1 { group.sort { $0.ordinal < $1.ordinal } }
            for (ordinal, index) in group where Int(ordinal) < documentCount {
                if !seen.isEmpty {
                    if seen[Int(ordinal)] { continue }
                    seen[Int(ordinal)] = true
                }
                if !body(ordinal, index) { return }
            }
        }
    }
}
