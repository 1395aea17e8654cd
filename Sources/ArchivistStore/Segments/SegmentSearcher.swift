import ArchivistBase

/// The live documents of a segment (those no newer segment nor line of the log supersedes),
/// answering filters from the segment's structures alone: an exact set of ordinals, or nil when
/// the structures cannot answer a filter exactly (the store then answers it the slow way).
///
/// A condition on a field whose documents each hold at most one value is answered one dictionary
/// row at a time: a row's documents match exactly when its value does. On a field with several
/// values per document (keywords), only conditions that ask whether some value matches are, and
/// their negations.
struct SegmentSearcher: Sendable {
    let snapshot: MappedSegment
    /// The ordinals that are live: all but the deleted ones and, when `masksResolved`, those the
    /// tail supersedes.
    let live: OrdinalSet
    /// Whether `live` leaves out what the tail supersedes. When not, only `sortedRange` without
    /// a count answers, telling the tail's documents by their IDs; the rest answer nil.
    let masksResolved: Bool
    /// Whether every ordinal is live (nothing newer supersedes one).
    let allLive: Bool
    let textSearch: TextSearch

    /// The live documents of `segment`, all but its deleted ones and those the tail `masked`
    /// (nil: not looked up yet; see `masksResolved`).
    init(_ segment: OpenSegment, masked: Set<Int>?, textSearch: TextSearch) {
        snapshot = segment.mapped
        live = segment.live(masking: masked ?? [])
        masksResolved = masked != nil
        allLive = masksResolved && live.count == segment.mapped.count
        self.textSearch = textSearch
    }

    /// The live documents matching `filter`, or nil when the snapshot cannot say exactly.
    func matching(_ filter: Filter) throws(SegmentDamage) -> OrdinalSet? {
        guard masksResolved, var found = try evaluate(filter) else { return nil }
        found.formIntersection(live)
        return found
    }

    private func evaluate(_ filter: Filter) throws(SegmentDamage) -> OrdinalSet? {
        switch filter {
        case .all:
            return OrdinalSet(capacity: snapshot.count, full: true)
        case .and(let filters):
            return try combine(Self.mergingConditions(filters), startingFull: true) { $0.formIntersection($1) }
        case .or(let filters):
            return try combine(filters, startingFull: false) { $0.formUnion($1) }
        case .nor(let filters):
            return try combine(filters, startingFull: true) { $0.subtract($1) }
        case .text(let search):
            return try textMatches(TextFolding.tokens(search))
        case .field(let path, let conditions):
            if path == "_id" { return try idMatches(conditions) }
            guard let field = try snapshot.field(path), !field.hasNestedArrays else { return nil }
            if let rows = try exactRows(conditions, in: field) {
                // `pub_date >= 2000-01-01 and pub_date < 2001-01-01`: one run of rows, one read.
                return try documents(ofRows: [rows], in: field)
            }
            var result = OrdinalSet(capacity: snapshot.count, full: true)
            for condition in conditions {
                guard let set = try matches(condition, in: field) else { return nil }
                result.formIntersection(set)
            }
            return result
        }
    }

    /// The parts of a conjunction with the conditions on the same path as one part (`pub_date >=
    /// A and pub_date < B` is one range, not the intersection of two): the documents matching
    /// `{p: c1} and {p: c2}` are those matching `{p: [c1, c2]}`.
    static func mergingConditions(_ filters: [Filter]) -> [Filter] {
        var merged: [Filter] = []
        var positions: [String: Int] = [:]
        for filter in filters.flatMap(conjuncts) {
            guard case .field(let path, let conditions) = filter else {
                merged.append(filter)
                continue
            }
            if let position = positions[path], case .field(_, let earlier) = merged[position] {
                merged[position] = .field(path, earlier + conditions)
            } else {
                positions[path] = merged.count
                merged.append(filter)
            }
        }
        return merged
    }

