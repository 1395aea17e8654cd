import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Tests of the fake NYT Article Search server, over real sockets with URLSession, and of the
// date-range corpus generator it is usually fed with.

// MARK: - Helpers

@Suite("ArticleGenerator.corpus")
struct ArticleGeneratorCorpusTests {
    @Test func publicationDatesFallWithinTheRangeInTheShapesFormat() throws {
        let corpus = ArticleGenerator.corpus(count: 500, seed: 11, from: "2024-02-28", to: "2024-03-02")
        #expect(corpus.count == 500)
        let first = try #require(ISODate.interval(of: "2024-02-28")?.start)
        let end = try #require(ISODate.interval(of: "2024-03-02")?.end)
        var formats: Set<String> = []
        var days: Set<String> = []
        for document in corpus {
            let date = try #require(document["pub_date"]?.stringValue)
            let instant = try #require(ISODate.instant(of: date), "unparseable pub_date \(date)")
            #expect(instant >= first && instant < end, "\(date) out of range")
            formats.insert(date.hasSuffix("+0000") ? "+0000" : date.hasSuffix("Z") ? "Z" : date)
            days.insert(String(date.prefix(10)))
            // The 2019 shape (it has `score`) keeps +0000; the others end in Z.
            #expect(date.hasSuffix(document["score"] != nil ? "+0000" : "Z"))
            if let url = document["web_url"]?.stringValue {
                #expect(url.contains("/" + date.prefix(10).replacingOccurrences(of: "-", with: "/") + "/"), "\(url) vs \(date)")
            }
        }
        #expect(formats == ["+0000", "Z"])
        #expect(days == ["2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02"])  // spread over every day
    }

    @Test func identifiersAreDistinctWithinASeedAndAcrossSeeds() {
        let one = ArticleGenerator.corpus(count: 2000, seed: 1, from: "2000-01-01", to: "2025-12-31")
        let two = ArticleGenerator.corpus(count: 2000, seed: 2, from: "2000-01-01", to: "2025-12-31")
        let ids = (one + two).compactMap { $0["_id"]?.stringValue }
        #expect(ids.count == 4000)
        #expect(Set(ids).count == 4000)
    }

    @Test func corpusIsDeterministicAndKeepsTheGeneratorsDocuments() {
        let corpus = ArticleGenerator.corpus(count: 50, seed: 5, from: "2010-06-01", to: "2010-06-30")
        #expect(corpus == ArticleGenerator.corpus(count: 50, seed: 5, from: "2010-06-01", to: "2010-06-30"))
        var generator = ArticleGenerator(seed: 5)
        let plain = generator.documents(50)
        #expect(corpus.map { $0["_id"] } == plain.map { $0["_id"] })
        #expect(corpus.map { $0["headline"] } == plain.map { $0["headline"] })
    }

    @Test func aDayRangeOfOneDayAndReversedOrInvalidBoundsStillGiveValidDates() throws {
        for date in ArticleGenerator.corpus(count: 40, seed: 3, from: "2021-07-04", to: "2021-07-04").compactMap({
            $0["pub_date"]?.stringValue
        }) {
            #expect(date.hasPrefix("2021-07-04T"))
        }
        let reversed = ArticleGenerator.corpus(count: 20, seed: 3, from: "2021-07-05", to: "2021-07-04")
        #expect(reversed.allSatisfy { ($0["pub_date"]?.stringValue ?? "").hasPrefix("2021-07-0") })
        let invalid = ArticleGenerator.corpus(count: 20, seed: 3, from: "not a day", to: "2021-02-30")
        #expect(invalid.count == 20)
        #expect(ArticleGenerator.corpus(count: 0, seed: 3, from: "2021-01-01", to: "2021-01-02").isEmpty)
        #expect(ArticleGenerator.corpus(count: -5, seed: 3, from: "2021-01-01", to: "2021-01-02").isEmpty)
        #expect(ArticleGenerator.startOfDay("2021-02-30") == nil)
        #expect(ArticleGenerator.startOfDay("1970-01-02") == 86_400_000)
    }

