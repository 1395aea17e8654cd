import ArchivistBase
import ArchivistStore
import Foundation

extension PostgresCopy {
    /// What `find` returns: the IDs of the window in order, and how many matched in all (when
    /// asked: counting every match costs a pass over them).
    public struct FindResult: Sendable, Equatable {
        /// The IDs, in order.
        public var ids: [String]
        /// How many documents matched before skip and limit (nil unless asked).
        public var total: Int?
    }

    /// How many documents match `filter`.
    public func count(matching filter: Filter) throws -> Int {
        try snapshot { connection in
            var compiler = self.compiler
            let predicate = compiler.compile(filter)
            if predicate.isExact {
                let counted = try run(
                    connection, "SELECT count(*) FROM \(table.sql) WHERE \(predicate.sure)", compiler.parameters,
                    doing: "counting in \(table)")
                return Int(counted.scalar ?? "") ?? 0
            }
            // One pass over the rows that may match: those certain are counted, the others named
            // and decided here.
            let counted = try run(
                connection,
                "SELECT count(*) FILTER (WHERE s), array_agg(id) FILTER (WHERE NOT s) FROM (SELECT id, \(predicate.sure) AS s FROM \(table.sql) WHERE \(predicate.possible)) AS q",
                compiler.parameters, doing: "counting in \(table)")
            var count = Int(counted.values.first?[0] ?? "") ?? 0
            if let text = counted.values.first?[1] ?? nil {
                let ids = compiler.parameter(text, "text[]")
                count += try decide(filter, among: "id = ANY(\(ids))", compiler.parameters, connection).count
            }
            return count
        }
    }

