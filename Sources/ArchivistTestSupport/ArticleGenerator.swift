import ArchivistBase

/// A deterministic source of NYT Article Search API documents for tests and benchmarks.
///
/// The same seed always yields the same documents, byte for byte, on every platform (the generator
/// uses its own SplitMix64 and integer arithmetic only). Each document is about 2 KB of compact JSON
/// and follows one of three shapes the real API has returned over the years:
///
/// - **2016**: `_id` of 24 hex digits, `word_count` as a string, keywords with string `rank` and
///   `is_major`, `blog: []`, `slideshow_credits: null`, multimedia as a list of legacy images with
///   string sizes; wire copy (AP, Reuters) has `news_desk: null`, no keywords and a byline
///   organization; a few bylines are `[]` instead of an object.
/// - **2018–2019**: `_id` of the form `nyt://article/<uuid>` (a quarter keep the older 24-hex `_id`,
///   as in the transition) with `uri`, integer `word_count`, `score`, keyword `major` null or `"N"`,
///   `blog: {}`, multimedia as a list of crops; some documents spell `subsectoinName`, some have no
///   `byline`, `print_page` or `abstract`, and `pub_date` ends in `+0000`.
/// - **2025**: multimedia as an object (`caption`, `credit`, `default`, `thumbnail`), headline with
///   `main`, `kicker` and `print_headline`, capitalized keyword names, `byline.original` only.
///
/// Publication dates spread over 2000 to 2025 whatever the shape. Some headlines hold accented
/// letters, curly quotes or CJK text. Within one seed every document has a distinct `_id`.
///
/// `corpus(count:seed:from:to:)` moves the dates into a chosen range, and gives a document dated
/// before 1981 a fourth shape, the print archive's (`section_name` `"Archives"`, `news_desk`
/// `"None"`, `multimedia: []`, `_id` equal to `uri`; see `archiveDocument(from:at:random:)`).
public struct ArticleGenerator: Sendable {
    /// The seed the generator started from.
    public let seed: UInt64
    private var random: SplitMix64
    private var index: UInt64 = 0
    /// Keys that make the ID parts a bijection of the document's position, so IDs never repeat.
    private let hexKey: UInt64
    private let uuidKey: UInt64

    /// A generator whose documents depend only on `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        self.random = SplitMix64(state: seed)
        var keys = SplitMix64(state: seed ^ 0x5DEE_CE66_D1CE_4E5B)
        self.hexKey = keys.next()
        self.uuidKey = keys.next()
    }

    /// The next document.
    public mutating func next() -> JSONValue {
        let position = index
        index += 1
        let roll = random.below(100)
        if roll < 40 { return make2016(position) }
        if roll < 80 { return make2019(position) }
        return make2025(position)
    }

    /// The next `count` documents.
    public mutating func documents(_ count: Int) -> [JSONValue] {
        var result: [JSONValue] = []
        result.reserveCapacity(max(0, count))
        for _ in 0..<max(0, count) { result.append(next()) }
        return result
    }

    /// `count` documents of `seed` as JSON Lines: compact JSON, each line ending in `\n`.
    public static func jsonLines(count: Int, seed: UInt64) -> [UInt8] {
        var generator = ArticleGenerator(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(max(0, count) * 2200)
        for _ in 0..<max(0, count) {
            JSONWriter.writeCompact(generator.next(), into: &out)
            out.append(0x0A)
        }
        return out
    }

    /// An Article Search response body wrapping `docs`:
    /// `{"status":"OK","copyright":...,"response":{"docs":[...],"meta":{"hits":..,"offset":..,"time":..}}}`.
    ///
    /// `hits` defaults to a number derived from the seed (at least `offset + docs.count`), and
    /// `time` (milliseconds) too, so the same call gives the same bytes.
    public func apiResponse(docs: [JSONValue], offset: Int = 0, hits: Int? = nil) -> JSONValue {
        var mixer = SplitMix64(state: seed ^ 0xA076_1D64_78BD_642F ^ UInt64(truncatingIfNeeded: offset))
        let total = hits ?? (offset + docs.count + Int(mixer.below(50_000)))
        let time = 5 + Int(mixer.below(500))
        return .object(sorting: [
            JSONMember(key: "status", value: .string("OK")),
            JSONMember(key: "copyright", value: .string("Copyright (c) 2019 The New York Times Company. All Rights Reserved.")),
            JSONMember(
                key: "response",
                value: .object(sorting: [
                    JSONMember(key: "docs", value: .array(docs)),
                    JSONMember(
                        key: "meta",
                        value: .object(sorting: [
                            JSONMember(key: "hits", value: .number(String(total))),
                            JSONMember(key: "offset", value: .number(String(offset))),
                            JSONMember(key: "time", value: .number(String(time))),
                        ])),
                ])),
        ])
    }
}

// MARK: - Shapes

