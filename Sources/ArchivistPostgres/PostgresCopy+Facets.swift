import ArchivistBase
import ArchivistStore
import Foundation

extension PostgresCopy {
    /// Documents per value of `path` among those matching `filter`, most frequent first, ties by
    /// Archivist's order of values; an array counts each distinct element once per document. At
    /// most `limit` values.
    ///
    /// A text column (or a list of strings) is counted by SQL (`GROUP BY`, the top `limit` with
    /// their ties); the rows whose value is not typed, and the rows SQL cannot decide the filter
    /// of, are read and counted here.
    public func facet(_ path: String, matching filter: Filter = .all, limit: Int? = nil) throws -> [(value: JSONValue, count: Int)] {
        try snapshot { connection in
            var compiler = self.compiler
            let predicate = compiler.compile(filter)
            var counts: [[UInt8]: (value: JSONValue, count: Int)] = [:]
            var grouped = "FALSE"
            if let column = column(path), column.kind == .text || column.kind == .textArray {
                let name = TableName.quote(column.name)
                grouped = "\(name) IS NOT NULL"
                let scanned = try decide(
                    filter, among: Self.outside(predicate, typed: name), compiler.parameters, connection,
                    reading: [path])
                var tally = Tally()
                for (_, document) in scanned { tally.add(document.values(atPath: path)) }
                counts = tally.counts
                if predicate.sure != "FALSE" {
                    let value = column.kind == .text ? name : "v"
                    let from =
                        column.kind == .text
                        ? table.sql : "\(table.sql) CROSS JOIN LATERAL (SELECT DISTINCT unnest(\(name))) AS u(v)"
                    var sql = "SELECT \(value), count(*) FROM \(from) WHERE \(predicate.sure) AND \(grouped) GROUP BY 1 ORDER BY 2 DESC"
                    // With a limit, the most frequent and their ties suffice, unless a value counted
                    // here may rise among them.
                    if let limit, counts.isEmpty {
                        sql += " FETCH FIRST (\(compiler.parameter(String(max(limit, 1)), "bigint"))) ROWS WITH TIES"
                    }
                    let rows = try run(connection, sql, compiler.parameters, doing: "counting values of \(path) in \(table)")
                    for row in rows.values {
                        guard let text = row[0], let count = Int(row[1] ?? "") else { continue }
                        let key = Tally.key(.string(text))
                        counts[key, default: (.string(text), 0)].count += count
                    }
                }
            } else {
                var tally = Tally()
                for (_, document) in try decide(filter, among: predicate.possible, compiler.parameters, connection, reading: [path]) {
                    tally.add(document.values(atPath: path))
                }
                counts = tally.counts
            }
            let sorted = counts.values.sorted { a, b in
                a.count != b.count ? a.count > b.count : ValueOrder.compareSortable(a.value, b.value) < 0
            }
            return limit.map { Array(sorted.prefix($0)) } ?? sorted
        }
    }

    /// The documents matching `filter` per span of the date at `path`, oldest first, every span
    /// from the first to the last that holds one (empty ones with 0), as the folder's
    /// `timeline` counts them: values that are dates, each document once per span.
    public func timeline(_ path: String, by bucket: TimeBucket, matching filter: Filter = .all) throws -> [(start: Int64, count: Int)] {
        let (starts, counts) = try timelines(path, by: bucket, matching: [filter])
        return zip(starts, counts.first ?? []).map { ($0, $1) }
    }

    /// One timeline per filter over the same spans (as the folder's `timelines`).
    public func timelines(_ path: String, by bucket: TimeBucket, matching filters: [Filter]) throws -> (starts: [Int64], counts: [[Int]]) {
        guard !filters.isEmpty else { return ([], []) }
        let perFilter = try snapshot { connection in
            if filters.count > 1, let column = self.column(path), column.kind == .timestamp {
                return try self.combinedSpans(path, column: column, by: bucket, matching: filters, connection)
            }
            return try filters.map { filter in try self.spans(path, by: bucket, matching: filter, connection) }
        }
        let keys = perFilter.flatMap(\.keys)
        guard let first = keys.min(), let last = keys.max() else { return ([], filters.map { _ in [] }) }
        var starts: [Int64] = []
        var start = first
        while start <= last {
            starts.append(start)
            start = bucket.next(after: start)
        }
        return (starts, perFilter.map { counts in starts.map { counts[$0] ?? 0 } })
    }

