import Foundation

/// How query values compare: MongoDB's rules (no comparison across types, numbers by value,
/// a cross-type order for sorting) plus dates: date strings compare as instants.
public enum ValueOrder {
    /// A number literal's value.
    @inline(__always)
    static func number(_ literal: String) -> Double? { Double(literal) }

    /// Whether a document value equals a query value (`$eq`): same type; numbers by value; a
    /// date-only query value matches any instant of its day.
    public static func equals(_ candidate: JSONValue, _ query: JSONValue) -> Bool {
        switch (candidate, query) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b || number(a) == number(b)
        case (.string(let a), .string(let b)):
            // Byte for byte, as MongoDB compares strings (no Unicode equivalence).
            if compareBytes(a, b) == 0 { return true }
            if let t = ISODate.instant(of: a), let range = ISODate.interval(of: b) { return t >= range.start && t < range.end }
            return false
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equals($0, $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && equals($0.value, $1.value) }
        default: return false
        }
    }

    /// How a document value compares with a query value of the same type (negative: less,
    /// zero: equal or within the query's day, positive: greater); nil across types.
    public static func compare(_ candidate: JSONValue, _ query: JSONValue) -> Int? {
        switch (candidate, query) {
        case (.null, .null): return 0
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (!a ? -1 : 1)
        case (.number(let a), .number(let b)):
            guard let x = number(a), let y = number(b) else { return nil }
            return x < y ? -1 : (x > y ? 1 : 0)
        case (.string(let a), .string(let b)):
            if let t = ISODate.instant(of: a), let range = ISODate.interval(of: b) {
                return t < range.start ? -1 : (t >= range.end ? 1 : 0)
            }
            return compareBytes(a, b)
        default: return nil
        }
    }

    /// MongoDB's sort order across types: missing and null, numbers, strings (dates first, by
    /// instant), objects, arrays, booleans. An array sorts by its least element ascending and its
    /// greatest descending, as MongoDB does.
    public static func sortCompare(_ a: JSONValue?, _ b: JSONValue?, descending: Bool) -> Int {
        compareSortKeys(sortKey(a, descending: descending), sortKey(b, descending: descending))
    }

    /// Compares values already reduced by `sortKey`: an empty array comes before null and missing.
    public static func compareSortKeys(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        let emptyA = a == .array([]), emptyB = b == .array([])
        if emptyA || emptyB { return emptyA == emptyB ? 0 : (emptyA ? -1 : 1) }
        return compareSortable(a, b)
    }

    /// The value an array stands for in a sort (an empty array stays itself: it sorts before
    /// null and missing, as in MongoDB).
    package static func sortKey(_ value: JSONValue?, descending: Bool) -> JSONValue? {
        guard case .array(let elements)? = value else { return value }
        if elements.isEmpty { return value }
        var best = elements[0]
        for element in elements.dropFirst() {
            let c = compareSortable(element, best)
            if descending ? c > 0 : c < 0 { best = element }
        }
        return best
    }

    /// The sort key of the values found at a path (as `JSONValue.values(atPath:)` gives them):
    /// the one value found, or the array of them all.
    package static func sortKey(found values: [JSONValue], descending: Bool) -> JSONValue? {
        sortKey(values.count == 1 ? values[0] : (values.isEmpty ? nil : .array(values)), descending: descending)
    }

    static func rank(_ value: JSONValue?) -> Int {
        switch value {
        case nil, .null?: return 0
        case .number?: return 1
        case .string?: return 2
        case .object?: return 3
        case .array?: return 4
        case .bool?: return 5
        }
    }

    /// How two strings compare byte by byte in UTF-8 (-1, 0, 1): the one order of strings in
    /// queries, sorts and indexes, as MongoDB's default (Swift's `==` and `<` would call
    /// canonically equivalent spellings equal and order by their normalized form).
    /// Compared with memcmp over the strings' contiguous UTF-8 (sorting a million distinct
    /// values compares strings some twenty million times).
    @inlinable
    public static func compareBytes(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in compareBytes(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }

    /// How two byte strings compare (-1, 0, 1): memcmp, then the shorter first.
    @inlinable @inline(__always)
    public static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let c = memcmp(x, y, common)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// A total order on values (used for sorting and for sorted indexes).
    public static func compareSortable(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.number(let x)?, .number(let y)?):
            let p = number(x) ?? 0, q = number(y) ?? 0
            return p < q ? -1 : (p > q ? 1 : 0)
        case (.string(let x)?, .string(let y)?):
            let dx = ISODate.instant(of: x), dy = ISODate.instant(of: y)
            switch (dx, dy) {
            case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
            case (.some, nil): return -1
            case (nil, .some): return 1
            case (nil, nil): break
            }
            return compareBytes(x, y)
        case (.bool(let x)?, .bool(let y)?):
            return x == y ? 0 : (!x ? -1 : 1)
        case (.array(let x)?, .array(let y)?):
            for (p, q) in zip(x, y) {
                let c = compareSortable(p, q)
                if c != 0 { return c }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case (.object(let x)?, .object(let y)?):
            for (p, q) in zip(x, y) {
                let order = UTF8Bytes.compare(p.key, q.key)
                if order != 0 { return order < 0 ? -1 : 1 }
                let c = compareSortable(p.value, q.value)
                if c != 0 { return c }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default:
            return 0
        }
    }
}