extension ArticleGenerator {
    /// What every shape draws first: date, section, words.
    private struct Basics {
        var milliseconds: Int64
        var date: String  // YYYY-MM-DDTHH:MM:SS
        var year: String
        var month: String
        var day: String
        var section: Section
        var headline: String
        var printHeadline: String
        var snippet: String
        var lead: String
        var abstract: String
        var slug: String
        /// The first words of the slug, at most 12 bytes, for image paths.
        var shortSlug: String {
            var cut = String(slug.prefix(12))
            while cut.hasSuffix("-") { cut.removeLast() }
            return cut
        }
        var people: [Person]
        var keywords: [(kind: Int, value: String)]
        var wordCount: Int
        var material: String
        var documentType: String
    }

    private mutating func basics(midnightChance: Int) -> Basics {
        // 2000-01-01 to 2025-12-31, in seconds.
        let first: Int64 = 946_684_800
        let last: Int64 = 1_767_139_200
        var seconds = first + Int64(random.below(UInt64(last - first)))
        if random.below(100) < midnightChance { seconds -= seconds % 86_400 }
        let stamp = Timestamp(milliseconds: seconds * 1000).description  // YYYY-MM-DDTHH:MM:SS.mmmZ
        let date = String(stamp.prefix(19))
        let section = pick(Vocabulary.sections)
        let headline = makeHeadline(section)
        let printHeadline = random.below(100) < 60 ? headline : makeHeadline(section)
        let snippet = sentence(minimumWords: 18)
        let lead = random.below(100) < 50 ? snippet : snippet + " " + sentence(minimumWords: 14)
        let abstract = random.below(100) < 70 ? snippet : sentence(minimumWords: 20)
        var people: [Person] = []
        let authors = random.below(100) < 20 ? 2 : 1
        for _ in 0..<authors {
            people.append(
                Person(
                    first: pick(Vocabulary.firstNames), middle: random.below(100) < 15 ? pick(Vocabulary.middleNames) : nil,
                    last: pick(Vocabulary.lastNames)))
        }
        var keywords: [(kind: Int, value: String)] = []
        let keywordCount = 3 + Int(random.below(6))
        for _ in 0..<keywordCount {
            let kind = Int(random.below(UInt64(Vocabulary.keywordValues.count)))
            let value = pick(Vocabulary.keywordValues[kind])
            if !keywords.contains(where: { $0.value == value }) { keywords.append((kind, value)) }
        }
        var material = pick(Vocabulary.materials)
        var documentType = "article"
        if random.below(100) < 6 {
            documentType = "multimedia"
            material = "Video"
        }
        return Basics(
            milliseconds: seconds * 1000, date: date, year: String(date.prefix(4)),
            month: String(date.dropFirst(5).prefix(2)), day: String(date.dropFirst(8).prefix(2)),
            section: section, headline: headline, printHeadline: printHeadline, snippet: snippet,
            lead: lead, abstract: abstract, slug: Self.slug(of: headline), people: people, keywords: keywords,
            wordCount: 40 + Int(random.below(2400)), material: material, documentType: documentType)
    }

    private mutating func make2016(_ position: UInt64) -> JSONValue {
        let b = basics(midnightChance: 55)
        let wire = random.below(100) < 15
        let agency = random.below(2) == 0 ? "AP" : "Reuters"
        let blogpost = !wire && random.below(100) < 5
        var members: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue) { members.append(JSONMember(key: key, value: value)) }