    /// The counts per span start of one filter (spans without documents left out).
    func spans(_ path: String, by bucket: TimeBucket, matching filter: Filter, _ connection: PostgresConnection) throws -> [Int64: Int] {
        var compiler = self.compiler
        let predicate = compiler.compile(filter)
        var counts: [Int64: Int] = [:]
        var grouped = "FALSE"
        if let column = column(path), column.kind == .timestamp {
            let name = TableName.quote(column.name)
            grouped = "\(name) IS NOT NULL"
            if predicate.sure != "FALSE" {
                let unit = compiler.parameter(bucket.rawValue, "text")
                let rows = try run(
                    connection,
                    """
                    SELECT (extract(epoch FROM date_trunc(\(unit), \(name) AT TIME ZONE 'UTC')) * 1000)::bigint, count(*)
                    FROM \(table.sql) WHERE \(predicate.sure) AND \(grouped) GROUP BY 1
                    """, compiler.parameters, doing: "counting \(path) by \(bucket.rawValue) in \(table)")
                for row in rows.values {
                    guard let start = Int64(row[0] ?? ""), let count = Int(row[1] ?? "") else { continue }
                    counts[start, default: 0] += count
                }
            }
        }
        let rest = grouped == "FALSE" ? predicate.possible : Self.outside(predicate, typed: TableName.quote(column(path)!.name))
        for (_, document) in try decide(filter, among: rest, compiler.parameters, connection, reading: [path]) {
            var starts = Set<Int64>()
            for value in Self.candidates(document.values(atPath: path)) {
                if case .string(let text) = value, let instant = ISODate.instant(of: text) { starts.insert(bucket.start(of: instant)) }
            }
            for start in starts { counts[start, default: 0] += 1 }
        }
        return counts
    }

    /// The counts per span of several filters from one pass over the date column (each row
    /// counted for every filter it certainly matches), then the rows each filter leaves
    /// undecided, or whose date is not typed, decided here.
    func combinedSpans(
        _ path: String, column: ReplicaColumn, by bucket: TimeBucket, matching filters: [Filter], _ connection: PostgresConnection
    ) throws -> [[Int64: Int]] {
        var compiler = self.compiler
        let predicates = filters.map { compiler.compile($0) }
        let name = TableName.quote(column.name)
        var counts = [[Int64: Int]](repeating: [:], count: filters.count)
        let unit = compiler.parameter(bucket.rawValue, "text")
        let any = predicates.contains { $0.sure == "TRUE" } ? "TRUE" : "(" + predicates.map(\.sure).joined(separator: " OR ") + ")"
        let tallies = predicates.map { "count(*) FILTER (WHERE \($0.sure))" }.joined(separator: ", ")
        let rows = try run(
            connection,
            """
            SELECT (extract(epoch FROM date_trunc(\(unit), \(name) AT TIME ZONE 'UTC')) * 1000)::bigint, \(tallies)
            FROM \(table.sql) WHERE \(name) IS NOT NULL AND \(any) GROUP BY 1
            """, compiler.parameters, doing: "counting \(path) by \(bucket.rawValue) in \(table)")
        for row in rows.values {
            guard let start = Int64(row[0] ?? "") else { continue }
            for index in filters.indices {
                if let count = Int(row[index + 1] ?? ""), count > 0 { counts[index][start, default: 0] += count }
            }
        }
        for (index, filter) in filters.enumerated() {
            let predicate = predicates[index]
            for (_, document) in try decide(
                filter, among: Self.outside(predicate, typed: name), compiler.parameters, connection,
                reading: [path])
            {
                var starts = Set<Int64>()
                for value in Self.candidates(document.values(atPath: path)) {
                    if case .string(let text) = value, let instant = ISODate.instant(of: text) { starts.insert(bucket.start(of: instant)) }
                }
                for start in starts { counts[index][start, default: 0] += 1 }
            }
        }
        return counts
    }

    /// The rows a count by the typed `column` leaves to be decided here: those that may match and
    /// are not certain matches holding a typed value. For an exact filter, the rows without a
    /// typed value that match (written so, a planner finds them through the column's index).
    static func outside(_ predicate: SQLPredicate, typed column: String) -> String {
        predicate.isExact
            ? "\(column) IS NULL AND \(predicate.sure)" : "\(predicate.possible) AND NOT (\(predicate.sure) AND \(column) IS NOT NULL)"
    }

    /// Each value and each element of each array value (what a condition looks at).
    static func candidates(_ values: [JSONValue]) -> [JSONValue] {
        var result: [JSONValue] = []
        for value in values {
            result.append(value)
            if case .array(let elements) = value { result.append(contentsOf: elements) }
        }
        return result
    }
}

/// Counts documents per value as the folder's facets do: each document once per distinct value
/// (an array counts each distinct element), strings told apart byte for byte, numbers by value.
struct Tally {
    /// The counts by key, each with the first value seen for it.
    private(set) var counts: [[UInt8]: (value: JSONValue, count: Int)] = [:]

    /// The key that tells values apart as `=` does: bytes (a `String` key would call canonically
    /// equivalent spellings equal, which `=` does not).
    static func key(_ value: JSONValue) -> [UInt8] {
        Array(text(value).utf8)
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return "s" + text
        case .number(let literal): return Double(literal).map { $0 == 0 ? "n0" : "n\($0)" } ?? "j" + literal
        case .bool(let flag): return flag ? "b1" : "b0"
        default: return "j" + JSONWriter.compactString(value)
        }
    }

    /// Counts one document's values at the path.
    mutating func add(_ values: [JSONValue]) {
        var seen: Set<[UInt8]> = []
        for value in values {
            let items: [JSONValue]
            if case .array(let elements) = value { items = elements } else { items = [value] }
            for item in items {
                let key = Tally.key(item)
                guard seen.insert(key).inserted else { continue }
                counts[key, default: (item, 0)].count += 1
            }
        }
    }
}
