import ArchivistBase

// The search side of the fake server: what each document is indexed as, the parameters the API
// accepts (q, fq, begin_date, end_date, sort, page), and the response bodies.

extension FakeNYTServer {
    /// The fields `fq` accepts.
    static let filterFields: Set<String> = ["section_name", "news_desk", "type_of_material", "document_type", "source"]
    /// Documents per page, as the real API.
    static let pageSize = 10
    /// The last page the real API serves.
    static let maximumPage = 100

    /// One document of the corpus, with what the search looks at worked out once.
    struct Entry: Sendable {
        /// The document's compact JSON, as served.
        var bytes: [UInt8]
        /// `_id` (empty when missing), the last sort key.
        var id: String
        /// `pub_date` in milliseconds since 1970, when it parses.
        var instant: Int64?
        /// The UTC day of `pub_date` (days since 1970), when it parses.
        var day: Int64?
        /// headline.main, abstract, snippet and lead_paragraph, lowercased, one per line, as UTF-8.
        var text: [UInt8]
        /// The string values of the `fq` fields the document has.
        var facets: [String: String]

        init(_ document: JSONValue) {
            bytes = JSONWriter.compactBytes(document)
            id = document["_id"]?.stringValue ?? ""
            instant = document["pub_date"]?.stringValue.flatMap { ISODate.instant(of: $0) }
            day = instant.map { $0 >= 0 ? $0 / 86_400_000 : ($0 - 86_399_999) / 86_400_000 }
            let parts = [document["headline"]?["main"], document["abstract"], document["snippet"], document["lead_paragraph"]]
            text = Array(parts.compactMap { $0?.stringValue }.joined(separator: "\n").lowercased().utf8)
            var facets: [String: String] = [:]
            for field in FakeNYTServer.filterFields {
                if let value = document[field]?.stringValue { facets[field] = value }
            }
            self.facets = facets
        }
    }

    /// One `fq` clause: the field's value must be one of `values`.
    struct FilterClause: Sendable, Equatable {
        var field: String
        var values: Set<String>
    }

    /// The order results come in.
    enum SortOrder: Sendable {
        case newest, oldest, relevance
    }

    /// Parses the supported `fq` subset: `field:("A" "B")`, `field:"A"` or `field:A`, clauses joined
    /// by ` AND `. Nil when the text uses anything else (or a field `fq` does not support here).
    static func parseFilter(_ text: String) -> [FilterClause]? {
        var scanner = FilterScanner(text)
        var clauses: [FilterClause] = []
        scanner.skipSpaces()
        guard !scanner.atEnd else { return [] }
        while true {
            guard let next = scanner.clause() else { return nil }
            clauses.append(next)
            let beforeSpaces = scanner.i
            scanner.skipSpaces()
            if scanner.atEnd { return clauses }
            guard scanner.i > beforeSpaces, scanner.skipAnd() else { return nil }
            scanner.skipSpaces()
        }
    }

    /// A cursor over the characters of an `fq` text, with a scanner for each part of a clause.
    private struct FilterScanner {
        let characters: [Character]
        /// The next character to read.
        var i = 0

        /// A scanner at the start of `text`.
        init(_ text: String) {
            characters = Array(text)
        }

        /// Whether every character has been read.
        var atEnd: Bool { i == characters.count }

        /// Skips spaces and tabs.
        mutating func skipSpaces() {
            while i < characters.count, characters[i] == " " || characters[i] == "\t" { i += 1 }
        }

        /// Skips `AND` when a space or tab follows it (not at the end); false, reading nothing, otherwise.
        mutating func skipAnd() -> Bool {
            guard i + 3 < characters.count, String(characters[i..<(i + 3)]) == "AND",
                characters[i + 3] == " " || characters[i + 3] == "\t"
            else { return false }
            i += 3
            return true
        }

        /// A `"..."` value (no escapes); nil when none starts here or it is not closed.
        mutating func quoted() -> String? {
            guard i < characters.count, characters[i] == "\"" else { return nil }
            i += 1
            var value = ""
            while i < characters.count, characters[i] != "\"" {
                value.append(characters[i])
                i += 1
            }
            guard i < characters.count else { return nil }
            i += 1
            return value
        }