        let id = hexID(position, milliseconds: b.milliseconds)
        add("_id", .string(id))
        add("pub_date", .string(b.date + "Z"))
        add("blog", .array([]))
        add("slideshow_credits", .null)
        add("document_type", .string(blogpost ? "blogpost" : wire ? "article" : b.documentType))
        add("snippet", .string(b.snippet))
        add("lead_paragraph", blogpost ? .null : .string(b.lead))
        add("abstract", random.below(100) < 65 ? .null : .string(b.abstract))
        add("section_name", .string(b.section.name))
        add("subsection_name", b.section.subsections.isEmpty || random.below(100) < 40 ? .null : .string(pick(b.section.subsections)))
        add("type_of_material", .string(blogpost ? "Blog" : wire ? "News" : b.material))
        add("word_count", .string(String(wire ? b.wordCount / 6 + 40 : b.wordCount)))
        if wire {
            members.append(contentsOf: wireStory2016(b, agency: agency))
            return .object(sorting: members)
        }
        add("web_url", .string("http://www.nytimes.com/\(b.year)/\(b.month)/\(b.day)/\(b.section.slug)/\(b.slug).html"))
        add("source", .string(Int64(b.year)! < 2006 && random.below(100) < 20 ? "International Herald Tribune" : "The New York Times"))
        add("news_desk", .string(b.section.desk))
        add("print_page", random.below(100) < 30 ? .null : .string(String(1 + random.below(40))))
        add("headline", headline2016(b))
        add("keywords", keywords2016(b))
        add("byline", byline2016(b))
        add("multimedia", multimedia2016(b))
        return .object(sorting: members)
    }

    /// The rest of a 2016 wire story (AP or Reuters): its `web_url` and `source`, no desk, print
    /// page, keywords or multimedia, the agency as byline organization and one headline for both.
    /// Draws nothing from `random`.
    private func wireStory2016(_ b: Basics, agency: String) -> [JSONMember] {
        var members: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue) { members.append(JSONMember(key: key, value: value)) }

        let slug = (agency == "AP" ? "ap-" : "reuters-") + b.slug
        add(
            "web_url",
            .string(
                "http://www.nytimes.com/\(agency == "AP" ? "aponline" : "reuters")/\(b.year)/\(b.month)/\(b.day)/\(b.section.slug)/\(slug).html"
            ))
        add("source", .string(agency))
        add("news_desk", .null)
        add("print_page", .null)
        add("keywords", .array([]))
        add("multimedia", .array([]))
        let organization = agency == "AP" ? "THE ASSOCIATED PRESS" : "REUTERS"
        add(
            "byline",
            .object(sorting: [
                JSONMember(key: "person", value: .array([])),
                JSONMember(key: "original", value: .string("By " + organization)),
                JSONMember(key: "organization", value: .string(organization)),
            ]))
        add(
            "headline",
            .object(sorting: [
                JSONMember(key: "main", value: .string(b.headline)),
                JSONMember(key: "print_headline", value: .string(b.headline)),
            ]))
        return members
    }

    /// The 2016 `headline`: `main`, often a `print_headline`, sometimes a `kicker` (also as `content_kicker`).
    private mutating func headline2016(_ b: Basics) -> JSONValue {
        var headline: [JSONMember] = [JSONMember(key: "main", value: .string(b.headline))]
        if random.below(100) < 70 { headline.append(JSONMember(key: "print_headline", value: .string(b.printHeadline))) }
        if random.below(100) < 30 {
            let kicker = pick(Vocabulary.kickers)
            headline.append(JSONMember(key: "kicker", value: .string(kicker)))
            headline.append(JSONMember(key: "content_kicker", value: .string(kicker)))
        }
        return .object(sorting: headline)
    }

    /// The 2016 `keywords`: `name` and `value`, and mostly a string `rank` and `is_major`.
    private mutating func keywords2016(_ b: Basics) -> JSONValue {
        var keywords: [JSONValue] = []
        let withRank = random.below(100) < 90
        for (rank, keyword) in b.keywords.enumerated() {
            var fields = [
                JSONMember(key: "name", value: .string(Vocabulary.keywordNames[keyword.kind])),
                JSONMember(key: "value", value: .string(keyword.value)),
            ]
            if withRank {
                fields.append(JSONMember(key: "rank", value: .string(String(rank + 1))))
                fields.append(JSONMember(key: "is_major", value: .string(rank < 2 && random.below(100) < 30 ? "Y" : "N")))
            }
            keywords.append(.object(sorting: fields))
        }
        return .array(keywords)
    }

    /// The 2016 `byline`: the persons and the `original` line, or (rarely) an empty array.
    private mutating func byline2016(_ b: Basics) -> JSONValue {
        if random.below(100) < 3 {
            return .array([])
        }
        var persons: [JSONValue] = []
        for (rank, person) in b.people.enumerated() {
            var fields = [
                JSONMember(key: "firstname", value: .string(person.first)),
                JSONMember(key: "lastname", value: .string(person.last.uppercased())),
                JSONMember(key: "rank", value: .number(String(rank + 1))),
                JSONMember(key: "role", value: .string("reported")),
                JSONMember(key: "organization", value: .string("")),
            ]
            if let middle = person.middle { fields.append(JSONMember(key: "middlename", value: .string(middle))) }
            persons.append(.object(sorting: fields))
        }
        return .object(sorting: [
            JSONMember(key: "person", value: .array(persons)),
            JSONMember(key: "original", value: .string(original(b.people))),
        ])
    }

    /// The 2016 `multimedia`: three legacy images with string sizes, or an empty array.
    private mutating func multimedia2016(_ b: Basics) -> JSONValue {
        guard random.below(100) < 65 else { return .array([]) }
        let folder = "images/\(b.year)/\(b.month)/\(b.day)/\(b.section.slug)/\(b.day)\(b.shortSlug)"
        let name = "\(b.day)\(b.shortSlug)"
        let tall = 300 + Int(random.below(300))
        var images: [JSONValue] = []
        for (subtype, crop, width, height) in [
            ("wide", "thumbWide", 190, 126), ("xlarge", "articleLarge", 600, tall),
            ("thumbnail", "thumbStandard", 75, 75),
        ] {
            let url = "\(folder)/\(name)-\(crop).jpg"
            images.append(
                .object(sorting: [
                    JSONMember(key: "width", value: .number(String(width))),
                    JSONMember(key: "height", value: .number(String(height))),
                    JSONMember(key: "url", value: .string(url)),
                    JSONMember(key: "subtype", value: .string(subtype)),
                    JSONMember(key: "type", value: .string("image")),
                    JSONMember(
                        key: "legacy",
                        value: .object(sorting: [
                            JSONMember(key: subtype, value: .string(url)),
                            JSONMember(key: subtype + "width", value: .string(String(width))),
                            JSONMember(key: subtype + "height", value: .string(String(height))),
                        ])),
                ]))
        }
        return .array(images)
    }

    private mutating func make2019(_ position: UInt64) -> JSONValue {
        let b = basics(midnightChance: 35)
        var members: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue) { members.append(JSONMember(key: key, value: value)) }

        let uri = "nyt://article/" + uuid(position)
        // A quarter keep the older 24-hex _id of the 2018 transition.
        add("_id", .string(random.below(100) < 25 ? hexID(position, milliseconds: b.milliseconds) : uri))
        add("uri", .string(uri))
        add("pub_date", .string(b.date + "+0000"))
        add("web_url", .string("https://www.nytimes.com/\(b.year)/\(b.month)/\(b.day)/\(b.section.slug)/\(b.slug).html"))
        add("snippet", .string(b.snippet))
        if random.below(100) < 85 { add("lead_paragraph", .string(b.lead)) }
        if random.below(100) < 50 { add("abstract", .string(b.abstract)) }
        if random.below(100) < 80 { add("print_page", .string(String(1 + random.below(40)))) }
        add("blog", .object([]))
        add("source", .string("The New York Times"))
        add("document_type", .string(b.documentType))
        if random.below(100) < 90 { add("news_desk", .string(b.section.desk)) }
        add("section_name", .string(b.section.name))
        if !b.section.subsections.isEmpty && random.below(100) < 60 {
            add(random.below(100) < 30 ? "subsectoinName" : "subsection_name", .string(pick(b.section.subsections)))
        }
        add("type_of_material", .string(b.material))
        add("word_count", .number(String(b.wordCount)))
        add("score", .number(random.below(100) < 70 ? "0.0" : decimal(random.below(2_000_000), places: 5)))
        add("headline", headline2019(b))
        add("keywords", keywords2019(b))
        if random.below(100) >= 6 {  // letters have no byline at all
            add("byline", byline2019(b))
        }
        add("multimedia", multimedia2019(b))
        return .object(sorting: members)
    }

    /// The 2019 `headline`: every field present, a `kicker` (as `content_kicker` too) or null, and
    /// null `name`, `seo` and `sub`.
    private mutating func headline2019(_ b: Basics) -> JSONValue {
        let kicker: JSONValue = random.below(100) < 25 ? .string(pick(Vocabulary.kickers)) : .null
        return .object(sorting: [
            JSONMember(key: "main", value: .string(b.headline)),
            JSONMember(key: "kicker", value: kicker),
            JSONMember(key: "content_kicker", value: kicker),
            JSONMember(key: "print_headline", value: .string(b.printHeadline)),
            JSONMember(key: "name", value: .null),
            JSONMember(key: "seo", value: .null),
            JSONMember(key: "sub", value: .null),
        ])
    }

    /// The 2019 `keywords`: an integer `rank`, and `major` null (for the whole document) or `"N"`.
    private mutating func keywords2019(_ b: Basics) -> JSONValue {
        var keywords: [JSONValue] = []
        let majorIsNull = random.below(100) < 40
        for (rank, keyword) in b.keywords.enumerated() {
            keywords.append(
                .object(sorting: [
                    JSONMember(key: "name", value: .string(Vocabulary.keywordNames[keyword.kind])),
                    JSONMember(key: "value", value: .string(keyword.value)),
                    JSONMember(key: "rank", value: .number(String(rank + 1))),
                    JSONMember(key: "major", value: majorIsNull ? .null : .string("N")),
                ]))
        }
        return .array(keywords)
    }

    /// The 2019 `byline`: `original`, the persons with every field (null when unknown) and a null
    /// `organization`. Draws nothing from `random`.
    private mutating func byline2019(_ b: Basics) -> JSONValue {
        var persons: [JSONValue] = []
        for (rank, person) in b.people.enumerated() {
            persons.append(
                .object(sorting: [
                    JSONMember(key: "firstname", value: .string(person.first)),
                    JSONMember(key: "middlename", value: person.middle.map { .string($0) } ?? .null),
                    JSONMember(key: "lastname", value: .string(person.last.uppercased())),
                    JSONMember(key: "qualifier", value: .null),
                    JSONMember(key: "title", value: .null),
                    JSONMember(key: "role", value: .string("reported")),
                    JSONMember(key: "organization", value: .string("")),
                    JSONMember(key: "rank", value: .number(String(rank + 1))),
                ]))
        }
        return .object(sorting: [
            JSONMember(key: "original", value: .string(original(b.people))),
            JSONMember(key: "person", value: .array(persons)),
            JSONMember(key: "organization", value: .null),
        ])
    }

    /// One crop of an image in the 2018-2019 shape: its subtype (twice, `subtype` and `subType`),
    /// crop name, size, URL and the legacy triple.
    static func crop(subtype: String, name: String, width: Int, height: Int, url: String) -> JSONValue {
        .object(sorting: [
            JSONMember(key: "rank", value: .number("0")),
            JSONMember(key: "subtype", value: .string(subtype)),
            JSONMember(key: "caption", value: .null),
            JSONMember(key: "credit", value: .null),
            JSONMember(key: "type", value: .string("image")),
            JSONMember(key: "url", value: .string(url)),
            JSONMember(key: "height", value: .number(String(height))),
            JSONMember(key: "width", value: .number(String(width))),
            JSONMember(
                key: "legacy",
                value: .object(sorting: [
                    JSONMember(key: subtype, value: .string(url)),
                    JSONMember(key: subtype + "width", value: .number(String(width))),
                    JSONMember(key: subtype + "height", value: .number(String(height))),
                ])),
            JSONMember(key: "subType", value: .string(subtype)),
            JSONMember(key: "crop_name", value: .string(name)),
        ])
    }

    /// The 2019 `multimedia`: two or three crops (the first a `merlin_` image) with number sizes,
    /// or an empty array.
    private mutating func multimedia2019(_ b: Basics) -> JSONValue {
        guard random.below(100) < 60 else { return .array([]) }
        let folder = "images/\(b.year)/\(b.month)/\(b.day)/\(b.section.slug)/\(b.day)\(b.shortSlug)"
        let merlin = "merlin_\(100_000_000 + random.below(60_000_000))_\(uuid(random.next() >> 16))"
        let tall = 300 + Int(random.below(300))
        var crops: [JSONValue] = []
        let all = [("xlarge", "articleLarge", 600, tall), ("wide", "thumbWide", 190, 126), ("thumbnail", "thumbStandard", 75, 75)]
        for (number, (subtype, crop, width, height)) in all.prefix(2 + Int(random.below(2))).enumerated() {
            let url = number == 0 ? "\(folder)/\(merlin)-\(crop).jpg" : "\(folder)/\(b.day)\(b.shortSlug)-\(crop).jpg"
            crops.append(Self.crop(subtype: subtype, name: crop, width: width, height: height, url: url))
        }
        return .array(crops)
    }

    private mutating func make2025(_ position: UInt64) -> JSONValue {
        let b = basics(midnightChance: 10)
        var members: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue) { members.append(JSONMember(key: key, value: value)) }

        let uri = "nyt://article/" + uuid(position)
        add("_id", .string(uri))
        add("uri", .string(uri))
        add("pub_date", .string(b.date + "Z"))
        add("web_url", .string("https://www.nytimes.com/\(b.year)/\(b.month)/\(b.day)/\(b.section.slug)/\(b.slug).html"))
        add("snippet", .string(b.snippet))
        add("abstract", .string(b.abstract))
        if random.below(100) < 50 { add("lead_paragraph", .string(b.lead)) }
        add("print_section", .string(random.below(100) < 20 ? "" : String(pick(["A", "B", "C", "D", "BU", "ST", "TR"]))))
        add("print_page", .string(random.below(100) < 20 ? "" : String(1 + random.below(40))))
        add("source", .string("The New York Times"))
        add("document_type", .string(b.documentType))
        add("news_desk", .string(b.section.desk))
        add("section_name", .string(b.section.name))
        add("subsection_name", .string(b.section.subsections.isEmpty || random.below(100) < 40 ? "" : pick(b.section.subsections)))
        add("type_of_material", .string(b.material))
        add("word_count", .number(String(b.wordCount)))
        add(
            "headline",
            .object(sorting: [
                JSONMember(key: "main", value: .string(b.headline)),
                JSONMember(key: "kicker", value: .string(random.below(100) < 25 ? pick(Vocabulary.kickers) : "")),
                JSONMember(key: "print_headline", value: .string(random.below(100) < 15 ? "" : b.printHeadline)),
            ]))
        add("keywords", keywords2025(b))
        add("byline", .object([JSONMember(key: "original", value: .string(original(b.people)))]))
        add("multimedia", multimedia2025(b))
        return .object(sorting: members)
    }

    /// The 2025 `keywords`: capitalized names (`Subject`, `Person`, ...), an integer `rank`, no
    /// `major`. Draws nothing from `random`.
    private func keywords2025(_ b: Basics) -> JSONValue {
        var keywords: [JSONValue] = []
        for (rank, keyword) in b.keywords.enumerated() {
            keywords.append(
                .object(sorting: [
                    JSONMember(key: "name", value: .string(Vocabulary.keywordNames2025[keyword.kind])),
                    JSONMember(key: "value", value: .string(keyword.value)),
                    JSONMember(key: "rank", value: .number(String(rank + 1))),
                ]))
        }
        return .array(keywords)
    }

    /// The 2025 `multimedia` object: a caption, a credit, a `default` and a `thumbnail` image, or
    /// the same fields empty.
    private mutating func multimedia2025(_ b: Basics) -> JSONValue {
        guard random.below(100) < 80 else {
            return .object(sorting: [
                JSONMember(key: "caption", value: .string("")),
                JSONMember(key: "credit", value: .string("")),
                JSONMember(key: "default", value: .object(sorting: [JSONMember(key: "url", value: .string(""))])),
                JSONMember(key: "thumbnail", value: .object(sorting: [JSONMember(key: "url", value: .string(""))])),
            ])
        }
        let base =
            "https://static01.nyt.com/images/\(b.year)/\(b.month)/\(b.day)/multimedia/\(b.day)\(b.shortSlug)-\(FNV1a64.hex(random.next()).prefix(4))"
        let tall = 300 + Int(random.below(300))
        return .object(sorting: [
            JSONMember(key: "caption", value: .string(sentence(minimumWords: 10))),
            JSONMember(
                key: "credit", value: .string("\(pick(Vocabulary.firstNames)) \(pick(Vocabulary.lastNames)) for The New York Times")),
            JSONMember(
                key: "default",
                value: .object(sorting: [
                    JSONMember(key: "url", value: .string(base + "-articleLarge.jpg")),
                    JSONMember(key: "height", value: .number(String(tall))),
                    JSONMember(key: "width", value: .number("600")),
                ])),
            JSONMember(
                key: "thumbnail",
                value: .object(sorting: [
                    JSONMember(key: "url", value: .string(base + "-thumbStandard.jpg")),
                    JSONMember(key: "height", value: .number("75")),
                    JSONMember(key: "width", value: .number("75")),
                ])),
        ])
    }
}