    /// The sets of `filters` folded into an empty or a full set by `step`; nil when one of them
    /// cannot be answered exactly.
    private func combine(
        _ filters: [Filter], startingFull: Bool, _ step: (inout OrdinalSet, OrdinalSet) -> Void
    ) throws(SegmentDamage) -> OrdinalSet? {
        var result = OrdinalSet(capacity: snapshot.count, full: startingFull)
        for child in filters {
            guard let set = try evaluate(child) else { return nil }
            step(&result, set)
        }
        return result
    }

    /// Documents holding every term.
    private func textMatches(_ terms: [String]) throws(SegmentDamage) -> OrdinalSet {
        var result = OrdinalSet(capacity: snapshot.count)
        if terms.isEmpty { return result }
        let text = try snapshot.text()
        var lists: [UnsafeBufferPointer<SIMD2<UInt32>>] = []
        for term in Set(terms) { lists.append(try text.postings(of: term)) }
        lists.sort { $0.count < $1.count }
        for posting in lists[0] where posting[0] < UInt32(snapshot.count) { result.insert(Int(posting[0])) }
        for list in lists.dropFirst() {
            var next = OrdinalSet(capacity: snapshot.count)
            for posting in list where posting[0] < UInt32(snapshot.count) && result.contains(Int(posting[0])) {
                next.insert(Int(posting[0]))
            }
            result = next
        }
        return result
    }

    /// `_id = ID` (or `in`) by binary search; other conditions on `_id` are not answered here.
    private func idMatches(_ conditions: [Condition]) throws(SegmentDamage) -> OrdinalSet? {
        var result = OrdinalSet(capacity: snapshot.count, full: true)
        for condition in conditions {
            let values: [JSONValue]
            switch condition {
            case .eq(let value): values = [value]
            case .in(let list): values = list
            default: return nil
            }
            var set = OrdinalSet(capacity: snapshot.count)
            for value in values {
                guard case .string(let id) = value else { return nil }
                if let ordinal = try snapshot.ordinal(of: id) { set.insert(ordinal) }
            }
            result.formIntersection(set)
        }
        return result
    }

    /// The documents a condition holds for, or nil when a row at a time cannot tell.
    private func matches(_ condition: Condition, in field: SegmentField) throws(SegmentDamage) -> OrdinalSet? {
        if field.isArrayValued {
            switch condition {
            case .ne(let value):
                return try complement(matches(.eq(value), in: field))
            case .nin(let values):
                return try complement(matches(.in(values), in: field))
            case .not(let conditions):
                var all = OrdinalSet(capacity: snapshot.count, full: true)
                for inner in conditions {
                    guard let set = try matches(inner, in: field) else { return nil }
                    all.formIntersection(set)
                }
                return complement(all)
            default:
                guard Self.asksForSomeValue(condition) else { return nil }
            }
        }
        let (ranges, exact) = try candidateRows(condition, in: field)
        if exact { return try documents(ofRows: ranges, in: field) }
        var result = OrdinalSet(capacity: snapshot.count)
        for range in ranges {
            for index in range {
                let row = try field.row(index)
                let value = try field.value(of: row)
                guard condition.holds(for: value.map { [$0] } ?? []) else { continue }
                for ordinal in try field.ordinals(of: row) where ordinal < UInt32(snapshot.count) { result.insert(Int(ordinal)) }
            }
        }
        return result
    }

    /// The documents of runs of a field's rows. Consecutive rows have consecutive postings: a run
    /// is one read (its blocks checked once), not one per row.
    private func documents(ofRows ranges: [Range<Int>], in field: SegmentField) throws(SegmentDamage) -> OrdinalSet {
        var result = OrdinalSet(capacity: snapshot.count)
        for range in ranges where !range.isEmpty {
            for ordinal in try field.ordinals(ofRows: range) where ordinal < UInt32(snapshot.count) { result.insert(Int(ordinal)) }
        }
        return result
    }

