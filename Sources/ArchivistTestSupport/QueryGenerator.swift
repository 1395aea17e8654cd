import ArchivistBase
import Foundation

// The random queries of the query differential tests (ArchivistStoreTests) and of the tests of
// the PostgreSQL copy (ArchivistCLITests): filters, sorts and facet paths drawn from the values of
// stored documents, and documents with every awkward shape a field can take. Seeded, so a failure
// reproduces.

/// SplitMix64, so the generated queries are the same on every run and platform.
public struct Dice {
    var random: SplitMix64

    /// Dice seeded with `state`.
    public init(state: UInt64) { random = SplitMix64(state: state) }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 { random.next() }

    /// A number in 0..<bound.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    /// True `percent` times in 100.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    /// One of the items.
    public mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Documents with every awkward shape: missing fields, nulls, empty arrays, odd types, several
/// spellings of dates, accents composed and decomposed.
public enum QueryEdgeDocuments {
    /// Documents with missing fields, nulls, empty arrays, odd types and several date spellings.
    public static let edgeTexts: [String] = [
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

    /// The edge documents parsed.
    public static var edgeDocuments: [JSONValue] {
        edgeTexts.map { text in
            do {
                return try JSONParser.parse(text)
            } catch {
                fatalError("bad edge document: \(error): \(text)")
            }
        }
    }
}

/// Draws filters, sorts and facet paths from the values of the stored documents.
public struct QueryGenerator {
    /// The dice (tests draw their own choices with them too).
    public var dice: Dice
    /// The scalar values found at each path (elements of arrays included), deduplicated.
    public let pools: [String: [JSONValue]]
    /// Words of headlines, keywords and abstracts.
    public let words: [String]

    /// Projected paths, each with its weight in the draw.
    public static let projectedPaths = [
        "pub_date", "pub_date", "section_name", "section_name", "news_desk", "word_count", "word_count",
        "headline.main", "keywords.value", "keywords.value", "byline.original", "_id",
        "document_type", "type_of_material", "abstract",
    ]
    /// Paths outside the projection: the store answers by reading the documents.
    public static let unprojectedPaths = ["subsection_name", "source", "print_page", "headline.kicker", "keywords.name"]
    /// Paths sorted by.
    public static let sortPaths = [
        "pub_date", "word_count", "section_name", "news_desk", "headline.main", "keywords.value",
        "byline.original", "_id", "abstract",
    ]
    /// Values of every type and awkward spelling.
    public static let oddities: [JSONValue] = [
        .null, .bool(true), .bool(false), .string(""), .number("0"), .number("-0"), .number("0.0"), .number("879"),
        .string("879"), .string("Sports"), .string("sports"), .string("2015-07-01"), .string("2019-02-15T05:00:00Z"),
        .string("2016-02-29"), .string("not a date"), .string("Zürich"), .string("Zu\u{308}rich"), .number("1e3"),
        .number("12345678901234567890"), .string("Politics and Government"), .number("5"),
    ]

    /// A generator drawing from the values of `documents`.
    public init(seed: UInt64, documents: [JSONValue]) {
        dice = Dice(state: seed)
        var pools: [String: [JSONValue]] = [:]
        var wordSet: Set<String> = []
        for path in Self.projectedPaths + Self.unprojectedPaths {
            var seen: Set<String> = []
            var pool: [JSONValue] = []
            for document in documents {
                for value in QueryGenerator.candidates(document.values(atPath: path)) {
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
                    for text in QueryGenerator.strings(in: value) {
                        let pieces = text.split { (c: Character) -> Bool in c == " " || c == "," || c == "(" || c == ")" }
                        for word in pieces {
                            wordSet.insert(String(word))
                        }
                    }
                }
            }
        }
        self.pools = pools
        self.words = wordSet.sorted()
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

    /// The strings of a value: itself, or those of an array's elements, at any depth.
    static func strings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text): return [text]
        case .array(let elements): return elements.flatMap { strings(in: $0) }
        default: return []
        }
    }

    /// A draw.
    public mutating func filter(depth: Int = 0) -> Filter {
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

    /// A draw.
    public mutating func children(_ depth: Int) -> [Filter] {
        (0..<(1 + dice.below(3))).map { _ in filter(depth: depth + 1) }
    }

    /// A draw.
    public mutating func leaf(path: String) -> Filter {
        if dice.chance(12) {
            // Several conditions on one field, as a JSON filter document can hold.
            let low = value(for: path), high = value(for: path)
            return .field(path, [dice.chance(50) ? .gte(low) : .gt(low), dice.chance(50) ? .lt(high) : .lte(high)])
        }
        return .field(path, [condition(path: path)])
    }

    /// A draw.
    public mutating func condition(path: String) -> Condition {
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
    /// A draw.
    public mutating func value(for path: String) -> JSONValue {
        let pool = pools[path] ?? []
        let roll = dice.below(100)
        if roll < 50, !pool.isEmpty { return dice.pick(pool) }
        if roll < 88, !pool.isEmpty { return nearMiss(dice.pick(pool)) }
        return dice.pick(Self.oddities)
    }

    /// A draw.
    public mutating func nearMiss(_ value: JSONValue) -> JSONValue {
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

    /// A number as a literal.
    public func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    /// Another spelling of an instant, a nearby instant, or a date-only value around it.
    /// A draw.
    public mutating func dateVariant(_ milliseconds: Int64) -> JSONValue {
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
    /// A draw.
    public mutating func needle(path: String) -> String {
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
    /// A draw.
    public mutating func textSearch() -> String {
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

    /// A draw.
    public mutating func sort() -> [SortKey] {
        var keys: [SortKey] = []
        for _ in 0..<(1 + dice.below(2)) {
            var path = dice.pick(Self.sortPaths)
            while keys.contains(where: { $0.path == path }) { path = dice.pick(Self.sortPaths) }
            keys.append(SortKey(path, descending: dice.chance(50)))
        }
        return keys
    }
}