// MARK: - Pieces

extension ArticleGenerator {
    private struct Person {
        var first: String
        var middle: String?
        var last: String
    }

    private mutating func pick<T>(_ items: [T]) -> T {
        items[Int(random.below(UInt64(items.count)))]
    }

    private mutating func original(_ people: [Person]) -> String {
        let names = people.map { person in
            ([person.first] + (person.middle.map { [$0] } ?? []) + [person.last]).joined(separator: " ").uppercased()
        }
        return "By " + names.joined(separator: " and ")
    }

    private mutating func makeHeadline(_ section: Section) -> String {
        let subject = random.below(100) < 50 ? pick(Vocabulary.subjects) : pick(section.topics)
        let place = pick(Vocabulary.places)
        switch random.below(8) {
        case 0: return "\(subject) \(pick(Vocabulary.verbs)) \(pick(Vocabulary.objects)) in \(place)"
        case 1: return "In \(place), \(subject) \(pick(Vocabulary.verbs)) \(pick(Vocabulary.objects))"
        case 2: return "‘\(pick(Vocabulary.quotes))’: \(subject) \(pick(Vocabulary.verbs)) \(pick(Vocabulary.objects))"
        case 3: return "What \(subject) \(pick(Vocabulary.verbs)) About \(place)"
        case 4: return "\(subject) and the “\(pick(Vocabulary.quotes))” Problem"
        case 5: return "\(pick(Vocabulary.unicodeNames)): \(subject) \(pick(Vocabulary.verbs)) \(pick(Vocabulary.objects))"
        case 6: return "\(subject) \(pick(Vocabulary.verbs)) \(pick(Vocabulary.objects)) — and \(pick(Vocabulary.objects))"
        default: return "\(subject) \(pick(Vocabulary.verbs)) \(pick(Vocabulary.objects)) After \(pick(Vocabulary.events))"
        }
    }

