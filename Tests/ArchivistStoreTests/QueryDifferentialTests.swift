import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

// A differential test of the query layer: random filters, sorts and facets are answered by the
// store (from the projected columns with its hash, sorted and text indexes, or by reading the
// documents when a path lies outside the projection) and by a plain scan of every document with
// `Filter.matches`, and the two must agree exactly. Everything is seeded, so a failure reproduces;
// each mismatch prints the filter as its Swift description.

// MARK: - Random numbers

// MARK: - The store under test

/// Where a store under test answers from: the whole log read into memory; one segment; many
/// segments (updates and removals spread across them) and a tail; or segments merged from
/// several, with a tail.
enum StorageMode: String, CaseIterable, Sendable, CustomStringConvertible {
    case logOnly = "log only"
    case oneSegment = "one segment"
    case manySegments = "many segments and a tail"
    case mergedSegments = "merged segments and a tail"

    var description: String { rawValue }

    /// The options of a store in this mode (no automatic flushes: the fixture flushes when it
    /// wants; merges of two when the mode merges, else none).
    var options: DocumentStore.Options {
        .init(lockTimeout: 5, flushThreshold: 0, mergeFactor: self == .mergedSegments ? 2 : 1_000, usesSegments: self != .logOnly)
    }
}

/// A store on a test folder, opened as every store of these tests is.
fileprivate func openStore(in folder: TemporaryFolder, mode: StorageMode = .logOnly) throws -> DocumentStore {
    try DocumentStore(folder: folder.data, schema: .testArticles, options: mode.options)
}

/// Stores the documents in one batch; each one the store refuses is an issue.
fileprivate func storeAll(_ documents: [JSONValue], in store: DocumentStore) throws {
    for result in try store.upsert(documents) {
        if case .failure(let error) = result.outcome { Issue.record("cannot store \(result.id ?? "?"): \(error)") }
    }
}

/// A store of generated NYT documents plus hand-made awkward ones, and the documents as stored.
final class QueryFixture {
    let folder: TemporaryFolder
    let store: DocumentStore
    /// Every stored document, sorted by ID bytes.
    let documents: [JSONValue]
    let ids: [String]

    /// Where the store answers from.
    let mode: StorageMode