    @Test func documentsBefore1981TakeThePrintArchiveShape() throws {
        // February 1963, as the real month (nyt-samples/14_archive_1963_02_strike_era_3012docs_reserialized.json).
        let corpus = ArticleGenerator.corpus(count: 3_012, seed: 12, from: "1963-02-01", to: "1963-02-28")
        let headlineKeys: Set<String> = ["main", "kicker", "content_kicker", "print_headline", "name", "seo", "sub"]
        let personKeys: Set<String> = ["firstname", "middlename", "lastname", "qualifier", "title", "role", "organization", "rank"]
        let keywordNames: Set<String> = ["subject", "persons", "glocations", "organizations", "creative_works"]
        func keys(_ value: JSONValue?) -> Set<String> {
            guard case .object(let members)? = value else { return [] }
            return Set(members.map(\.key))
        }
        var reviews = 0
        var printSections = 0
        var withoutKeywords = 0
        for document in corpus {
            let id = try #require(document["_id"]?.stringValue)
            #expect(id.hasPrefix("nyt://article/") && id.utf8.count == "nyt://article/".utf8.count + 36, "\(id)")
            #expect(document["uri"] == document["_id"])
            #expect(document["section_name"] == .string("Archives"))
            #expect(document["multimedia"] == .array([]))
            #expect(document["subsection_name"] == nil)
            #expect(document["source"] == .string("The New York Times"))
            #expect(document["document_type"] == .string("article"))
            let date = try #require(document["pub_date"]?.stringValue)
            #expect(date.hasPrefix("1963-02-") && date.hasSuffix("T05:00:00+0000") && date.utf8.count == 24, "\(date)")
            let url = try #require(document["web_url"]?.stringValue)
            #expect(url.hasPrefix("https://www.nytimes.com/1963/02/\(date.dropFirst(8).prefix(2))/archives/") && url.hasSuffix(".html"))
            #expect(keys(document["headline"]) == headlineKeys)
            #expect(document["headline"]?["print_headline"] == document["headline"]?["main"])
            #expect(keys(document["byline"]) == ["original", "person", "organization"])
            if case .array(let persons)? = document["byline"]?["person"] {
                for person in persons { #expect(keys(person) == personKeys) }
            }
            guard case .array(let keywords)? = document["keywords"] else {
                Issue.record("keywords is not an array in \(id)")
                continue
            }
            if keywords.isEmpty { withoutKeywords += 1 }
            for keyword in keywords {
                #expect(keys(keyword) == ["name", "value", "rank", "major"])
                #expect(keywordNames.contains(keyword["name"]?.stringValue ?? ""))
                #expect(keyword["major"] == .string("N"))
                guard case .number(_)? = keyword["rank"] else {
                    Issue.record("rank is not a number in \(id)")
                    continue
                }
            }
            if document["print_section"] != nil { printSections += 1 }
            if document["type_of_material"] == .string("Review") {
                reviews += 1
                #expect(document["news_desk"] == .string(""))
                guard case .number(let words)? = document["word_count"], let count = Int(words) else {
                    Issue.record("no word_count in \(id)")
                    continue
                }
                #expect(count > 0)
                #expect(document["lead_paragraph"] == document["abstract"])
            } else {
                #expect(document["type_of_material"] == .string("Archives"))
                #expect(document["news_desk"] == .string("None"))
                #expect(document["word_count"] == .number("0"))
                #expect(document["lead_paragraph"] == .string(""))
            }
        }
        #expect(Set(corpus.compactMap { $0["_id"]?.stringValue }).count == corpus.count)
        #expect(reviews > 0 && reviews < 40, "\(reviews) reviews")  // 13 of 3,012 in the real month
        #expect(printSections > 0 && printSections < corpus.count / 2, "\(printSections) print sections")  // 928 of 3,012
        #expect(withoutKeywords > corpus.count / 5 && withoutKeywords < corpus.count / 2)  // 1,158 of 3,012
        #expect(corpus == ArticleGenerator.corpus(count: 3_012, seed: 12, from: "1963-02-01", to: "1963-02-28"))
    }

    @Test func documentsFrom1981OnAreUnchangedByTheArchiveEraBeforeThem() throws {
        // A range across the end of the era: documents of 1980 are in the archive shape, those of
        // 1981 are the generator's, byte for byte what the generator gave before the archive shape
        // existed (pinned from that code).
        let corpus = ArticleGenerator.corpus(count: 400, seed: 9, from: "1980-07-01", to: "1981-06-30")
        let end = try #require(ISODate.instant(of: "1981-01-01"))
        var modern: [UInt8] = []
        var modernCount = 0
        for document in corpus {
            let instant = try #require(ISODate.instant(of: document["pub_date"]?.stringValue ?? ""))
            if instant < end {
                #expect(document["section_name"] == .string("Archives"))
                #expect(document["uri"] == document["_id"])
            } else {
                #expect(document["section_name"] != .string("Archives"))
                JSONWriter.writeCompact(document, into: &modern)
                modern.append(0x0A)
                modernCount += 1
            }
        }
        #expect(modernCount == 198)
        #expect(FNV1a64.hex(FNV1a64.hash(modern)) == "7b05282954254460")
        var generator = ArticleGenerator(seed: 9)
        #expect(corpus.map { $0["headline"]?["main"] } == generator.documents(400).map { $0["headline"]?["main"] })
    }

    @Test func serverDateFilterAgreesWithCorpusDates() async throws {
        let corpus = ArticleGenerator.corpus(count: 120, seed: 21, from: "2018-01-01", to: "2018-12-31")
        let server = try FakeNYTServer(documents: corpus)
        let inMarch = corpus.filter { ($0["pub_date"]?.stringValue ?? "").hasPrefix("2018-03-") }.count
        #expect(inMarch > 0)
        #expect(try await fetch(server, ["begin_date": "20180301", "end_date": "20180331"]).meta("hits") == inMarch)
    }
}

// MARK: - The generator's byte stream
