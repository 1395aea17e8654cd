import ArchivistBase

// The print-archive shape: what the API serves for articles published before 1981, scanned from
// the paper rather than written for the web. Modelled on a real month, the Archive API's answer for
// February 1963 (nyt-samples/14_archive_1963_02_strike_era_3012docs_reserialized.json).

extension ArticleGenerator {
    /// The first instant (seconds since 1970, UTC) of 1981-01-01: `corpus(count:seed:from:to:)`
    /// gives a document dated before it the print-archive shape.
    public static let archiveEraEnd: Int64 = ISODate.daysFromCivil(year: 1981, month: 1, day: 1) * 86_400

    /// The print-archive form of `document` (one of the generator's), published on the UTC day of
    /// `second`, with every choice of its own drawn from `random` (not from the generator's stream,
    /// so the documents after it are the same whatever era it falls in).
    ///
    /// It keeps the document's headline, text, authors and keywords and takes the shape of the real
    /// archive: `_id` equal to `uri` (`nyt://article/<uuid>`, the document's own `uri` when it has
    /// one, else a UUID made from its 24-hex `_id`, so IDs stay distinct within a seed), `pub_date`
    /// `YYYY-MM-DDT05:00:00+0000`, `web_url` under `/archives/`, `multimedia: []`, `news_desk` the
    /// string `"None"`, `section_name` and `type_of_material` `"Archives"`, `word_count` 0 and
    /// `lead_paragraph` `""`, no `subsection_name`, `print_section` mostly absent, a headline of 7
    /// keys (`kicker` `"1"`, `"2"` or null; `content_kicker`, `name`, `seo` and `sub` null), a byline
    /// `{original, person, organization}` (often no person, or one with empty names under "Special
    /// to The New York Times"), keywords `{name, value, rank, major: "N"}` with lowercase names, or
    /// none. About one in 200 is a review: `type_of_material` `"Review"`, `news_desk` `""`, the full
    /// text as `abstract` and `lead_paragraph`, its `word_count`, no `print_page`.
    static func archiveDocument(from document: JSONValue, at second: Int64, random: inout SplitMix64) -> JSONValue {
        let days = second >= 0 ? second / 86_400 : (second - 86_399) / 86_400
        let (year, month, day) = ISODate.civilFromDays(days)
        let date = "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
        let headline = document["headline"]?["main"]?.stringValue ?? "Untitled"
        let isReview = random.below(1000) < 5
        var members: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue) { members.append(JSONMember(key: key, value: value)) }