    init(seed: UInt64, count: Int, mode: StorageMode = .logOnly) throws {
        self.mode = mode
        folder = try TemporaryFolder()
        let writer = try openStore(in: folder, mode: mode)
        var generator = ArticleGenerator(seed: seed)
        let generated = generator.documents(count)
        switch mode {
        case .logOnly:
            try storeAll(generated + QueryEdgeDocuments.edgeDocuments, in: writer)
        case .oneSegment:
            try storeAll(generated + QueryEdgeDocuments.edgeDocuments, in: writer)
            try writer.merge()
        case .manySegments, .mergedSegments:
            // Eight segments, each of new documents, updates of older ones and removals; after
            // them (the tail) new ones, changed ones and removals again.
            let ids = generated.compactMap { $0["_id"]?.stringValue }
            let chunk = max(1, generated.count / 8)
            for start in stride(from: 0, to: generated.count, by: chunk) {
                try storeAll(Array(generated[start..<min(generated.count, start + chunk)]), in: writer)
                if start > 0 {
                    let updated = stride(from: start / 3, to: start, by: 13).map { index in
                        generated[index].setting("word_count", to: .number(String(start + index)))
                    }
                    try storeAll(updated, in: writer)
                    try writer.remove(stride(from: start / 2 + 5, to: start, by: 29).map { ids[$0] })
                }
                try writer.merge()
            }
            try storeAll(QueryEdgeDocuments.edgeDocuments, in: writer)
            let changed = stride(from: 0, to: ids.count, by: 7).map { index in
                generated[index].setting("section_name", to: .string(index % 2 == 0 ? "Changed After" : "Sports"))
            }
            try storeAll(changed, in: writer)
            try writer.remove(stride(from: 3, to: ids.count, by: 11).map { ids[$0] })
        }
        // A freshly opened store reads what the folder holds: the segments and the log after them.
        store = try openStore(in: folder, mode: mode)
        let ids = try byBytes(store.entries().map(\.id))
        var documents: [JSONValue] = []
        for id in ids {
            documents.append(try #require(try store.document(withID: id)))
        }
        self.ids = ids
        self.documents = documents
    }

    /// The IDs of the documents a plain scan finds, in ID order.
    func scan(_ filter: Filter) -> [String] {
        zip(ids, documents).filter { filter.matches($0.1, textSearch: StoreSchema.testArticles.textSearch) }.map(\.0)
    }
}

/// Collects mismatches, recording the first few as issues and the rest as a count.
fileprivate struct Mismatches {
    var count = 0
    var shown = 0
    let limit = 12

    mutating func record(_ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        count += 1
        if shown < limit {
            shown += 1
            Issue.record(Comment(rawValue: message()), sourceLocation: sourceLocation)
        }
    }

    func summarize(_ what: String, of total: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        if count > shown {
            Issue.record("\(count) of \(total) \(what) differed in all (only the first \(shown) are shown)", sourceLocation: sourceLocation)
        }
    }
}

/// The IDs present in one list but not the other, for messages.
fileprivate func difference(_ actual: [String], _ expected: [String]) -> String {
    let a = Set(actual), e = Set(expected)
    let extra = actual.filter { !e.contains($0) }
    let missing = expected.filter { !a.contains($0) }
    var parts: [String] = []
    if !extra.isEmpty { parts.append("extra \(extra.prefix(8))\(extra.count > 8 ? " (+\(extra.count - 8))" : "")") }
    if !missing.isEmpty { parts.append("missing \(missing.prefix(8))\(missing.count > 8 ? " (+\(missing.count - 8))" : "")") }
    if actual.count != Set(actual).count { parts.append("\(actual.count - Set(actual).count) repeated IDs") }
    if parts.isEmpty { parts.append("same IDs, different order") }
    return parts.joined(separator: "; ")
}

fileprivate func byBytes(_ ids: [String]) -> [String] {
    ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
}

// MARK: - Random filters

// MARK: - Reference answers

/// The value a sort reads from a document: the single value at the path, the list of them, or nil.
fileprivate func sortValue(_ document: JSONValue, _ path: String) -> JSONValue? {
    let values = document.values(atPath: path)
    return values.count == 1 ? values[0] : (values.isEmpty ? nil : .array(values))
}

/// Sorts scanned documents by the keys with `ValueOrder.sortCompare`, ties by ID bytes, then
/// applies skip and limit. `values[path][i]` is the sort value of the i-th document.
fileprivate func referenceOrder(_ matches: [Int], ids: [String], values: [String: [JSONValue?]], query: Query) -> [String] {
    let columns = query.sort.map { values[$0.path]! }
    let ordered = matches.sorted { a, b in
        for (k, key) in query.sort.enumerated() {
            let c = ValueOrder.sortCompare(columns[k][a], columns[k][b], descending: key.isDescending)
            if c != 0 { return key.isDescending ? c > 0 : c < 0 }
        }
        return ids[a].utf8.lexicographicallyPrecedes(ids[b].utf8)
    }.map { ids[$0] }
    let start = min(query.skip, ordered.count)
    let end = query.limit.map { min(ordered.count, start + $0) } ?? ordered.count
    return Array(ordered[start..<end])
}

/// How a facet tells values apart: strings byte for byte (as `=` compares them), numbers by value.
fileprivate func facetKey(_ value: JSONValue) -> String {
    switch value {
    case .string(let text): return "s" + text.utf8.map { String($0, radix: 16) }.joined(separator: ".")
    case .number(let literal): return "n" + String(Double(literal) ?? 0)
    default: return "j" + JSONWriter.compactString(value)
    }
}

/// Documents per value of a path, counted over the documents themselves.
fileprivate func referenceFacet(_ documents: [JSONValue], path: String, limit: Int?) -> [(value: JSONValue, count: Int)] {
    var counts: [String: (value: JSONValue, count: Int)] = [:]
    var order: [String] = []
    for document in documents {
        var seen: Set<String> = []
        for value in document.values(atPath: path) {
            let items: [JSONValue]
            if case .array(let elements) = value { items = elements } else { items = [value] }
            for item in items {
                let key = facetKey(item)
                guard seen.insert(key).inserted else { continue }
                if counts[key] == nil {
                    counts[key] = (item, 0)
                    order.append(key)
                }
                counts[key]!.count += 1
            }
        }
    }
    let sorted = order.map { counts[$0]! }.sorted { a, b in
        a.count != b.count ? a.count > b.count : ValueOrder.compareSortable(a.value, b.value) < 0
    }
    return limit.map { Array(sorted.prefix($0)) } ?? sorted
}

/// What two facet answers disagree on: the entries only one of them has, or their order.
fileprivate func describeDifference(_ actual: [(value: JSONValue, count: Int)], _ expected: [(value: JSONValue, count: Int)]) -> String {
    let show = { (entry: (value: JSONValue, count: Int)) in "\(JSONWriter.compactString(entry.value))=\(entry.count)" }
    let a = actual.map(show), e = expected.map(show)
    let onlyActual = a.filter { !e.contains($0) }, onlyExpected = e.filter { !a.contains($0) }
    if onlyActual.isEmpty && onlyExpected.isEmpty { return "same entries in another order: \(a.prefix(20))" }
    return
        "only the store has \(onlyActual.prefix(10))\(onlyActual.count > 10 ? " (+\(onlyActual.count - 10))" : ""); only the scan has \(onlyExpected.prefix(10))\(onlyExpected.count > 10 ? " (+\(onlyExpected.count - 10))" : "")"
}

// MARK: - Tests

@Suite struct QueryDifferentialTests {
    static let seeds: [UInt64] = [20_150_701, 20_190_215]
    static let documentCount = 400

