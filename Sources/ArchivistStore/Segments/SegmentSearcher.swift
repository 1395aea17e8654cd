import ArchivistBase
import Synchronization

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
    private let segment: OpenSegment
    private let masked: Set<Int>
    /// `live`, made on first use: a walk for the first ten asks `isLive` of the few it meets
    /// instead of filling a bit per document of the segment.
    private let liveSet = LiveOrdinals()
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
        self.segment = segment
        self.masked = masked ?? []
        masksResolved = masked != nil
        allLive = masksResolved && segment.record.deletedDocuments == 0 && (masked ?? []).isEmpty
        self.textSearch = textSearch
    }

    /// The ordinals that are live: all but the deleted ones and, when `masksResolved`, those the
    /// tail supersedes.
    var live: OrdinalSet { liveSet.value { segment.live(masking: masked) } }

    /// Whether an ordinal is in `live`, without making it.
    func isLive(_ ordinal: Int) -> Bool {
        ordinal >= 0 && ordinal < snapshot.count && !segment.isDeleted(ordinal) && !masked.contains(ordinal)
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
        guard !onKey.isEmpty, let field = try snapshot.field(key.path) else { return nil }
        var rows = 0..<0
        if counting {
            guard let exact = try exactRows(onKey, in: field) else { return nil }
            rows = exact
        }
        var others: OrdinalSet?
        if !rest.isEmpty {
            guard let set = try evaluate(rest.count == 1 ? rest[0] : .and(rest)) else { return nil }
            others = set
        }
        var damage: SegmentDamage?
        func accepts(_ ordinal: Int) -> Bool {
            guard isLive(ordinal), others?.contains(ordinal) ?? true else { return false }
            guard !masksResolved, !tail.isEmpty else { return true }
            do throws(SegmentDamage) {
                return !tail.contains(DocumentID(try snapshot.id(at: ordinal)))
            } catch {
                damage = error
                return false
            }
        }
        var found: [(ordinal: Int, row: Int)] = []
        func walk(_ rows: Range<Int>) throws(SegmentDamage) {
            try field.walkRows(in: rows, descending: key.isDescending) { ordinal, row in
                guard accepts(Int(ordinal)) else { return damage == nil }
                found.append((Int(ordinal), row))
                return found.count < needed
            }
            if let damage { throw damage }
        }
        guard counting else {
            if needed > 0 {
                guard try walkInWindows(onKey, field, descending: key.isDescending, { () -> Bool in found.count < needed }, walk) else {
                    return nil
                }
            }
            return (found, found.count, field)
        }
        if needed > 0 { try walk(rows) }
        var total = try field.postingCount(ofRows: rows)
        if (!allLive || others != nil) && !rows.isEmpty {
            // Count the live documents of the rows that the rest of the filter accepts.
            var accepted = live
            if let others { accepted.formIntersection(others) }
            total = accepted.count(of: try field.ordinals(ofRows: rows))
        }
        return (found, total, field)
    }

    /// The rows a walk from the sort's first end needs first.
    static let firstWindowRows = 128
    /// Windows of doubling size before the rest is searched as one range.
    static let windowsBeforeRest = 4

    /// Walks the rows the conditions on a field hold for, from the end the sort starts at, a
    /// window of rows at a time while `wantsMore`: each window's bounds are searched among its
    /// own rows (`exactRows(_:in:within:)`), so the newest ten cost the blocks at the
    /// dictionary's end rather than a binary search's from its middle, and the far bound of a
    /// long range (`pub_date >= 2000-01-01`) is never searched at all. The first window holds
    /// `firstWindowRows` rows, each next one twice the last; after `windowsBeforeRest` windows,
    /// or when the first finds no row (the range lies further in), the rest is one range. A
    /// window never splits rows that sort equal. False when a window's rows cannot be told
    /// exactly (the caller answers another way).
    private func walkInWindows(
        _ conditions: [Condition], _ field: SegmentField, descending: Bool, _ wantsMore: () -> Bool,
        _ walk: (Range<Int>) throws(SegmentDamage) -> Void
    ) throws(SegmentDamage) -> Bool {
        var edge = descending ? field.rowCount : 0
        var width = Self.firstWindowRows
        for number in 0...Self.windowsBeforeRest {
            guard wantsMore(), descending ? edge > 0 : edge < field.rowCount else { return true }
            var window: Range<Int>
            if number == Self.windowsBeforeRest {
                window = descending ? 0..<edge : edge..<field.rowCount
            } else if descending {
                var low = max(0, edge - width)
                while low > 0, try field.row(low).tiesWithPrevious { low -= 1 }
                window = low..<edge
            } else {
                var high = min(field.rowCount, edge + width)
                while high < field.rowCount, try field.row(high).tiesWithPrevious { high += 1 }
                window = edge..<high
            }
            guard var rows = try exactRows(conditions, in: field, within: window) else { return false }
            if number == 0, rows.isEmpty {
                // Nothing at this end: the range, if any, lies further in; one search for it.
                window = descending ? 0..<window.lowerBound : window.upperBound..<field.rowCount
                guard let rest = try exactRows(conditions, in: field, within: window) else { return false }
                rows = rest
                edge = descending ? 0 : field.rowCount
            } else {
                edge = descending ? window.lowerBound : window.upperBound
            }
            try walk(rows)
            // The range ends inside this window: nothing beyond it holds.
            if descending ? rows.lowerBound > window.lowerBound : rows.upperBound < window.upperBound { return true }
            width *= 2
        }
        return true
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
    /// dates that a date range would have to check one by one). With a `window`, the run among
    /// its rows only, and exact there.
    func exactRows(
        _ conditions: [Condition], in field: SegmentField, within window: Range<Int>? = nil
    ) throws(SegmentDamage)
        -> Range<Int>?
    {
        guard !conditions.isEmpty, !field.hasNestedArrays, !field.isArrayValued else { return nil }
        var rows = window ?? 0..<field.rowCount
        for condition in conditions {
            switch condition {
            case .eq(let value), .gt(let value), .gte(let value), .lt(let value), .lte(let value):
                guard Self.isIndexable(value) else { return nil }
            default: return nil
            }
            guard let (ranges, exact) = try field.rowRangesFor(condition, within: window), exact else { return nil }
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

/// A segment's live ordinals, made once, on first use (shared by the copies of its searcher).
private final class LiveOrdinals: Sendable {
    private let made = Mutex<OrdinalSet?>(nil)

    /// The set, made by `make` the first time.
    func value(_ make: () -> OrdinalSet) -> OrdinalSet {
        made.withLock { made in
            if let made { return made }
            let set = make()
            made = set
            return set
        }
    }
}