    private mutating func sentence(minimumWords: Int) -> String {
        var words: [String] = []
        while words.count < minimumWords {
            let clause: String
            switch random.below(5) {
            case 0:
                clause =
                    "the \(pick(Vocabulary.nouns)) \(pick(Vocabulary.presentVerbs)) \(pick(Vocabulary.adjectives)) \(pick(Vocabulary.nouns)) in \(pick(Vocabulary.places))"
            case 1:
                clause =
                    "\(pick(Vocabulary.firstNames)) \(pick(Vocabulary.lastNames)) said the \(pick(Vocabulary.nouns)) would \(pick(Vocabulary.infinitives)) the \(pick(Vocabulary.nouns))"
            case 2:
                clause =
                    "after \(pick(Vocabulary.events).lowercased()), \(pick(Vocabulary.adjectives)) \(pick(Vocabulary.pluralNouns)) \(pick(Vocabulary.pluralVerbs)) the \(pick(Vocabulary.nouns))"
            case 3:
                clause =
                    "officials in \(pick(Vocabulary.places)) \(pick(Vocabulary.pluralVerbs)) a \(pick(Vocabulary.adjectives)) \(pick(Vocabulary.nouns)) for the \(pick(Vocabulary.nouns))"
            default:
                clause =
                    "one \(pick(Vocabulary.adjectives)) \(pick(Vocabulary.nouns)) \(pick(Vocabulary.presentVerbs)) what \(pick(Vocabulary.pluralNouns)) \(pick(Vocabulary.pluralVerbs))"
            }
            words.append(contentsOf: clause.split(separator: " ").map(String.init))
            if words.count < minimumWords { words[words.count - 1] += random.below(3) == 0 ? ";" : "," }
        }
        return words.joined(separator: " ").capitalizedFirst + "."
    }