    @Test("find and count through the indexes return exactly the IDs a plain scan matches", arguments: seeds, StorageMode.allCases)
    func findMatchesAPlainScan(seed: UInt64, mode: StorageMode) throws {
        let fixture = try QueryFixture(seed: seed, count: Self.documentCount, mode: mode)
        var generator = QueryGenerator(seed: seed ^ 0xF11, documents: fixture.documents)
        var mismatches = Mismatches()
        let rounds = 260
        var nonEmpty = 0
        var freshSearches = 0
        for round in 0..<rounds {
            let filter = generator.filter()
            let expected = fixture.scan(filter)
            if !expected.isEmpty { nonEmpty += 1 }
            let result = try fixture.store.find(Query(filter: filter))
            // A text search without a sort comes by relevance; anything else by ID.
            let actual = filter.hasTextSearch ? byBytes(result.ids) : result.ids
            if actual != expected {
                mismatches.record(
                    "seed \(seed) round \(round): find(\(filter)) differs from the scan: \(difference(actual, expected)) (found \(actual.count), scan \(expected.count), read from disk for \(result.scannedPaths))"
                )
                continue
            }
            if result.total != expected.count {
                mismatches.record(
                    "seed \(seed) round \(round): find(\(filter)).total is \(result.total), the scan matched \(expected.count)")
                continue
            }
            let counted = try fixture.store.count(matching: filter)
            if counted.count != expected.count {
                mismatches.record(
                    "seed \(seed) round \(round): count(matching: \(filter)) is \(counted.count), the scan matched \(expected.count)")
            }
            if filter.hasTextSearch, freshSearches < 12 {
                // The first text search of a freshly opened store may take another path than later ones.
                freshSearches += 1
                let fresh = try openStore(in: fixture.folder, mode: fixture.mode).find(Query(filter: filter))
                if byBytes(fresh.ids) != expected {
                    mismatches.record(
                        "seed \(seed) round \(round): find(\(filter)) as the first query of a freshly opened store differs from the scan: \(difference(byBytes(fresh.ids), expected))"
                    )
                }
            }
        }
        mismatches.summarize("filters", of: rounds)
        // The draw must be worth something: most filters match some documents, some match none.
        #expect(nonEmpty > rounds / 3, "only \(nonEmpty) of \(rounds) filters matched anything")
    }