    /// For a filter whose conditions on the field a query sorts by (a field of one value per
    /// document) are ranges or equalities, the first `needed` live matches in sort order (with the
    /// row each is met at) and how many match, found by walking the dictionary over those
    /// conditions' rows from the end the sort starts at, each document tested against the rest
    /// of the filter (`section_name = Sports and pub_date >= 2000-01-01` by date). The range is
    /// never gathered as a set: the ten newest since 2000 cost ten documents' rows, not a million
    /// ordinals. Nil when the filter has no such conditions or the rest cannot be answered exactly.
    ///
    /// Without `counting`, `total` is only how many were found; and where the tail's masks were
    /// not looked up, a document whose ID the tail changed (`tail`) is passed over as the masks
    /// would: a look-up of the few documents walked instead of the tail's every change.
    func sortedRange(
        _ filter: Filter, by key: SortKey, needed: Int, counting: Bool = true, tail: Set<DocumentID> = []
    ) throws(SegmentDamage) -> (found: [(ordinal: Int, row: Int)], total: Int, field: SegmentField)? {
        guard masksResolved || !counting else { return nil }
        var onKey: [Condition] = []
        var rest: [Filter] = []
        for part in Self.conjuncts(filter) {
            if case .field(let path, let conditions) = part, path == key.path { onKey += conditions } else { rest.append(part) }
        }
        guard !onKey.isEmpty, let field = try snapshot.field(key.path), let rows = try exactRows(onKey, in: field) else { return nil }
        var others: OrdinalSet?
        if !rest.isEmpty {
            guard let set = try evaluate(rest.count == 1 ? rest[0] : .and(rest)) else { return nil }
            others = set
        }
        var damage: SegmentDamage?
        func accepts(_ ordinal: Int) -> Bool {
            guard live.contains(ordinal), others?.contains(ordinal) ?? true else { return false }
            guard !masksResolved, !tail.isEmpty else { return true }
            do throws(SegmentDamage) {
                return !tail.contains(DocumentID(try snapshot.id(at: ordinal)))
            } catch {
                damage = error
                return false
            }
        }
        var found: [(ordinal: Int, row: Int)] = []
        if needed > 0 {
            try field.walkRows(in: rows, descending: key.isDescending) { ordinal, row in
                guard accepts(Int(ordinal)) else { return damage == nil }
                found.append((Int(ordinal), row))
                return found.count < needed
            }
        }
        if let damage { throw damage }
        guard counting else { return (found, found.count, field) }
        var total = try field.postingCount(ofRows: rows)
        if (!allLive || others != nil) && !rows.isEmpty {
            // Count the live documents of the rows that the rest of the filter accepts.
            var accepted = live
            if let others { accepted.formIntersection(others) }
            total = accepted.count(of: try field.ordinals(ofRows: rows))
        }
        return (found, total, field)
    }

    /// How many live documents match a filter whose every condition is a range or an equality
    /// on one field of one value per document, without reading a posting (the postings of
    /// consecutive rows are consecutive); nil for any other filter, or when documents of the
    /// snapshot were changed or removed after it.
    func countOfRange(_ filter: Filter) throws(SegmentDamage) -> Int? {
        guard masksResolved, allLive else { return nil }
        var path: String?
        var conditions: [Condition] = []
        for part in Self.conjuncts(filter) {
            guard case .field(let partPath, let more) = part, path == nil || path == partPath else { return nil }
            path = partPath
            conditions += more
        }
        guard let path, path != "_id", let field = try snapshot.field(path), let rows = try exactRows(conditions, in: field) else {
            return nil
        }
        return try field.postingCount(ofRows: rows)
    }

    /// The parts of a conjunction (`and`), or the filter itself.
    static func conjuncts(_ filter: Filter) -> [Filter] {
        if case .and(let children) = filter { return children.flatMap(conjuncts) }
        return [filter]
    }