    /// The documents matching a query, in the folder's order: by the sort keys (Archivist's order
    /// across types), else by relevance for a text search, else by ID; ties by ID.
    public func find(_ query: Query, counting: Bool = false) throws -> FindResult {
        try snapshot { connection in
            var compiler = self.compiler
            let predicate = compiler.compile(query.filter)
            let needed = query.limit.map { query.skip + $0 }
            let terms = query.sort.isEmpty ? Self.textTerms(query.filter) : []
            var ordered: [(id: String, keys: [JSONValue?], score: Double)]
            var total: Int?
            var sortable = "TRUE"
            var order: [String] = []
            var selected: [String] = []
            var scoring: Relevance.Statistics?
            if !terms.isEmpty {
                let statistics = try self.statistics(Set(terms).sorted(), connection)
                scoring = statistics
                selected = [score(statistics, &compiler)]
                order = ["2 DESC"]
            } else {
                var conditions: [String] = []
                for key in query.sort {
                    guard let plan = sortPlan(key, &compiler) else {
                        conditions = ["FALSE"]
                        break
                    }
                    conditions.append(plan.condition)
                    selected.append(plan.value)
                    order += plan.order
                }
                if !conditions.isEmpty { sortable = conditions.joined(separator: " AND ") }
            }
            order.append("id COLLATE \"C\"")
            // Rows SQL orders: certain matches whose keys it can order.
            var fromSQL: [(id: String, keys: [JSONValue?], score: Double)] = []
            let inSQL = sortable == "TRUE" ? predicate.sure : "\(predicate.sure) AND \(sortable)"
            if predicate.sure != "FALSE" && sortable != "FALSE" {
                let columns = ([""] + selected).enumerated().map { $0.offset == 0 ? "id" : $0.element }
                var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table.sql) WHERE \(inSQL) ORDER BY "
                sql += order.joined(separator: ", ")
                if let needed { sql += " LIMIT \(compiler.parameter(String(needed), "bigint"))" }
                let rows = try run(connection, sql, compiler.parameters, doing: "finding in \(table)")
                for row in rows.values {
                    let id = row[0] ?? ""
                    if scoring != nil {
                        fromSQL.append((id, [], Double(row[1] ?? "") ?? 0))
                    } else {
                        let keys = query.sort.indices.map { index in
                            Self.sortValue(row[index + 1], column: self.column(query.sort[index].path))
                        }
                        fromSQL.append((id, keys, 0))
                    }
                }
                if counting {
                    if needed == nil || fromSQL.count < needed! {
                        total = fromSQL.count
                    } else {
                        let counted = try run(
                            connection,
                            "SELECT count(*) FROM \(table.sql) WHERE \(inSQL)", compiler.parameters, doing: "counting in \(table)")
                        total = Int(counted.scalar ?? "") ?? 0
                    }
                }
            } else if counting {
                total = 0
            }
            // The others: decided and ordered here.
            var fromScan: [(id: String, keys: [JSONValue?], score: Double)] = []
            let rest: String
            switch (predicate.isExact, sortable) {
            case (true, "TRUE"): rest = "FALSE"
            case (true, _): rest = "NOT (\(sortable)) AND \(predicate.sure)"
            default: rest = "\(predicate.possible) AND NOT (\(inSQL))"
            }
            if rest != "FALSE" && predicate.possible != "FALSE" {
                let extra = query.sort.map(\.path) + (terms.isEmpty ? [] : textSearch.paths)
                for (id, document) in try decide(query.filter, among: rest, compiler.parameters, connection, reading: extra) {
                    if let scoring {
                        var weights: [String: Double] = [:]
                        let words = textSearch.words(of: document)
                        for term in Set(terms) { weights[term] = words.filter { $0.word == term }.reduce(0) { $0 + $1.weight } }
                        fromScan.append((id, [], Relevance.score(weights, scoring)))
                    } else {
                        let keys = query.sort.map { key -> JSONValue? in
                            let found = document.values(atPath: key.path)
                            return found.count == 1 ? found[0] : (found.isEmpty ? nil : .array(found))
                        }
                        fromScan.append((id, keys, 0))
                    }
                }
                if counting { total = (total ?? 0) + fromScan.count }
            }
            ordered = fromSQL + fromScan
            if !fromScan.isEmpty {
                ordered.sort { a, b in
                    if scoring != nil, a.score != b.score { return a.score > b.score }
                    for (k, key) in query.sort.enumerated() {
                        let c = ValueOrder.sortCompare(a.keys[k], b.keys[k], descending: key.isDescending)
                        if c != 0 { return key.isDescending ? c > 0 : c < 0 }
                    }
                    return a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
                }
            }
            let start = min(query.skip, ordered.count)
            let end = query.limit.map { min(ordered.count, start + $0) } ?? ordered.count
            return FindResult(ids: ordered[start..<end].map(\.id), total: total)
        }
    }

    /// The terms a query ranks by: those of its text searches at the top level and in `and`.
    static func textTerms(_ filter: Filter) -> [String] {
        switch filter {
        case .text(let search): return TextFolding.tokens(search)
        case .and(let filters): return filters.flatMap { textTerms($0) }
        default: return []
        }
    }

    /// How SQL orders rows by one sort key: the rows it can order (those holding a typed value
    /// of a kind whose SQL order is Archivist's), the value read for each, and the ORDER BY terms.
    /// Nil when SQL cannot order by it.
    func sortPlan(_ key: SortKey, _ compiler: inout SQLFilter) -> (condition: String, value: String, order: [String])? {
        let direction = key.isDescending ? "DESC" : "ASC"
        if key.path == "_id" {
            return ("id !~ \(SQLFilter.datePattern)", "id", ["id COLLATE \"C\" \(direction)"])
        }
        guard let column = column(key.path) else { return nil }
        let name = TableName.quote(column.name)
        switch column.kind {
        case .text:
            // Dates sort before other strings, by instant: rows holding one are ordered here.
            return ("\(name) IS NOT NULL AND \(name) !~ \(SQLFilter.datePattern)", name, ["\(name) COLLATE \"C\" \(direction)"])
        case .timestamp:
            // By instant, then by spelling (the value as the document holds it).
            let path = compiler.parameter(
                "lax " + "$" + FieldPath.components(key.path).map { "." + SQLFilter.jsonPathString($0) }.joined(), "jsonpath")
            let spelling = "(jsonb_path_query_first(doc, \(path)) #>> '{}')"
            return ("\(name) IS NOT NULL", spelling, ["\(name) \(direction)", "\(spelling) COLLATE \"C\" \(direction)"])
        case .number:
            return ("\(name) IS NOT NULL", "\(name)::text", ["\(name) \(direction)"])
        case .boolean:
            return ("\(name) IS NOT NULL", "\(name)::text", ["\(name) \(direction)"])
        case .integer, .textArray:
            return nil
        }
    }

    /// The value of a sort key as SQL returned it for a column of the path.
    static func sortValue(_ text: String?, column: ReplicaColumn?) -> JSONValue? {
        guard let text else { return nil }
        switch column?.kind {
        case .number?: return .number(text)
        case .boolean?: return .bool(text == "true" || text == "t")
        default: return .string(text)
        }
    }

    /// The relevance statistics of `terms`: the copy's rows, and the rows holding each term.
    func statistics(_ terms: [String], _ connection: PostgresConnection) throws -> Relevance.Statistics {
        var frequencies: [String: Int] = [:]
        var compiler = SQLFilter(columns: [])
        let counts = terms.map { term in
            "(SELECT count(*) FROM \(table.sql) WHERE terms @@ \(compiler.parameter(SQLFilter.tsquery([term]), "tsquery")))"
        }
        let row = try run(connection, "SELECT " + counts.joined(separator: ", "), compiler.parameters, doing: "counting terms in \(table)")
        for (index, term) in terms.enumerated() { frequencies[term] = Int(row.values.first?[index] ?? "") ?? 0 }
        return Relevance.Statistics(documents: checkpoint.rows, frequencies: frequencies)
    }

    /// The score of a row, in SQL, as `Relevance.score` sums it: each term's weight in the row
    /// (the field weights of its positions in `terms`) times its inverse document frequency, in
    /// the order of the terms, so that the sum is the same double.
    func score(_ statistics: Relevance.Statistics, _ compiler: inout SQLFilter) -> String {
        let weights = letterWeights
        let weightCase =
            "CASE w WHEN 'A' THEN \(compiler.parameter(String(weights[0]), "float8")) WHEN 'B' THEN \(compiler.parameter(String(weights[1]), "float8")) WHEN 'C' THEN \(compiler.parameter(String(weights[2]), "float8")) ELSE \(compiler.parameter(String(weights[3]), "float8")) END"
        var sum = "0::float8"
        for term in statistics.frequencies.keys.sorted() {
            let lexeme = compiler.parameter(term, "text")
            let inverse = compiler.parameter(String(statistics.inverseFrequency(of: term)), "float8")
            sum =
                "(\(sum) + COALESCE((SELECT sum(\(weightCase)) FROM unnest(terms) u, unnest(u.weights) w WHERE u.lexeme = \(lexeme)), 0) * \(inverse))"
        }
        return sum
    }

    /// The field weight each `tsvector` weight letter stands for (A, B, C, D), as `replicate`
    /// assigns the letters: A for weights of 3 and more, B for 2, C for 1, D below.
    var letterWeights: [Double] {
        var letters: [Double] = [3, 2, 1, 0]
        for field in textSearch.fields {
            let index = field.weight >= 3 ? 0 : field.weight >= 2 ? 1 : field.weight >= 1 ? 2 : 3
            letters[index] = field.weight
        }
        return letters
    }

    /// The rows of `condition` that match `filter` by Archivist's own rules, each as a document
    /// of the top-level fields the filter (and `reading`) needs.
    func decide(
        _ filter: Filter, among condition: String, _ parameters: [String?], _ connection: PostgresConnection, reading: [String] = []
    ) throws -> [(id: String, document: JSONValue)] {
        var keys = Set((filter.paths.map { $0 } + reading).compactMap { FieldPath.components($0).first })
        if filter.hasTextSearch { keys.formUnion(textSearch.paths.compactMap { FieldPath.components($0).first }) }
        keys.remove("_id")
        let ordered = keys.sorted()
        var parameters = parameters
        let reads = ordered.map { key -> String in
            parameters.append(key)
            return "doc -> $\(parameters.count)::text"
        }
        let rows = try run(
            connection,
            "SELECT " + (["id"] + reads).joined(separator: ", ") + " FROM \(table.sql) WHERE \(condition)", parameters,
            doing: "reading documents of \(table)")
        var matched: [(id: String, document: JSONValue)] = []
        for row in rows.values {
            let id = row[0] ?? ""
            var members = [JSONMember(key: "_id", value: .string(id))]
            for (index, key) in ordered.enumerated() {
                guard let text = row[index + 1], let value = try? JSONParser.parse(Array(text.utf8)) else { continue }
                members.append(JSONMember(key: key, value: value))
            }
            let document = JSONValue.object(sorting: members)
            if filter.matches(document, textSearch: textSearch) { matched.append((id, document)) }
        }
        return matched
    }
}