        /// One `field:value`, `field:"value"` or `field:("A" "B")` clause on a field `fq` supports.
        mutating func clause() -> FilterClause? {
            var field = ""
            while i < characters.count, characters[i].isLetter || characters[i] == "_" {
                field.append(characters[i])
                i += 1
            }
            guard FakeNYTServer.filterFields.contains(field), i < characters.count, characters[i] == ":" else { return nil }
            i += 1
            guard i < characters.count else { return nil }
            if characters[i] == "(" { return valueList(of: field) }
            if characters[i] == "\"" {
                guard let value = quoted() else { return nil }
                return FilterClause(field: field, values: [value])
            }
            var value = ""
            while i < characters.count, !" \t()\"".contains(characters[i]) {
                value.append(characters[i])
                i += 1
            }
            return value.isEmpty ? nil : FilterClause(field: field, values: [value])
        }

        /// The `("A" "B")` form of a clause on `field`, from its `(`: at least one quoted value, then `)`.
        mutating func valueList(of field: String) -> FilterClause? {
            i += 1
            var values: Set<String> = []
            skipSpaces()
            while i < characters.count, characters[i] != ")" {
                guard let value = quoted() else { return nil }
                values.insert(value)
                skipSpaces()
            }
            guard i < characters.count, !values.isEmpty else { return nil }
            i += 1
            return FilterClause(field: field, values: values)
        }
    }

    /// The day (days since 1970) of a `YYYYMMDD` parameter; nil when it is not a real date in that form.
    static func parseDay(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 8, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        func number(_ range: Range<Int>) -> Int64 { bytes[range].reduce(0) { $0 * 10 + Int64($1 - 48) } }
        let year = number(0..<4), month = number(4..<6), day = number(6..<8)
        guard ISODate.isValid(year: year, month: month, day: day) else { return nil }
        return ISODate.daysFromCivil(year: year, month: month, day: day)
    }

