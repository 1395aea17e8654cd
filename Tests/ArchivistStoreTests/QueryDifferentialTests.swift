import ArchivistClient
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

/// SplitMix64, so the generated queries are the same on every run and platform.
fileprivate struct Dice {
    var random: SplitMix64

    init(state: UInt64) { random = SplitMix64(state: state) }

    mutating func next() -> UInt64 { random.next() }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

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
    try DocumentStore(folder: folder.data, schema: .nyt, options: mode.options)
}

/// Stores the documents in one batch; each one the store refuses is an issue.
fileprivate func storeAll(_ documents: [JSONValue], in store: DocumentStore) throws {
    for result in try store.upsert(documents) {
        if case .failure(let error) = result.outcome { Issue.record("cannot store \(result.id ?? "?"): \(error)") }
    }
}

/// A store of generated NYT documents plus hand-made awkward ones, and the documents as stored.
final class QueryFixture {
    let folder = TemporaryFolder()
    let store: DocumentStore
    /// Every stored document, sorted by ID bytes.
    let documents: [JSONValue]
    let ids: [String]

    /// Documents with missing fields, nulls, empty arrays, odd types and several date spellings.
    static let edgeTexts: [String] = [
        #"{"_id": "0-edge-empty"}"#,
        #"""
        {"_id": "edge-nulls", "pub_date": null, "section_name": null, "news_desk": null, "word_count": null,
         "headline": {"main": null}, "byline": {"original": null}, "keywords": [{"value": null}],
         "abstract": null, "snippet": null, "lead_paragraph": null, "document_type": null}
        """#,
        #"""
        {"_id": "edge-empty-arrays", "section_name": [], "news_desk": "Sports", "keywords": [], "byline": [],
         "word_count": [], "headline": {"main": "Empty Arrays Everywhere"}, "pub_date": "2016-02-29"}
        """#,
        #"""
        {"_id": "edge-empty-leaf", "headline": {"main": []}, "byline": {"original": []}, "section_name": "Sports",
         "pub_date": "2016-02-29T23:59:59.999Z", "word_count": 12}
        """#,
        #"""
        {"_id": "edge-wc-string", "word_count": "879", "section_name": "Sports", "news_desk": "Sports",
         "pub_date": "2015-07-01T05:00:00+05:30", "headline": {"main": "Knicks Lose Again"},
         "keywords": [{"value": "Baseball"}], "byline": {"original": "By Ben Brooks"}}
        """#,
        #"""
        {"_id": "edge-wc-int", "word_count": 879, "section_name": "sports", "news_desk": "Sports",
         "pub_date": "2015-07-01", "headline": {"main": "Knicks Win, Finally"}, "byline": {"original": "By Ben Brooks"}}
        """#,
        #"""
        {"_id": "edge-wc-float", "word_count": 879.0, "section_name": "Sports ", "pub_date": "2015-07-01T12:00:00.250Z",
         "headline": {"main": "Yankees Weigh a New Tax"}}
        """#,
        #"""
        {"_id": "edge-wc-zero", "word_count": 0, "section_name": "World", "pub_date": "2015-07-02T00:00:00+0000",
         "headline": {"main": "Zero Words"}}
        """#,
        #"""
        {"_id": "edge-wc-negative", "word_count": -5, "pub_date": "2019-02-15T00:00:00-05:00", "headline": {"main": "Negative"}}
        """#,
        #"""
        {"_id": "edge-wc-big", "word_count": 12345678901234567890, "pub_date": "2019-02-15 05:00", "news_desk": "Foreign"}
        """#,
        #"""
        {"_id": "edge-wc-exponent", "word_count": 1e3, "pub_date": "2019-02-15T05:00Z", "news_desk": "Business"}
        """#,
        #"""
        {"_id": "edge-wc-bool", "word_count": true, "pub_date": "not a date", "section_name": true, "news_desk": false}
        """#,
        #"""
        {"_id": "edge-date-invalid", "pub_date": "2015-13-01", "word_count": "twelve", "section_name": "Arts"}
        """#,
        #"""
        {"_id": "edge-date-empty", "pub_date": "", "word_count": "", "section_name": "", "byline": {"original": ""}, "abstract": ""}
        """#,
        #"""
        {"_id": "edge-date-number", "pub_date": 20150701, "word_count": "0", "section_name": "U.S."}
        """#,
        #"""
        {"_id": "edge-date-array", "pub_date": ["2015-07-01", "2019-02-15T05:00:00Z"], "word_count": [100, 200],
         "section_name": "Science"}
        """#,
        #"""
        {"_id": "edge-date-offset", "pub_date": "2015-06-30T23:30:00.000-01:00", "word_count": 450, "section_name": "World",
         "news_desk": "Foreign"}
        """#,
        #"""
        {"_id": "edge-headline-array", "headline": {"main": ["Alpha Headline", "Beta Headline"]}, "pub_date": "2001-01-01T00:00:00Z"}
        """#,
        #"""
        {"_id": "edge-headline-list", "headline": [{"main": "Gamma Rays Return"}, {"main": "Delta Blues"}, {"kicker": "x"}],
         "byline": [{"original": "By A"}, {"original": "By B"}], "pub_date": "2001-01-01"}
        """#,
        #"""
        {"_id": "edge-keywords-mixed", "keywords": [{"value": "Politics and Government"}, {"value": null}, {"name": "subject"},
         {"value": ["Baseball", "Elections"]}, {"value": 5}, {"value": "Politics and Government"}, {"value": ""}],
         "pub_date": "2020-02-29T12:00:00Z", "word_count": 5}
        """#,
        #"""
        {"_id": "edge-section-array", "section_name": ["Sports", "World"], "news_desk": ["Sports"], "word_count": ["879", 879]}
        """#,
        #"""
        {"_id": "edge-section-object", "section_name": {"name": "Sports"}, "news_desk": {}, "word_count": {"n": 1}}
        """#,
        #"""
        {"_id": "edge-unicode-nfc", "section_name": "Zürich", "headline": {"main": "Café Société in Zürich"},
         "byline": {"original": "By José Núñez"}, "keywords": [{"value": "Zürich (Switzerland)"}]}
        """#,
        "{\"_id\": \"edge-unicode-nfd\", \"section_name\": \"Zu\\u0308rich\", \"headline\": {\"main\": \"Cafe\\u0301 Socie\\u0301te\\u0301\"}, \"byline\": {\"original\": \"By Jose\\u0301 Nu\\u0301n\\u0303ez\"}}",
        #"""
        {"_id": "Édge-non-ascii-id", "section_name": "Opinion", "news_desk": "OpEd", "word_count": 880,
         "pub_date": "2015-07-01T23:59:59.999+00:00", "headline": {"main": "Readers Debate the Budget"}}
        """#,
        #"""
        {"_id": "edge-ascii-apostrophes", "headline": {"main": "Trump's Rally Draws Crowds"}, "abstract": "It's rock'n'roll, O'Brien said.",
         "keywords": [{"value": "Trump, Donald J"}], "section_name": "U.S.", "pub_date": "2016-11-08T23:00:00-05:00"}
        """#,
        #"""
        {"_id": "nyt://article/edge-lowercase-keys", "Section_Name": "Sports", "section_name": "Travel",
         "pub_date": "2025-12-31T23:59:59Z", "word_count": 2439, "headline": {"main": "Night Trains Brace for the Storm"}}
        """#,
    ]

    static var edgeDocuments: [JSONValue] {
        edgeTexts.map { text in
            do {
                return try JSONParser.parse(text)
            } catch {
                fatalError("bad edge document: \(error): \(text)")
            }
        }
    }

    /// Where the store answers from.
    let mode: StorageMode

    init(seed: UInt64, count: Int, mode: StorageMode = .logOnly) throws {
        self.mode = mode
        let writer = try openStore(in: folder, mode: mode)
        var generator = ArticleGenerator(seed: seed)
        let generated = generator.documents(count)
        switch mode {
        case .logOnly:
            try storeAll(generated + Self.edgeDocuments, in: writer)
        case .oneSegment:
            try storeAll(generated + Self.edgeDocuments, in: writer)
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
            try storeAll(Self.edgeDocuments, in: writer)
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
        zip(ids, documents).filter { filter.matches($0.1, textSearch: StoreSchema.nyt.textSearch) }.map(\.0)
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

/// Draws filters, sorts and facet paths from the values of the stored documents.
fileprivate struct QueryGenerator {
    var dice: Dice
    /// The scalar values found at each path (elements of arrays included), deduplicated.
    let pools: [String: [JSONValue]]
    /// Words of headlines, keywords and abstracts.
    let words: [String]

    /// Projected paths, each with its weight in the draw.
    static let projectedPaths = [
        "pub_date", "pub_date", "section_name", "section_name", "news_desk", "word_count", "word_count",
        "headline.main", "keywords.value", "keywords.value", "byline.original", "_id",
        "document_type", "type_of_material", "abstract",
    ]
    /// Paths outside the projection: the store answers by reading the documents.
    static let unprojectedPaths = ["subsection_name", "source", "print_page", "headline.kicker", "keywords.name"]
    static let sortPaths = [
        "pub_date", "word_count", "section_name", "news_desk", "headline.main", "keywords.value",
        "byline.original", "_id", "abstract",
    ]
    static let oddities: [JSONValue] = [
        .null, .bool(true), .bool(false), .string(""), .number("0"), .number("-0"), .number("0.0"), .number("879"),
        .string("879"), .string("Sports"), .string("sports"), .string("2015-07-01"), .string("2019-02-15T05:00:00Z"),
        .string("2016-02-29"), .string("not a date"), .string("Zürich"), .string("Zu\u{308}rich"), .number("1e3"),
        .number("12345678901234567890"), .string("Politics and Government"), .number("5"),
    ]

    init(seed: UInt64, documents: [JSONValue]) {
        dice = Dice(state: seed)
        var pools: [String: [JSONValue]] = [:]
        var wordSet: Set<String> = []
        for path in Self.projectedPaths + Self.unprojectedPaths {
            var seen: Set<String> = []
            var pool: [JSONValue] = []
            for document in documents {
                for value in Condition.candidates(document.values(atPath: path)) {
                    switch value {
                    case .array, .object: continue
                    default: break
                    }
                    if seen.insert(JSONWriter.compactString(value)).inserted { pool.append(value) }
                }
            }
            pools[path] = pool
        }
        for document in documents {
            for path in ["headline.main", "keywords.value", "abstract"] {
                for value in document.values(atPath: path) {
                    for text in TextSearch.strings(in: value) {
                        for word in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "(" || $0 == ")" }) {
                            wordSet.insert(String(word))
                        }
                    }
                }
            }
        }
        self.pools = pools
        self.words = wordSet.sorted()
    }

    mutating func filter(depth: Int = 0) -> Filter {
        let roll = dice.below(100)
        if depth < 3 {
            switch roll {
            case 0..<12: return .and(children(depth))
            case 12..<22: return .or(children(depth))
            case 22..<26: return .nor(children(depth))
            case 26..<32: return .not(filter(depth: depth + 1))
            default: break
            }
        }
        switch dice.below(100) {
        case 0..<10: return .text(textSearch())
        case 10..<12: return .all
        case 12..<17: return leaf(path: dice.pick(Self.unprojectedPaths))
        default: return leaf(path: dice.pick(Self.projectedPaths))
        }
    }

    mutating func children(_ depth: Int) -> [Filter] {
        (0..<(1 + dice.below(3))).map { _ in filter(depth: depth + 1) }
    }

    mutating func leaf(path: String) -> Filter {
        if dice.chance(12) {
            // Several conditions on one field, as a JSON filter document can hold.
            let low = value(for: path), high = value(for: path)
            return .field(path, [dice.chance(50) ? .gte(low) : .gt(low), dice.chance(50) ? .lt(high) : .lte(high)])
        }
        return .field(path, [condition(path: path)])
    }

    mutating func condition(path: String) -> Condition {
        switch dice.below(100) {
        case 0..<22: return .eq(value(for: path))
        case 22..<30: return .ne(value(for: path))
        case 30..<38: return .gt(value(for: path))
        case 38..<46: return .gte(value(for: path))
        case 46..<54: return .lt(value(for: path))
        case 54..<62: return .lte(value(for: path))
        case 62..<72: return .in((0..<(1 + dice.below(4))).map { _ in value(for: path) })
        case 72..<78: return .nin((0..<(1 + dice.below(3))).map { _ in value(for: path) })
        case 78..<86: return .exists(dice.chance(50))
        case 86..<95: return .contains(needle(path: path))
        case 95..<97: return .regex(dice.pick(["^The", "s$", "(?i)sport", "^\\d+$", "e", ""]), options: dice.pick(["", "i"]))
        default: return .eq(.null)
        }
    }

    /// A value from the data (half the time), a near miss of one, or an oddity.
    mutating func value(for path: String) -> JSONValue {
        let pool = pools[path] ?? []
        let roll = dice.below(100)
        if roll < 50, !pool.isEmpty { return dice.pick(pool) }
        if roll < 88, !pool.isEmpty { return nearMiss(dice.pick(pool)) }
        return dice.pick(Self.oddities)
    }

    mutating func nearMiss(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let literal):
            let number = Double(literal) ?? 0
            switch dice.below(7) {
            case 0: return .number(format(number + 1))
            case 1: return .number(format(number - 1))
            case 2: return .string(literal)
            case 3: return .number(literal.contains(".") || literal.contains("e") ? literal : literal + ".0")
            case 4: return .number(number == 0 ? "-0" : "-" + literal)
            case 5: return .number(format(number + 0.5))
            default: return .number(literal + "e0")
            }
        case .string(let text):
            if let interval = ISODate.interval(of: text) { return dateVariant(interval.start) }
            if Int(text) != nil, dice.chance(50) { return .number(text) }
            switch dice.below(7) {
            case 0: return .string(text.lowercased())
            case 1: return .string(text.uppercased())
            case 2: return .string(String(text.dropLast()))
            case 3: return .string(text + " ")
            case 4: return .string(String(text.prefix(1 + dice.below(max(1, text.count)))))
            case 5: return .string(text + "z")
            default: return .string(text.decomposedStringWithCanonicalMapping)
            }
        case .bool(let flag):
            return dice.chance(50) ? .bool(!flag) : .string(flag ? "true" : "false")
        default:
            return .string("null")
        }
    }

    func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    /// Another spelling of an instant, a nearby instant, or a date-only value around it.
    mutating func dateVariant(_ milliseconds: Int64) -> JSONValue {
        let shifts: [Int64] = [0, 0, 0, 1, -1, 1000, -1000, 86_400_000, -86_400_000, 3_600_000]
        let t = milliseconds + dice.pick(shifts)
        let utc = Timestamp(milliseconds: t).description  // YYYY-MM-DDTHH:MM:SS.mmmZ
        let day = String(utc.prefix(10))
        let seconds = String(utc.prefix(19))
        switch dice.below(8) {
        case 0: return .string(day)
        case 1: return .string(utc)
        case 2: return .string(seconds + "Z")
        case 3: return .string(seconds + "+0000")
        case 4:
            // The same instant as seen five and a half hours east.
            let shifted = String(Timestamp(milliseconds: t + 19_800_000).description.prefix(23))
            return .string(shifted + "+05:30")
        case 5:
            let shifted = String(Timestamp(milliseconds: t - 18_000_000).description.prefix(19))
            return .string(shifted + "-05:00")
        case 6: return .string(String(utc.prefix(16)).replacingOccurrences(of: "T", with: " "))
        default: return .string(String(utc.prefix(16)))
        }
    }

    /// A piece of a value at the path, changed in case or accents now and then.
    mutating func needle(path: String) -> String {
        let strings = (pools[path] ?? []).compactMap(\.stringValue)
        guard !strings.isEmpty, dice.chance(90) else { return dice.pick(["", "zzqx", "the", "É", "sport"]) }
        let text = Array(dice.pick(strings))
        guard !text.isEmpty else { return "" }
        let start = dice.below(text.count)
        let piece = String(text[start..<min(text.count, start + 1 + dice.below(8))])
        switch dice.below(4) {
        case 0: return piece.uppercased()
        case 1: return piece.folding(options: [.diacriticInsensitive], locale: nil)
        default: return piece
        }
    }

    /// One to three words of the stored text, or a word no document holds.
    mutating func textSearch() -> String {
        if dice.chance(10) {
            return dice.pick([
                "zzyzx", "", "   ", "’s", "Café", "cafe societe", "ZÜRICH", "trumps", "Trump's", "rocknroll", "its", "obrien", "o'brien",
            ])
        }
        var terms: [String] = []
        for _ in 0..<(1 + dice.below(dice.chance(70) ? 1 : 3)) {
            var word = dice.pick(words)
            if dice.chance(20) { word = word.uppercased() }
            if dice.chance(10) { word = word.folding(options: [.diacriticInsensitive], locale: nil) }
            if dice.chance(8), word.count > 3 { word = String(word.dropLast()) }
            terms.append(word)
        }
        return terms.joined(separator: " ")
    }

    mutating func sort() -> [SortKey] {
        var keys: [SortKey] = []
        for _ in 0..<(1 + dice.below(2)) {
            var path = dice.pick(Self.sortPaths)
            while keys.contains(where: { $0.path == path }) { path = dice.pick(Self.sortPaths) }
            keys.append(SortKey(path, descending: dice.chance(50)))
        }
        return keys
    }
}

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
            let filter =
                generator.dice.chance(50)
                ? (generator.dice.chance(50) ? .all : .field("pub_date", [.exists(true)])) : generator.filter(depth: 1)
            let sort = generator.sort()
            let skip = generator.dice.chance(60) ? 0 : generator.dice.below(30)
            let limit: Int? = generator.dice.chance(20) ? nil : 1 + generator.dice.below(generator.dice.chance(50) ? 10 : 80)
            let query = Query(filter: filter, sort: sort, skip: skip, limit: limit)
            let matches = fixture.documents.indices.filter { filter.matches(fixture.documents[$0], textSearch: StoreSchema.nyt.textSearch) }
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
            let matching = zip(fixture.ids, fixture.documents).filter { filter.matches($0.1, textSearch: StoreSchema.nyt.textSearch) }.map(
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
    let folder = TemporaryFolder()
    let store: DocumentStore
    let documents: [JSONValue]

    init(_ texts: [String]) throws {
        store = try openStore(in: folder)
        documents = try texts.map { try JSONParser.parse($0) }
        try storeAll(documents, in: store)
    }

    func scan(_ filter: Filter) -> [String] {
        byBytes(documents.filter { filter.matches($0, textSearch: StoreSchema.nyt.textSearch) }.compactMap { $0["_id"]?.stringValue })
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
        let store = try DocumentStore(folder: "/data", schema: .nyt, fileSystem: fileSystem)
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