    /// The one run of a field's rows whose documents are exactly those every condition holds
    /// for: on a field of one value per document, ranges and equalities of numbers and dates.
    /// Nil when the dictionary cannot give it so (another field or condition, strings among the
    /// dates that a date range would have to check one by one).
    func exactRows(_ conditions: [Condition], in field: SegmentField) throws(SegmentDamage) -> Range<Int>? {
        guard !conditions.isEmpty, !field.hasNestedArrays, !field.isArrayValued else { return nil }
        var rows = 0..<field.rowCount
        for condition in conditions {
            switch condition {
            case .eq(let value), .gt(let value), .gte(let value), .lt(let value), .lte(let value):
                guard Self.isIndexable(value) else { return nil }
            default: return nil
            }
            guard let (ranges, exact) = try field.rowRangesFor(condition), exact else { return nil }
            let nonEmpty = ranges.filter { !$0.isEmpty }
            guard nonEmpty.count <= 1 else { return nil }
            let range = nonEmpty.first ?? rows.lowerBound..<rows.lowerBound
            let lower = max(rows.lowerBound, range.lowerBound)
            rows = lower..<max(lower, min(rows.upperBound, range.upperBound))
        }
        return rows
    }

    private func complement(_ set: OrdinalSet?) -> OrdinalSet? {
        guard let set else { return nil }
        var result = OrdinalSet(capacity: snapshot.count, full: true)
        result.subtract(set)
        return result
    }

    /// Whether a condition holds for a list of values exactly when it holds for one of them (so
    /// on a field of several values per document each row can be judged alone).
    static func asksForSomeValue(_ condition: Condition) -> Bool {
        func isScalar(_ value: JSONValue) -> Bool {
            switch value {
            case .string, .number, .bool: return true
            default: return false
            }
        }
        switch condition {
        case .eq(let value), .gt(let value), .gte(let value), .lt(let value), .lte(let value): return isScalar(value)
        case .in(let values): return values.allSatisfy(isScalar)
        case .contains, .regex: return true
        case .exists: return true
        default: return false
        }
    }

    /// The rows that may hold a value the condition holds for, and whether exactly those do (else
    /// each is checked): the rows of a range or of an equal value when the dictionary can find
    /// them, else every row.
    private func candidateRows(_ condition: Condition, in field: SegmentField) throws(SegmentDamage) -> (rows: [Range<Int>], exact: Bool) {
        func isDate(_ value: JSONValue) -> Bool {
            if case .string(let text) = value { return ISODate.interval(of: text) != nil }
            return false
        }
        /// Sorted row indexes as runs of consecutive rows.
        func runs(_ rows: [Int]) -> [Range<Int>] {
            var result: [Range<Int>] = []
            for row in rows {
                if let last = result.last, last.upperBound == row {
                    result[result.count - 1] = last.lowerBound..<(row + 1)
                } else {
                    result.append(row..<(row + 1))
                }
            }
            return result
        }
        switch condition {
        case .eq(let value) where Self.isIndexable(value):
            if isDate(value), let (ranges, exact) = try field.rowRangesFor(condition) { return (ranges, exact) }
            if !isDate(value) { return (runs(try field.rowIndexes(equalTo: value)), true) }
        case .in(let values) where values.allSatisfy(Self.isIndexable) && !values.contains(where: isDate):
            var rows: [Int] = []
            for value in values { rows.append(contentsOf: try field.rowIndexes(equalTo: value)) }
            return (runs(Array(Set(rows)).sorted()), true)
        case .gt(let value), .gte(let value), .lt(let value), .lte(let value):
            guard Self.isIndexable(value), let (ranges, exact) = try field.rowRangesFor(condition) else { break }
            return (ranges, exact)
        default:
            break
        }
        return ([0..<field.rowCount], false)
    }

    /// Whether the dictionary can look a value up (not null: `= null` also matches a missing field).
    static func isIndexable(_ value: JSONValue) -> Bool {
        switch value {
        case .string, .number, .bool: return true
        default: return false
        }
    }
}