    /// Whether `word` occurs in `text` (both UTF-8 bytes; an empty word always does).
    static func contains(_ text: [UInt8], _ word: [UInt8]) -> Bool {
        guard let first = word.first else { return true }
        guard text.count >= word.count else { return false }
        return text.withUnsafeBufferPointer { haystack in
            word.withUnsafeBufferPointer { needle in
                var i = 0
                let last = haystack.count - needle.count
                while i <= last {
                    if haystack[i] == first {
                        var j = 1
                        while j < needle.count, haystack[i + j] == needle[j] { j += 1 }
                        if j == needle.count { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    /// Whether entry `a` comes before entry `b` in `order` (ties and undated documents by `_id`).
    static func precedes(_ a: Entry, _ b: Entry, in order: SortOrder) -> Bool {
        switch order {
        case .relevance:
            break
        case .newest, .oldest:
            switch (a.instant, b.instant) {
            case let (x?, y?) where x != y: return order == .newest ? x > y : x < y
            case (.some, .none): return true  // undated documents last
            case (.none, .some): return false
            default: break
            }
        }
        return a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
    }
}

extension FakeNYTServer {
    /// A search parameter the API refuses, with the message of its 400 body.
    struct InvalidParameter: Error {
        var message: String
    }

    /// The search parameters of a request (`page`, `begin_date`, `end_date`, `sort`, `fq`, `q`), checked.
    struct SearchParameters: Sendable {
        /// The page asked for, from 0.
        var page = 0
        /// The first day (days since 1970) a document may be of, when given.
        var firstDay: Int64?
        /// The last day (days since 1970) a document may be of, when given.
        var lastDay: Int64?
        /// The order of the results.
        var order: SortOrder
        /// The `fq` clauses, all of which a document must pass.
        var clauses: [FilterClause] = []
        /// The words of `q`, lowercased, as UTF-8.
        var words: [[UInt8]]

        /// The parameters of `query`, checked in the order the API checks them; throws for the
        /// first one it refuses.
        init(_ query: [String: String]) throws(InvalidParameter) {
            if let text = query["page"] {
                guard text.utf8.count <= 4, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(text),
                    value <= FakeNYTServer.maximumPage
                else {
                    throw InvalidParameter(message: "Invalid page: \(text). page must be an integer from 0 to \(FakeNYTServer.maximumPage)")
                }
                page = value
            }
            for (name, bound) in [("begin_date", 0), ("end_date", 1)] {
                guard let text = query[name] else { continue }
                guard let day = FakeNYTServer.parseDay(text) else {
                    throw InvalidParameter(message: "Invalid \(name): \(text). Use the format YYYYMMDD")
                }
                if bound == 0 { firstDay = day } else { lastDay = day }
            }
            switch query["sort"] ?? "" {
            case "newest": order = .newest
            case "oldest": order = .oldest
            case "relevance", "": order = .relevance
            case let other:
                throw InvalidParameter(message: "Invalid sort: \(other). Use newest, oldest or relevance")
            }
            if let fq = query["fq"] {
                guard let parsed = FakeNYTServer.parseFilter(fq) else {
                    throw InvalidParameter(message: "Invalid fq: \(fq)")
                }
                clauses = parsed
            }
            words = (query["q"] ?? "").lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Array($0.utf8) }
        }

        /// Whether `entry` is in the dates, passes every `fq` clause and holds every word of `q`.
        func admits(_ entry: Entry) -> Bool {
            if let firstDay, (entry.day ?? Int64.min) < firstDay { return false }
            if let lastDay, (entry.day ?? Int64.max) > lastDay { return false }
            for clause in clauses {
                guard let value = entry.facets[clause.field], clause.values.contains(value) else { return false }
            }
            for word in words where !FakeNYTServer.contains(entry.text, word) { return false }
            return true
        }
    }

    /// The JSON array of the page of `matches` that starts at `offset` (at most `pageSize`
    /// documents, none past the end), from the entries' served bytes.
    static func docsArray(_ matches: [Entry], offset: Int) -> [UInt8] {
        let pageEntries = offset < matches.count ? matches[offset..<min(matches.count, offset + pageSize)] : []
        var docs: [UInt8] = [UInt8(ascii: "[")]
        for (position, entry) in pageEntries.enumerated() {
            if position > 0 { docs.append(UInt8(ascii: ",")) }
            docs.append(contentsOf: entry.bytes)
        }
        docs.append(UInt8(ascii: "]"))
        return docs
    }
}

extension FakeNYTServer.Core {
    /// The answer to a search request that got no fault (or a fault that still answers).
    func answer(_ query: [String: String]) -> FakeNYTServer.Response {
        let started = ContinuousClock.now
        if let refusal = keyRefusal(query) { return refusal }
        let search: FakeNYTServer.SearchParameters
        do throws(FakeNYTServer.InvalidParameter) {
            search = try FakeNYTServer.SearchParameters(query)
        } catch {
            return .json(400, FakeNYTServer.errorsBody(error.message))
        }

        let entries = state.withLock { $0.entries }
        var matches = entries.filter { search.admits($0) }
        matches.sort { FakeNYTServer.precedes($0, $1, in: search.order) }

        let offset = search.page * FakeNYTServer.pageSize
        let docs = FakeNYTServer.docsArray(matches, offset: offset)
        let elapsed = ContinuousClock.now - started
        let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        return .json(200, body(docs: docs, hits: matches.count, offset: offset, time: milliseconds))
    }

    /// The gateway's 401 for a request without `api-key` or with another key than the server's, or nil.
    func keyRefusal(_ query: [String: String]) -> FakeNYTServer.Response? {
        guard let key = query["api-key"] else {
            return .json(
                401,
                FakeNYTServer.faultBody(
                    "Failed to resolve API Key variable request.queryparam.api-key",
                    code: "steps.oauth.v2.FailedToResolveAPIKey"))
        }
        guard key == apiKey else {
            return .json(401, FakeNYTServer.faultBody("Invalid ApiKey", code: "oauth.v2.InvalidApiKey"))
        }
        return nil
    }

    /// `{"status":"OK","copyright":...,"response":{"docs":<docs>,"meta":{"hits":..,"offset":..,"time":..}}}`,
    /// with `metadata` in place of `meta` for the 2025 envelope.
    func body(docs: [UInt8], hits: Int, offset: Int, time: Int) -> [UInt8] {
        var out = Array("{\"status\":\"OK\",\"copyright\":".utf8)
        out.append(contentsOf: JSONWriter.compactBytes(.string(FakeNYTServer.copyright)))
        out.append(contentsOf: ",\"response\":{\"docs\":".utf8)
        out.append(contentsOf: docs)
        let name = envelope == .meta ? "meta" : "metadata"
        out.append(contentsOf: ",\"\(name)\":{\"hits\":\(hits),\"offset\":\(offset),\"time\":\(time)}}}".utf8)
        return out
    }
}