        let uri = archiveURI(of: document, random: &random)
        add("_id", .string(uri))
        add("uri", .string(uri))
        add("pub_date", .string(date + "T05:00:00+0000"))
        add("web_url", .string("https://www.nytimes.com/\(date.replacingDashes)/archives/\(archiveSlug(headline)).html"))
        add("document_type", .string("article"))
        add("source", .string("The New York Times"))
        add("section_name", .string("Archives"))
        add("multimedia", .array([]))
        let kickerRoll = random.below(100)
        add(
            "headline",
            .object(sorting: [
                JSONMember(key: "main", value: .string(headline)),
                JSONMember(key: "kicker", value: kickerRoll < 37 ? .string("1") : kickerRoll < 39 ? .string("2") : .null),
                JSONMember(key: "content_kicker", value: .null),
                JSONMember(key: "print_headline", value: .string(headline)),
                JSONMember(key: "name", value: .null),
                JSONMember(key: "seo", value: .null),
                JSONMember(key: "sub", value: .null),
            ]))
        add("byline", archiveByline(document, named: isReview, random: &random))
        if random.below(100) < 31 {
            add("print_section", .string(ArchiveVocabulary.printSections[Int(random.below(UInt64(ArchiveVocabulary.printSections.count)))]))
        }
        let texts = ["abstract", "snippet", "lead_paragraph"].compactMap { document[$0]?.stringValue }.filter { !$0.isEmpty }
        if isReview {
            var seen: [String] = []
            for text in texts where !seen.contains(text) { seen.append(text) }
            let fullText = seen.joined(separator: " ")
            add("abstract", .string(fullText))
            add("lead_paragraph", .string(fullText))
            add("snippet", .string(""))
            add("news_desk", .string(""))
            add("type_of_material", .string("Review"))
            add("word_count", .number(String(fullText.split(separator: " ").count)))
            let topic = ArchiveVocabulary.reviewTopics[Int(random.below(UInt64(ArchiveVocabulary.reviewTopics.count)))]
            add(
                "keywords",
                .array([
                    .object(sorting: [
                        JSONMember(key: "name", value: .string("subject")),
                        JSONMember(key: "value", value: .string(topic)),
                        JSONMember(key: "rank", value: .number("1")),
                        JSONMember(key: "major", value: .string("N")),
                    ])
                ]))
            return .object(sorting: members)
        }
        let abstract = random.below(100) < 25 ? "" : texts.first ?? ""
        add("abstract", .string(abstract))
        add("snippet", .string(abstract.isEmpty || random.below(100) < 21 ? "" : abstract))
        add("lead_paragraph", .string(""))
        if random.below(1000) >= 4 { add("print_page", .string(String(1 + random.below(80)))) }
        add("news_desk", .string("None"))
        add("type_of_material", .string("Archives"))
        add("word_count", .number("0"))
        add("keywords", archiveKeywords(document, random: &random))
        return .object(sorting: members)
    }

    /// `nyt://article/<uuid>`: the document's `uri` when it has one, else a version-5-looking UUID
    /// that keeps the 16 hex digits of its 24-hex `_id` that are unique within the seed (where the
    /// generator's own UUIDs keep their unique bits) and its 8 date digits.
    private static func archiveURI(of document: JSONValue, random: inout SplitMix64) -> String {
        let prefix = "nyt://article/"
        if let uri = document["uri"]?.stringValue, uri.hasPrefix(prefix) { return uri }
        var hex = Array((document["_id"]?.stringValue ?? "").utf8)
        if hex.count != 24 || !hex.allSatisfy({ Hex.digit($0) != nil }) {
            hex = Array((hexDigits(random.next(), 16) + hexDigits(random.next(), 8)).utf8)
        }
        let extra = Array(hexDigits(random.next(), 6).utf8)
        func part(_ range: Range<Int>) -> String { String(decoding: hex[range], as: UTF8.self) }
        let variant = hexDigits(8 | (random.next() & 3), 1)
        return prefix + part(8..<16) + "-" + part(16..<20) + "-5" + part(0..<3) + "-" + variant + part(3..<6) + "-"
            + part(20..<24) + part(6..<8) + String(decoding: extra, as: UTF8.self)
    }

    /// The archive `byline`: `original`, `person` (8 keys each, `qualifier` and `title` null) and
    /// `organization` (null, or the agency of a wire photo). A review (`named`) always credits its
    /// authors.
    private static func archiveByline(_ document: JSONValue, named: Bool, random: inout SplitMix64) -> JSONValue {
        let wire = ["AP", "Reuters"].contains(document["source"]?.stringValue ?? "")
        let people = wire ? [] : archivePeople(document["byline"]?["original"]?.stringValue ?? "")
        let roll = named ? 99 : random.below(100)
        var original = ""
        var persons: [JSONValue] = []
        var organization: JSONValue = .null
        if wire {
            original = "By the Associated Press"
        } else if roll < 37 {
            original = ""
        } else if roll < 38 {
            original = random.below(2) == 0 ? "Associated Press Wirephoto" : "Associated Press Cablephoto"
            organization = .string("Associated Press")
        } else if roll < 65 || people.isEmpty {
            original = "Special to The New York Times"
            persons = [archivePerson(first: "", middle: nil, last: "", rank: 1)]
        } else {
            let names = people.map { person in
                ([person.first] + (person.middle.map { [$0] } ?? []) + [person.last]).joined(separator: " ")
            }
            original = "By " + names.joined(separator: " and ") + (random.below(2) == 0 ? " Special To the New York Times" : "")
            for (rank, person) in people.enumerated() {
                persons.append(archivePerson(first: person.first, middle: person.middle, last: person.last, rank: rank + 1))
            }
        }
        return .object(sorting: [
            JSONMember(key: "original", value: .string(original)),
            JSONMember(key: "person", value: .array(persons)),
            JSONMember(key: "organization", value: organization),
        ])
    }

    /// One archive byline person.
    private static func archivePerson(first: String, middle: String?, last: String, rank: Int) -> JSONValue {
        .object(sorting: [
            JSONMember(key: "firstname", value: .string(first)),
            JSONMember(key: "middlename", value: middle.map { .string($0) } ?? .null),
            JSONMember(key: "lastname", value: .string(last)),
            JSONMember(key: "qualifier", value: .null),
            JSONMember(key: "title", value: .null),
            JSONMember(key: "role", value: .string("reported")),
            JSONMember(key: "organization", value: .string("")),
            JSONMember(key: "rank", value: .number(String(rank))),
        ])
    }

    /// The authors of a generated byline (`By BEN M. STEINBAUER and ANA SILVA`), names capitalized
    /// as the archive prints them (`Ben M. Steinbauer`); none for another form of byline.
    private static func archivePeople(_ original: String) -> [(first: String, middle: String?, last: String)] {
        guard original.hasPrefix("By ") else { return [] }
        var people: [(first: String, middle: String?, last: String)] = []
        for name in original.dropFirst(3).components(separatedBy: " and ") {
            let words = name.split(separator: " ").map { word in word.prefix(1).uppercased() + word.dropFirst().lowercased() }
            guard let first = words.first, let last = words.last, words.count >= 2 else { continue }
            people.append((first, words.count > 2 ? words[1..<(words.count - 1)].joined(separator: " ") : nil, last))
        }
        return people
    }

    /// The archive `keywords`: none for about 4 in 10 documents, else the first one to five of the
    /// document's, with lowercase names (`subject`, `persons`, `glocations`, `organizations`,
    /// `creative_works`), an integer `rank`, `major` `"N"`, and subjects often in capitals.
    private static func archiveKeywords(_ document: JSONValue, random: inout SplitMix64) -> JSONValue {
        guard random.below(100) >= 38, case .array(let given)? = document["keywords"], !given.isEmpty else { return .array([]) }
        let count = 1 + Int(random.below(UInt64(min(given.count, 5))))
        var keywords: [JSONValue] = []
        for keyword in given.prefix(count) {
            guard let name = keyword["name"]?.stringValue, let value = keyword["value"]?.stringValue else { continue }
            let archiveName = ArchiveVocabulary.keywordNames[name] ?? name.lowercased()
            let shown = archiveName == "subject" && random.below(2) == 0 ? value.uppercased() : value
            keywords.append(
                .object(sorting: [
                    JSONMember(key: "name", value: .string(archiveName)),
                    JSONMember(key: "value", value: .string(shown)),
                    JSONMember(key: "rank", value: .number(String(keywords.count + 1))),
                    JSONMember(key: "major", value: .string("N")),
                ]))
        }
        return .array(keywords)
    }

    /// The `web_url` slug of a headline, at most about 80 bytes.
    private static func archiveSlug(_ headline: String) -> String {
        ArticleGenerator.slug(of: headline, limit: 80)
    }

    /// `value` in decimal, zero-padded to `width` digits.
    private static func padded(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// The low `digits` hex digits of `value`, lowercase.
    private static func hexDigits(_ value: UInt64, _ digits: Int) -> String {
        ArticleGenerator.hexString(value, digits: digits)
    }

    /// The fixed vocabulary of the archive shape.
    private enum ArchiveVocabulary {
        /// `print_section` values, the frequent ones repeated (as in February 1963).
        static let printSections = [
            "B", "B", "B", "Business & Finance", "Business & Finance", "Business & Finance", "S", "S", "Sports",
            "F", "Family/Style", "H", "Help Wanted", "The Week In Review",
        ]
        /// The subjects of reviews.
        static let reviewTopics = ["MOTION PICTURES", "THEATER", "BOOKS AND LITERATURE", "MUSIC", "DANCE", "ART"]
        /// The archive's keyword names for the generator's (the 2025 shape capitalizes them).
        static let keywordNames = [
            "Subject": "subject", "Person": "persons", "Location": "glocations", "Organization": "organizations",
            "Creative Work": "creative_works",
        ]
    }
}

extension String {
    /// `YYYY-MM-DD` as `YYYY/MM/DD`.
    fileprivate var replacingDashes: String {
        String(map { $0 == "-" ? "/" : $0 })
    }
}