    /// The `web_url` slug of a headline: its ASCII letters and digits, lowercased, words joined by
    /// dashes, cut once it reaches `limit` bytes.
    static func slug(of headline: String, limit: Int = 60) -> String {
        var out = ""
        var dash = false
        for scalar in headline.lowercased().unicodeScalars {
            if (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") {
                if dash && !out.isEmpty { out.append("-") }
                out.unicodeScalars.append(scalar)
                dash = false
            } else {
                dash = true
            }
            if out.utf8.count >= limit { break }
        }
        return out.isEmpty ? "article" : out
    }

    /// 8 hex digits of the date (as MongoDB object IDs do) and 16 of a bijection of the position.
    private func hexID(_ position: UInt64, milliseconds: Int64) -> String {
        let seconds = UInt32(truncatingIfNeeded: milliseconds / 1000)
        return hex(UInt64(seconds), digits: 8) + hex(SplitMix64.mix(position &+ hexKey), digits: 16)
    }

    /// A version-5-looking UUID whose 64 bits `unique` (a bijection of the position) are all kept.
    private mutating func uuid(_ position: UInt64) -> String {
        let unique = SplitMix64.mix(position &+ uuidKey)
        let extra = random.next()
        let group3 = "5" + hex(extra & 0xFFF, digits: 3)
        let group4 = hex(0x8 | ((extra >> 12) & 0x3), digits: 1) + hex((extra >> 14) & 0xFFF, digits: 3)
        return hex(unique >> 32, digits: 8) + "-" + hex((unique >> 16) & 0xFFFF, digits: 4) + "-" + group3 + "-" + group4
            + "-" + hex(unique & 0xFFFF, digits: 4) + hex((extra >> 26) & 0xFFFF_FFFF, digits: 8)
    }