    @Test(
        "sorted, skipped and limited queries return the scan sorted with ValueOrder.sortCompare, ties by ID", arguments: seeds,
        StorageMode.allCases)
    func sortedWindowsMatchASortedScan(seed: UInt64, mode: StorageMode) throws {
        let fixture = try QueryFixture(seed: seed, count: Self.documentCount, mode: mode)
        var generator = QueryGenerator(seed: seed ^ 0x5027, documents: fixture.documents)
        var values: [String: [JSONValue?]] = [:]
        for path in QueryGenerator.sortPaths { values[path] = fixture.documents.map { sortValue($0, path) } }
        var mismatches = Mismatches()
        let rounds = 120
        for round in 0..<rounds {
            // Broad filters half the time, so that small windows walk the sorted index.
            var filter: Filter =
                generator.dice.chance(50)
                ? (generator.dice.chance(50) ? .all : .field("pub_date", [.exists(true)])) : generator.filter(depth: 1)
            let sort = generator.sort()
            // A third of the time a range on the first sort key (from a stored value), which the
            // segments answer by walking that key's dictionary.
            let pick = fixture.documents[generator.dice.below(fixture.documents.count)]
            if generator.dice.chance(33), let value = sortValue(pick, sort[0].path), !value.isArray, !value.isObject {
                filter = .field(sort[0].path, [sort[0].isDescending ? .lte(value) : .gte(value)])
            }
            let skip = generator.dice.chance(60) ? 0 : generator.dice.below(30)
            let limit: Int? = generator.dice.chance(20) ? nil : 1 + generator.dice.below(generator.dice.chance(50) ? 10 : 80)
            let query = Query(filter: filter, sort: sort, skip: skip, limit: limit)
            let matches = fixture.documents.indices.filter {
                filter.matches(fixture.documents[$0], textSearch: StoreSchema.testArticles.textSearch)
            }
            let expected = referenceOrder(matches, ids: fixture.ids, values: values, query: query)
            let result = try fixture.store.find(query)
            if result.ids != expected || result.total != matches.count {
                let keys = sort.map { "\($0.path)\($0.isDescending ? ":desc" : "")" }.joined(separator: ", ")
                var firstDifference = ""
                if let at = result.ids.indices.first(where: { $0 < expected.count && result.ids[$0] != expected[$0] }) {
                    let value = { (id: String, path: String) -> String in
                        let position = fixture.ids.firstIndex(of: id)!
                        return values[path]![position].map(JSONWriter.compactString) ?? "missing"
                    }
                    let shown = sort.map { key in
                        "\(key.path): found \(value(result.ids[at], key.path)) vs expected \(value(expected[at], key.path))"
                    }
                    firstDifference =
                        "; first difference at \(at): found \(result.ids[at]), expected \(expected[at]) (\(shown.joined(separator: "; ")))"
                }
                mismatches.record(
                    "seed \(seed) round \(round): find(Query(filter: \(filter), sort: [\(keys)], skip: \(skip), limit: \(limit.map(String.init) ?? "nil"))) differs from the sorted scan: \(difference(result.ids, expected)), total \(result.total) vs \(matches.count)\(firstDifference)"
                )
            }
            // The same window without its total, from a store just opened (the tail's changes not
            // yet looked up in the segments: they are told by ID).
            var window = query
            window.countsTotal = false
            let uncounted = try openStore(in: fixture.folder, mode: fixture.mode).find(window)
            if uncounted.ids != expected || uncounted.total < min(matches.count, skip + uncounted.ids.count)
                || uncounted.total > matches.count
            {
                mismatches.record(
                    "seed \(seed) round \(round): find(\(window)) without its total differs from the sorted scan: \(difference(uncounted.ids, expected)), total \(uncounted.total) (matches \(matches.count))"
                )
            }
        }
        mismatches.summarize("sorted queries", of: rounds)
    }

    @Test("facet counts per value what counting the scanned documents gives", arguments: seeds, StorageMode.allCases)
    func facetsMatchCountingTheScan(seed: UInt64, mode: StorageMode) throws {
        let fixture = try QueryFixture(seed: seed, count: Self.documentCount, mode: mode)
        var generator = QueryGenerator(seed: seed ^ 0xFACE7, documents: fixture.documents)
        var mismatches = Mismatches()
        let paths = [
            "section_name", "news_desk", "word_count", "keywords.value", "byline.original", "pub_date",
            "headline.main", "document_type", "type_of_material", "subsection_name", "source",
        ]
        let rounds = 50
        for round in 0..<rounds {
            let path = generator.dice.pick(paths)
            let filter = generator.dice.chance(30) ? Filter.all : generator.filter(depth: 1)
            let limit: Int? = generator.dice.chance(50) ? nil : 1 + generator.dice.below(12)
            let matching = zip(fixture.ids, fixture.documents).filter {
                filter.matches($0.1, textSearch: StoreSchema.testArticles.textSearch)
            }.map(
                \.1)
            let expected = referenceFacet(matching, path: path, limit: limit)
            let actual = try fixture.store.facet(path, matching: filter, limit: limit).values
            let same = actual.count == expected.count && zip(actual, expected).allSatisfy { $0.value == $1.value && $0.count == $1.count }
            if !same {
                mismatches.record(
                    "seed \(seed) round \(round): facet(\"\(path)\", matching: \(filter), limit: \(limit.map(String.init) ?? "nil")) differs from counting the scan: \(describeDifference(actual, expected))"
                )
            }
        }
        mismatches.summarize("facets", of: rounds)
    }
}

// MARK: - The discrepancies the random draw finds, each on a few documents

/// A store of a few documents given as JSON text.
fileprivate final class SmallStore {
    let folder: TemporaryFolder
    let store: DocumentStore
    let documents: [JSONValue]

    init(_ texts: [String]) throws {
        folder = try TemporaryFolder()
        store = try openStore(in: folder)
        documents = try texts.map { try JSONParser.parse($0) }
        try storeAll(documents, in: store)
    }

    func scan(_ filter: Filter) -> [String] {
        byBytes(
            documents.filter { filter.matches($0, textSearch: StoreSchema.testArticles.textSearch) }.compactMap { $0["_id"]?.stringValue })
    }
}

extension QueryDifferentialTests {
    @Test("a range condition on a field holding several values returns each matching document once")
    func rangeOnAMultiValuedFieldReturnsEachDocumentOnce() throws {
        let small = try SmallStore([
            #"{"_id": "a", "keywords": [{"value": "Baseball"}, {"value": "Elections"}, {"value": "Refugees"}], "pub_date": ["2015-07-01", "2019-02-15T05:00:00Z"]}"#,
            #"{"_id": "b", "keywords": [{"value": "Elections"}], "pub_date": "2016-01-01T00:00:00Z"}"#,
            #"{"_id": "c", "keywords": [], "pub_date": "2001-01-01"}"#,
        ])
        let cases: [Filter] = [
            .field("keywords.value", [.gt(.string("A"))]),
            .field("keywords.value", [.gte(.string("Baseball")), .lt(.string("Z"))]),
            .field("pub_date", [.gte(.string("2010-01-01"))]),
            .field("pub_date", [.eq(.string("2015-07-01"))]),
            .or([.field("keywords.value", [.lt(.string("Z"))]), .field("pub_date", [.lt(.string("2002-01-01"))])]),
        ]
        for filter in cases {
            let expected = small.scan(filter)
            let result = try small.store.find(Query(filter: filter))
            #expect(result.ids == expected, "find(\(filter))")
            #expect(result.total == expected.count, "find(\(filter)).total")
            #expect(try small.store.count(matching: filter).count == expected.count, "count(matching: \(filter))")
        }
        // Facets among the matches count each document once.
        let facet = try small.store.facet("keywords.value", matching: .field("keywords.value", [.gt(.string("A"))])).values
        #expect(
            facet.map { "\(JSONWriter.compactString($0.value))=\($0.count)" } == [#""Elections"=2"#, #""Baseball"=1"#, #""Refugees"=1"#])
    }

    @Test("equality with -0 finds the documents holding 0, as the scan does")
    func negativeZeroEqualsZero() throws {
        let small = try SmallStore([
            #"{"_id": "zero", "word_count": 0}"#,
            #"{"_id": "negative-zero", "word_count": -0.0}"#,
            #"{"_id": "one", "word_count": 1}"#,
        ])
        for literal in ["0", "-0", "0.0", "-0.0", "0e5"] {
            for filter in [
                Filter.field("word_count", [.eq(.number(literal))]), .field("word_count", [.in([.number(literal), .number("7")])]),
            ] {
                let expected = small.scan(filter)
                #expect(expected == ["negative-zero", "zero"])
                #expect(try small.store.find(Query(filter: filter)).ids == expected, "find(\(filter))")
            }
        }
    }

    @Test("a field holding an array below a dotted path matches and sorts as the document holds it")
    func anArrayAtADottedLeafMatchesAsInTheDocument() throws {
        let small = try SmallStore([
            #"{"_id": "empty", "headline": {"main": []}, "byline": {"original": []}}"#,
            #"{"_id": "nested", "headline": {"main": [["Nested"]]}}"#,
            #"{"_id": "plain", "headline": {"main": "Plain"}, "byline": {"original": "By A"}}"#,
            #"{"_id": "none"}"#,
        ])
        let cases: [Filter] = [
            .field("headline.main", [.exists(true)]),
            .field("headline.main", [.exists(false)]),
            .field("headline.main", [.eq(.null)]),
            .field("headline.main", [.ne(.null)]),
            .field("byline.original", [.gte(.null)]),
            .field("headline.main", [.eq(.string("Nested"))]),
            .field("headline.main", [.in([.string("Nested"), .string("Plain")])]),
        ]
        for filter in cases {
            let expected = small.scan(filter)
            #expect(try small.store.find(Query(filter: filter)).ids == expected, "find(\(filter)) differs from the scan \(expected)")
        }
        // An empty array sorts before missing values (ValueOrder.sortCompare), in both directions.
        let ascending = try small.store.find(Query(sort: [SortKey("headline.main")])).ids
        #expect(ascending.first == "empty", "ascending by headline.main: \(ascending)")
        let descending = try small.store.find(Query(sort: [SortKey("headline.main", descending: true)])).ids
        #expect(descending.last == "empty", "descending by headline.main: \(descending)")
    }

    @Test("a small window sorted descending on a dotted path agrees with the whole sort when a value is a nested array")
    func sortWindowAgreesWithTheWholeSort() throws {
        var texts: [String] = [#"{"_id": "m-nested", "keywords": [{"value": "Alpha"}, {"value": ["Beta", "Gamma"]}]}"#]
        for n in 0..<20 { texts.append(#"{"_id": "k\#(n)", "keywords": [{"value": "Keyword \#(n % 7)"}]}"#) }
        let small = try SmallStore(texts)
        for descending in [true, false] {
            let sort = [SortKey("keywords.value", descending: descending)]
            let whole = try small.store.find(Query(sort: sort)).ids
            let window = try small.store.find(Query(sort: sort, limit: 3)).ids
            #expect(
                window == Array(whole.prefix(3)),
                "sorted \(descending ? "descending" : "ascending"): limit 3 gives \(window), the whole sort starts \(whole.prefix(3))")
            let values = small.documents.map { sortValue($0, "keywords.value") }
            let ids = small.documents.map { $0["_id"]!.stringValue! }
            let expected = referenceOrder(
                Array(ids.indices), ids: ids, values: ["keywords.value": values], query: Query(sort: sort, limit: 3))
            #expect(window == expected, "sorted \(descending ? "descending" : "ascending") with limit 3")
        }
    }

    @Test("a range condition orders strings byte by byte, as equality and sorting do, with and without a sorted index")
    func rangeOrdersStringsByBytesWithAndWithoutAnIndex() throws {
        // "e" + U+0301 and "é" are canonically equivalent, "Å" (U+212B) and "Å" (U+00C5) too: Swift's `<`
        // calls each pair equal, byte order does not, and neither may `=` (which compares bytes).
        let small = try SmallStore([
            "{\"_id\": \"nfd\", \"section_name\": \"e\\u0301\"}",
            "{\"_id\": \"nfc\", \"section_name\": \"\\u00e9\"}",
            "{\"_id\": \"angstrom\", \"section_name\": \"\\u212b\"}",
            "{\"_id\": \"ring\", \"section_name\": \"\\u00c5\"}",
            #"{"_id": "plain", "section_name": "f"}"#,
        ])
        let cases: [(Filter, [String])] = [
            (.field("section_name", [.lt(.string("\u{e9}"))]), ["nfd", "plain", "ring"]),
            (.field("section_name", [.gte(.string("\u{e9}"))]), ["angstrom", "nfc"]),
            (.field("section_name", [.gt(.string("e\u{301}"))]), ["angstrom", "nfc", "plain", "ring"]),
            (.field("section_name", [.lte(.string("\u{c5}"))]), ["nfd", "plain", "ring"]),
            (.field("section_name", [.gt(.string("\u{c5}")), .lt(.string("\u{212b}"))]), ["nfc"]),
        ]
        // Each query twice: first on freshly opened stores (the first use of a path scans), then on
        // one store whose later uses go through a sorted index.
        for round in ["first", "second"] {
            for (filter, expected) in cases {
                let fresh = round == "first"
                #expect(small.scan(filter) == expected, "scan of \(filter)")
                let finder = fresh ? try openStore(in: small.folder) : small.store
                #expect(try finder.find(Query(filter: filter)).ids == expected, "\(round) find(\(filter))")
                let counter = fresh ? try openStore(in: small.folder) : small.store
                #expect(try counter.count(matching: filter).count == expected.count, "\(round) count(matching: \(filter))")
            }
        }
        // Sorting puts them in the same order.
        let sorted = try small.store.find(Query(sort: [SortKey("section_name")])).ids
        #expect(sorted == ["nfd", "plain", "ring", "nfc", "angstrom"])
    }

    @Test("a query or facet on paths outside the projection reads each document file once")
    func scansReadEachDocumentOnce() throws {
        let fileSystem = FaultInjectingFileSystem()
        let store = try DocumentStore(folder: "/data", schema: .testArticles, fileSystem: fileSystem)
        let ids = (0..<12).map { String(format: "doc%02d", $0) }
        for (i, id) in ids.enumerated() {
            try store.put(try JSONParser.parse(Array(#"{"print_page": "\#(i % 3)", "source": "S\#(i % 2)"}"#.utf8)), id: id)
        }
        func documentReads() -> [String: Int] {
            fileSystem.readCounts.filter { $0.key.hasPrefix("/data/" + FileNames.documents + "/") }
        }
        let unprojected = Filter.field("print_page", [.ne(.string("0"))])
        for run in ["find", "facet by a filter outside the projection", "facet by a filter inside it"] {
            let before = documentReads()
            switch run {
            case "find":
                #expect(try store.find(Query(filter: unprojected)).ids.count == 8)
            case "facet by a filter outside the projection":
                let facet = try store.facet("source", matching: unprojected)
                #expect(facet.values.map(\.count) == [4, 4] && facet.scannedPaths == ["print_page", "source"])
            default:
                let facet = try store.facet("source", matching: .field("_id", [.gte(.string("doc06"))]))
                #expect(facet.values.map(\.count) == [3, 3] && facet.scannedPaths == ["source"])
            }
            let reads = documentReads().map { path, count in count - (before[path] ?? 0) }.filter { $0 != 0 }
            let expected = run == "facet by a filter inside it" ? 6 : ids.count
            #expect(reads.count == expected && reads.allSatisfy { $0 == 1 }, "\(run): reads per document \(reads.sorted())")
        }
    }

    @Test("facet keeps strings apart that = tells apart (precomposed and decomposed accents)")
    func facetSeparatesWhatEqualitySeparates() throws {
        let small = try SmallStore([
            #"{"_id": "nfc", "section_name": "Zürich"}"#,
            "{\"_id\": \"nfd\", \"section_name\": \"Zu\\u0308rich\"}",
            #"{"_id": "other", "section_name": "Zürich"}"#,
        ])
        let precomposed = JSONValue.string("Zürich"), decomposed = JSONValue.string("Zu\u{308}rich")
        #expect(try small.store.count(matching: .field("section_name", [.eq(precomposed)])).count == 2)
        #expect(try small.store.count(matching: .field("section_name", [.eq(decomposed)])).count == 1)
        let facet = try small.store.facet("section_name").values
        let shown = facet.map { entry in "\(entry.value.stringValue.map { Array($0.unicodeScalars).count } ?? 0) scalars=\(entry.count)" }
        #expect(facet.count == 2, "facet(section_name) gave \(shown)")
        #expect(facet.first?.value == precomposed && facet.first?.count == 2, "facet(section_name) gave \(shown)")
        #expect(facet.last?.value == decomposed && facet.last?.count == 1, "facet(section_name) gave \(shown)")
    }
}

extension QueryDifferentialTests {
    @Test("a text search finds the same documents whether it is the first of a freshly opened store or a later one")
    func firstTextSearchAgreesWithLaterOnes() throws {
        let small = try SmallStore([
            #"{"_id": "ascii", "headline": {"main": "Trump's Rally Draws Crowds"}, "abstract": "It's rock'n'roll, O'Brien said."}"#,
            #"{"_id": "curly", "headline": {"main": "Trump’s Rally Draws Crowds"}}"#,
            #"{"_id": "plain", "headline": {"main": "Trumps and Rallies"}, "abstract": "Its rocknroll."}"#,
        ])
        for search in ["trumps", "Trump's", "trump’s", "rocknroll", "rock'n'roll", "its", "obrien", "O'Brien said", "rally"] {
            let filter = Filter.text(search)
            let expected = small.scan(filter)
            let fresh = try openStore(in: small.folder)
            let first = try fresh.find(Query(filter: filter)).ids
            let second = try fresh.find(Query(filter: filter)).ids
            #expect(byBytes(first) == expected, "the first search for '\(search)' found \(first), the scan \(expected)")
            #expect(byBytes(second) == expected, "a second search for '\(search)' found \(second), the scan \(expected)")
        }
    }
}