    private func hex(_ value: UInt64, digits: Int) -> String {
        Self.hexString(value, digits: digits)
    }

    /// The low `digits` hex digits of `value`, lowercase.
    static func hexString(_ value: UInt64, digits: Int) -> String {
        let table = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: digits)
        var rest = value
        for i in stride(from: digits - 1, through: 0, by: -1) {
            bytes[i] = table[Int(rest & 0xF)]
            rest >>= 4
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func decimal(_ value: UInt64, places: Int) -> String {
        var divisor: UInt64 = 1
        for _ in 0..<places { divisor *= 10 }
        let fraction = String(value % divisor)
        return "\(value / divisor)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}

extension String {
    fileprivate var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}

// MARK: - Vocabulary

extension ArticleGenerator {
    private struct Section: Sendable {
        var name: String
        var slug: String
        var desk: String
        var subsections: [String]
        var topics: [String]
    }

    private enum Vocabulary {
        static let sections: [Section] = [
            Section(
                name: "World", slug: "world", desk: "Foreign",
                subsections: ["Africa", "Americas", "Asia Pacific", "Europe", "Middle East"],
                topics: ["Ceasefire Negotiators", "Prime Ministers", "Border Officials", "Aid Groups"]),
            Section(
                name: "U.S.", slug: "us", desk: "National", subsections: ["Politics", "Education"],
                topics: ["Senators", "Governors", "Federal Judges", "White House Aides"]),
            Section(
                name: "Business Day", slug: "business", desk: "Business",
                subsections: ["DealBook", "Economy", "Media", "Energy & Environment"],
                topics: ["Investors", "Fed Officials", "Automakers", "Private Equity Firms"]),
            Section(
                name: "Opinion", slug: "opinion", desk: "OpEd", subsections: ["Sunday Review"],
                topics: ["Columnists", "Editors", "Readers"]),
            Section(
                name: "Sports", slug: "sports", desk: "Sports", subsections: ["Baseball", "Pro Football", "Soccer", "Tennis"],
                topics: ["The Yankees", "The Knicks", "Rookie Pitchers", "World Cup Hopefuls"]),
            Section(
                name: "Arts", slug: "arts", desk: "Culture", subsections: ["Music", "Television", "Design", "Dance"],
                topics: ["Broadway Producers", "Opera Singers", "Quiet Painters"]),
            Section(
                name: "Science", slug: "science", desk: "Science", subsections: [],
                topics: ["Astronomers", "Rare Beetles", "Climate Scientists"]),
            Section(
                name: "Travel", slug: "travel", desk: "Travel", subsections: [],
                topics: ["Night Trains", "Hotel Owners", "Frugal Travelers"]),
            Section(
                name: "Style", slug: "style", desk: "Styles", subsections: ["Modern Love"],
                topics: ["Designers", "Newlyweds", "Tiny Apartments"]),
            Section(
                name: "Technology", slug: "technology", desk: "Business", subsections: ["Personal Tech"],
                topics: ["Silicon Valley", "Chip Makers", "App Developers"]),
            Section(
                name: "New York", slug: "nyregion", desk: "Metro", subsections: [],
                topics: ["City Council Members", "Subway Riders", "Brooklyn Landlords"]),
            Section(
                name: "Food", slug: "dining", desk: "Dining", subsections: [],
                topics: ["Bakers", "Home Cooks", "Chefs"]),
        ]
        static let subjects = [
            "Lawmakers", "Voters", "Families", "Judges", "Scientists", "Teachers", "Regulators",
            "City Leaders", "Farmers", "Protesters", "Doctors", "Negotiators", "Critics", "Fans",
        ]
        static let verbs = [
            "Weigh", "Confront", "Reject", "Embrace", "Rethink", "Fight Over", "Bet on", "Debate",
            "Rally Behind", "Brace for", "Quietly Reshape", "Wrestle With",
        ]
        static let objects = [
            "a New Tax", "the Old Rules", "Rising Rents", "a Risky Plan", "Their Past", "the Future of Work",
            "an Unlikely Deal", "a Longer Season", "the Budget", "a Final Vote", "the Water Supply",
        ]
        static let events = ["the Election", "the Storm", "a Deadly Fire", "the Strike", "a Long Drought", "the Verdict", "the Merger"]
        static let quotes = [
            "We Were Not Ready", "It’s Not Over", "Nobody Asked Us", "A Perfect Storm", "This Is Home",
            "Don’t Look Back", "We’ll See",
        ]
        static let unicodeNames = [
            "Café Society in Zürich", "São Paulo’s Night Shift", "Pokémon at 25", "Ángel Di María",
            "Crème Brûlée, Revisited", "東京 Diary", "北京 After the Games", "서울 Rising",
            "Ελλάδα on the Brink", "Müller vs. Øster", "Français et fiers", "Kraków’s Quiet Square",
        ]
        static let places = [
            "Ohio", "Lagos", "Brooklyn", "Kyiv", "Mumbai", "São Paulo", "Montréal", "the Bronx", "Texas",
            "Hong Kong", "Zürich", "Nairobi", "Queens", "Jerusalem", "Oaxaca", "the Midwest",
        ]
        static let nouns = [
            "council", "budget", "company", "season", "museum", "neighborhood", "union", "school", "court",
            "market", "team", "election", "hospital", "festival", "pipeline", "agency", "archive", "orchestra",
        ]
        static let adjectives = [
            "new", "bitter", "quiet", "unusual", "sweeping", "modest", "costly", "surprising", "local",
            "long-awaited", "controversial", "fragile",
        ]
        static let presentVerbs = [
            "faces", "approves", "questions", "delays", "expands", "blocks", "celebrates", "revives",
            "defends", "weighs", "reshapes", "abandons",
        ]
        static let pluralNouns = [
            "councils", "companies", "museums", "unions", "schools", "markets", "teams", "hospitals",
            "agencies", "orchestras", "neighbors", "tenants",
        ]
        static let pluralVerbs = [
            "face", "approve", "question", "delay", "expand", "block", "celebrate", "revive", "defend", "weigh", "propose",
        ]
        static let infinitives = ["reconsider", "fund", "replace", "investigate", "defend", "expand", "close", "rebuild"]
        static let kickers = [
            "Op-Docs", "Breakingviews", "On Baseball", "Wheels", "The Saturday Profile", "Letter From Europe",
            "Critic’s Notebook", "DealBook", "Well",
        ]
        static let materials = [
            "News", "News", "News", "News", "Op-Ed", "Review", "Letter", "Editorial", "Obituary (Obit)",
            "Interview", "News Analysis", "Brief",
        ]
        static let firstNames = [
            "Ben", "Katie", "David", "Maria", "Hugo", "Norimitsu", "Lauren", "Jon", "Ana", "Chen",
            "Fatima", "Søren", "José", "Priya", "Kwame", "Élise",
        ]
        static let middleNames = ["M.", "J.", "Myung-ok", "Ann", "R."]
        static let lastNames = [
            "Steinbauer", "Hafner", "Brooks", "Dixon", "Silva", "Onishi", "Gluck", "Liptak", "Herrera",
            "Wang", "Okafor", "Nguyen", "Kowalski", "Abramovich", "Núñez", "Lindqvist",
        ]
        static let keywordNames = ["subject", "persons", "glocations", "organizations", "creative_works"]
        static let keywordNames2025 = ["Subject", "Person", "Location", "Organization", "Creative Work"]
        static let keywordValues: [[String]] = [
            [
                "Politics and Government", "Subprime Mortgage Crisis", "Automobiles", "Global Warming", "Refugees and Displaced Persons",
                "Books and Literature", "Travel and Vacations", "Elections", "Immigration and Emigration", "Baseball",
                "Restaurants", "Real Estate and Housing (Residential)", "Artificial Intelligence", "Vaccination and Immunization",
            ],
            [
                "Trump, Donald J", "Obama, Barack", "Biden, Joseph R Jr", "Merkel, Angela", "Zuma, Jacob G", "Ramaphosa, Cyril",
                "Ohtani, Shohei", "Núñez, Darwin", "Xi Jinping",
            ],
            [
                "Nigeria", "Cuba", "Israel", "Montana", "South Africa", "Brooklyn (NYC)", "Japan", "Mexico City (Mexico)",
                "Zürich (Switzerland)", "Ukraine",
            ],
            [
                "United Nations", "General Motors Corp", "Federal Reserve System", "African National Congress", "New York Yankees",
                "European Union", "Metropolitan Opera",
            ],
            ["The Great Gatsby (Book)", "Hamilton (Play)", "Succession (TV Program)", "Spirited Away (Movie)"],
        ]
    }
}
