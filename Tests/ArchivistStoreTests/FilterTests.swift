import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

// Tests of the query model (Filter, Condition, SortKey), its JSON and dictionary-literal parsers,
// its evaluation with MongoDB semantics, and the pieces it rests on (ValueOrder, ISODate,
// TextFolding).
//
// Operator tables are evaluated over the nine NYT-shaped documents below, identified by their
// `_id` ("A" ... "I"); an expectation such as "CF" means exactly documents C and F match.

// MARK: - Fixture documents

fileprivate enum Corpus {
    /// Nine NYT Article Search documents, one per letter.
    ///
    /// Instants of pub_date (UTC): A 2015-07-01T23:59:59, B 2015-07-02T00:00, C 2015-06-30T23:30
    /// (written +05:30 on July 1), D 2015-07-01 (date only), E 2015-07-01T12:00:00.250,
    /// F and I 2019-02-15T05:00 (spelled +0000 and -05:00), G null, H missing.
    static let texts: [String] = [
        #"""
        {"_id": "A",
         "headline": {"main": "Café Société Reopens in Paris", "kicker": "Dining"},
         "abstract": "The bistro on the Left Bank is back.",
         "snippet": "The bistro on the Left Bank is back.",
         "lead_paragraph": "After two years, Café Société is serving again.",
         "section_name": "Food", "news_desk": "Dining",
         "pub_date": "2015-07-01T23:59:59Z",
         "word_count": 879,
         "byline": {"original": "By Jane Doe", "person": [{"firstname": "Jane", "lastname": "Doe", "rank": 1}]},
         "keywords": [{"name": "subject", "value": "Restaurants", "rank": 1},
                      {"name": "glocations", "value": "Paris (France)", "rank": 2}],
         "multimedia": [{"url": "images/2015/07/01/cafe.jpg", "width": 600, "height": 400},
                        {"url": "images/2015/07/01/thumb.jpg", "width": 75, "height": 75}]}
        """#,
        #"""
        {"_id": "B",
         "headline": {"main": "Trump’s Rally Draws Crowds", "kicker": null},
         "abstract": "Supporters cheered “Make America Great Again” in Phoenix.",
         "snippet": "",
         "lead_paragraph": "PHOENIX — Donald J. Trump spoke for an hour.",
         "section_name": "U.S.", "news_desk": "Politics",
         "pub_date": "2015-07-02T00:00:00+0000",
         "word_count": "879",
         "byline": [],
         "keywords": [{"name": "persons", "value": "Trump, Donald J", "rank": 1},
                      {"name": "subject", "value": "Politics", "rank": 2},
                      {"name": "subject", "value": "Presidential Election of 2016", "rank": 3}],
         "multimedia": []}
        """#,
        #"""
        {"_id": "C",
         "headline": {"main": "東京オリンピック 2020 Preview", "kicker": "Olympics"},
         "abstract": null,
         "snippet": "Tokyo prepares for the Games.",
         "section_name": "Sports", "news_desk": "Sports",
         "pub_date": "2015-07-01T05:00:00+05:30",
         "word_count": 1200,
         "keywords": [],
         "multimedia": []}
        """#,
        #"""
        {"_id": "D",
         "headline": {"main": "Élysée Talks Resume", "kicker": null},
         "abstract": "French and German leaders met at the ÉLYSÉE palace.",
         "lead_paragraph": "PARIS —\nTalks resumed on Wednesday.",
         "section_name": "World", "news_desk": "Foreign",
         "pub_date": "2015-07-01",
         "word_count": 0,
         "byline": {"original": null, "person": []},
         "keywords": [{"name": "subject", "value": "Politics", "rank": 1}]}
        """#,
        #"""
        {"_id": "E",
         "headline": {"main": "Markets Rally on Jobs Report"},
         "abstract": "Stocks rose sharply.",
         "section_name": null, "news_desk": "Business",
         "pub_date": "2015-07-01T12:00:00.250Z",
         "word_count": 450,
         "byline": {"original": "By John Roe", "person": [{"firstname": "John", "lastname": "Roe", "rank": 1}]},
         "keywords": [{"name": "subject", "value": "Stocks and Bonds", "rank": 1},
                      {"name": "organizations", "value": "Labor Department (US)"}]}
        """#,
        #"""
        {"_id": "F",
         "headline": {"main": "Knicks Lose Again", "kicker": "Pro Basketball"},
         "abstract": "The Knicks fell to 10-45.",
         "section_name": "Sports", "news_desk": "Sports",
         "pub_date": "2019-02-15T05:00:00+0000",
         "word_count": 879.0,
         "page_numbers": [3, 7, 12],
         "byline": {"original": "By Sopan Deb"},
         "keywords": [{"name": "organizations", "value": "New York Knicks", "rank": 1},
                      {"name": "subject", "value": "Basketball", "rank": 2}]}
        """#,
        #"""
        {"_id": "G", "headline": {"main": "Untitled"}, "pub_date": null}
        """#,
        #"""
        {"_id": "H", "headline": {"main": "Letters", "kicker": null}, "section_name": "Opinion",
         "word_count": null, "keywords": null}
        """#,
        #"""
        {"_id": "I",
         "headline": {"main": "Nets Win at Home"},
         "section_name": "sports", "news_desk": "Sports",
         "pub_date": "2019-02-15T00:00:00-05:00",
         "word_count": 300,
         "page_numbers": [85, 90],
         "byline": {"original": "By Jane Doe"}}
        """#,
    ]

    /// The parsed documents (a text that does not parse becomes `null`, which the fixture test reports).
    static let documents: [JSONValue] = texts.map { (try? JSONParser.parse($0)) ?? .null }

    static let allIDs = "ABCDEFGHI"

    /// The IDs of the documents a filter matches, in fixture order, as one string ("CF").
    static func ids(matching filter: Filter) -> String {
        documents.filter { filter.matches($0, textSearch: StoreSchema.testArticles.textSearch) }.compactMap { $0["_id"]?.stringValue }
            .joined()
    }

    /// Parses a JSON filter and returns the IDs it matches.
    static func ids(matchingJSON text: String) throws -> String {
        ids(matching: try Filter(jsonText: text))
    }
}

@Suite struct FilterTests {
    @Test func fixtureDocumentsParseAndHaveDistinctIDs() {
        #expect(Corpus.documents.count == 9)
        for (index, document) in Corpus.documents.enumerated() {
            #expect(document.isObject, "fixture \(index) does not parse")
        }
        #expect(Corpus.documents.compactMap { $0["_id"]?.stringValue }.joined() == Corpus.allIDs)
    }

    @Test func emptyFilterMatchesEveryDocument() throws {
        #expect(try Corpus.ids(matchingJSON: "{}") == Corpus.allIDs)
        #expect(Corpus.ids(matching: .all) == Corpus.allIDs)
    }
}

// MARK: - Operator semantics over the corpus

extension FilterTests {
    @Suite struct Equality {
        static let cases: [(String, String)] = [
            (#"{"section_name": "Sports"}"#, "CF"),
            (#"{"section_name": {"$eq": "Sports"}}"#, "CF"),
            (#"{"section_name": "sports"}"#, "I"),
            (#"{"_id": "E"}"#, "E"),
            // Numbers by value, never equal to strings.
            (#"{"word_count": 879}"#, "AF"),
            (#"{"word_count": 879.0}"#, "AF"),
            (#"{"word_count": 8.79e2}"#, "AF"),
            (#"{"word_count": {"$eq": 879}}"#, "AF"),
            (#"{"word_count": "879"}"#, "B"),
            (#"{"word_count": {"$eq": "879"}}"#, "B"),
            (#"{"word_count": 0}"#, "D"),
            (#"{"word_count": -0.0}"#, "D"),
            (#"{"word_count": "0"}"#, ""),
            (#"{"word_count": true}"#, ""),
            // null matches null and missing.
            (#"{"section_name": null}"#, "EG"),
            (#"{"word_count": null}"#, "GH"),
            (#"{"pub_date": null}"#, "GH"),
            (#"{"abstract": null}"#, "CGHI"),
            (#"{"abstract": {"$eq": null}}"#, "CGHI"),
            (#"{"headline.kicker": null}"#, "BDEGHI"),
            (#"{"nonexistent.deeply.nested": null}"#, Corpus.allIDs),
            (#"{"nonexistent": "x"}"#, ""),
            // Dotted paths through objects and arrays; numeric components index arrays.
            (#"{"headline.main": "Knicks Lose Again"}"#, "F"),
            (#"{"keywords.value": "Politics"}"#, "BD"),
            (#"{"keywords.name": "subject"}"#, "ABDEF"),
            (#"{"keywords.0.value": "Politics"}"#, "D"),
            (#"{"keywords.1.value": "Politics"}"#, "B"),
            (#"{"multimedia.0.width": 600}"#, "A"),
            (#"{"multimedia.1.width": 600}"#, ""),
            (#"{"page_numbers.2": 12}"#, "F"),
            (#"{"byline.person.lastname": "Doe"}"#, "A"),
            (#"{"byline.original": "By Jane Doe"}"#, "AI"),
            // Whole values: objects, arrays, array elements.
            (#"{"headline": {"main": "Untitled"}}"#, "G"),
            (#"{"headline": {"kicker": null, "main": "Letters"}}"#, "H"),
            (#"{"headline": {"main": "Letters"}}"#, ""),
            (#"{"byline": []}"#, "B"),
            (#"{"page_numbers": 7}"#, "F"),
            (#"{"page_numbers": [3, 7, 12]}"#, "F"),
            (#"{"page_numbers": [3.0, 7, 12e0]}"#, "F"),
            (#"{"page_numbers": [7, 3, 12]}"#, ""),
            (#"{"page_numbers": [3, 7]}"#, ""),
            // Implicit AND between keys.
            (#"{"news_desk": "Sports", "section_name": "Sports"}"#, "CF"),
            (#"{"section_name": "Sports", "word_count": 1200}"#, "C"),
            (#"{"section_name": "Sports", "word_count": "879"}"#, ""),
        ]

        @Test(arguments: cases)
        func equalityMatchesSameTypeByValueAndNullMatchesMissing(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct NotEqual {
        static let cases: [(String, String)] = [
            (#"{"section_name": {"$ne": "Sports"}}"#, "ABDEGHI"),
            (#"{"section_name": {"$ne": null}}"#, "ABCDFHI"),
            (#"{"abstract": {"$ne": null}}"#, "ABDEF"),
            (#"{"word_count": {"$ne": 879}}"#, "BCDEGHI"),
            (#"{"word_count": {"$ne": "879"}}"#, "ACDEFGHI"),
            (#"{"keywords.value": {"$ne": "Politics"}}"#, "ACEFGHI"),
            (#"{"page_numbers": {"$ne": 7}}"#, "ABCDEGHI"),
            (#"{"pub_date": {"$ne": "2015-07-01"}}"#, "BCFGHI"),
            (#"{"pub_date": {"$ne": "2019-02-15T05:00:00Z"}}"#, "ABCDEGH"),
        ]

        @Test(arguments: cases)
        func notEqualIsTheComplementOfEqualityIncludingMissingFields(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct Comparison {
        static let cases: [(String, String)] = [
            // Numbers only compare with numbers.
            (#"{"word_count": {"$gt": 500}}"#, "ACF"),
            (#"{"word_count": {"$gte": 879}}"#, "ACF"),
            (#"{"word_count": {"$gt": 879}}"#, "C"),
            (#"{"word_count": {"$lt": 879}}"#, "DEI"),
            (#"{"word_count": {"$lte": 450}}"#, "DEI"),
            (#"{"word_count": {"$lte": 4.5e2}}"#, "DEI"),
            (#"{"word_count": {"$gte": 300, "$lt": 879}}"#, "EI"),
            (#"{"word_count": {"$gt": -1, "$lt": 1}}"#, "D"),
            // Strings only compare with strings (bytes of UTF-8).
            (#"{"word_count": {"$gt": "500"}}"#, "B"),
            (#"{"word_count": {"$lt": "9"}}"#, "B"),
            (#"{"section_name": {"$gt": "T"}}"#, "BDI"),
            (#"{"headline.main": {"$gte": "M"}}"#, "BCDEGI"),
            (#"{"section_name": {"$gt": 5}}"#, ""),
            (#"{"word_count": {"$gt": true}}"#, ""),
            // null bounds: $gte/$lte null are equality with null, $gt/$lt null match nothing.
            (#"{"word_count": {"$gte": null}}"#, "GH"),
            (#"{"word_count": {"$lte": null}}"#, "GH"),
            (#"{"word_count": {"$gt": null}}"#, ""),
            (#"{"word_count": {"$lt": null}}"#, ""),
            // An array matches when any element does; each condition may use a different element.
            (#"{"page_numbers": {"$gt": 80}}"#, "I"),
            (#"{"page_numbers": {"$lt": 5}}"#, "F"),
            (#"{"page_numbers": {"$gt": 7, "$lt": 12}}"#, "F"),
            (#"{"page_numbers": {"$gt": 12, "$lt": 85}}"#, ""),
            (#"{"keywords.rank": {"$gte": 3}}"#, "B"),
            (#"{"multimedia.width": {"$lt": 100}}"#, "A"),
        ]

        @Test(arguments: cases)
        func comparisonsHoldOnlyWithinOneType(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct Dates {
        static let cases: [(String, String)] = [
            // A date-only value stands for the whole UTC day.
            (#"{"pub_date": "2015-07-01"}"#, "ADE"),
            (#"{"pub_date": {"$eq": "2015-07-01"}}"#, "ADE"),
            (#"{"pub_date": "2015-06-30"}"#, "C"),
            (#"{"pub_date": "2015-07-02"}"#, "B"),
            (#"{"pub_date": "2019-02-15"}"#, "FI"),
            (#"{"pub_date": {"$lte": "2015-07-01"}}"#, "ACDE"),
            (#"{"pub_date": {"$lt": "2015-07-01"}}"#, "C"),
            (#"{"pub_date": {"$gt": "2015-07-01"}}"#, "BFI"),
            (#"{"pub_date": {"$gte": "2015-07-01"}}"#, "ABDEFI"),
            (#"{"pub_date": {"$gte": "2015-07-01", "$lte": "2015-07-01"}}"#, "ADE"),
            (#"{"pub_date": {"$gte": "2015-06-30", "$lt": "2015-07-02"}}"#, "ACDE"),
            (#"{"pub_date": {"$gte": "2019-01-01"}}"#, "FI"),
            // One instant, whatever its spelling.
            (#"{"pub_date": "2019-02-15T05:00:00Z"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T05:00:00+0000"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T05:00:00+00:00"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T00:00:00-05:00"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T10:30:00+05:30"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T05:00:00.000Z"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T05:00Z"}"#, "FI"),
            (#"{"pub_date": "2019-02-15T05:00:01Z"}"#, ""),
            (#"{"pub_date": "2015-06-30T23:30:00Z"}"#, "C"),
            (#"{"pub_date": "2015-07-01T05:00:00+05:30"}"#, "C"),
            (#"{"pub_date": "2015-07-02T00:00:00Z"}"#, "B"),
            (#"{"pub_date": "2015-07-01T23:59:59.000Z"}"#, "A"),
            // Milliseconds count.
            (#"{"pub_date": "2015-07-01T12:00:00.250Z"}"#, "E"),
            (#"{"pub_date": "2015-07-01T12:00:00Z"}"#, ""),
            (#"{"pub_date": {"$gt": "2015-07-01T12:00:00Z"}}"#, "ABEFI"),
            (#"{"pub_date": {"$lt": "2015-07-01T12:00:00.251Z"}}"#, "CDE"),
            // A date-only document value is the start of its day.
            (#"{"pub_date": "2015-07-01T00:00:00Z"}"#, "D"),
            // Ranges with timestamps in any offset.
            (#"{"pub_date": {"$gte": "2015-07-01T23:59:59Z", "$lt": "2015-07-02T00:00:00Z"}}"#, "A"),
            (#"{"pub_date": {"$gte": "2015-07-01T05:00:00+05:30", "$lte": "2015-06-30T23:30:00Z"}}"#, "C"),
            (#"{"pub_date": {"$lt": "2015-07-01T01:00:00+01:00"}}"#, "C"),
            (#"{"pub_date": {"$lte": "2015-07-01T01:00:00+01:00"}}"#, "CD"),
            // $in / $nin with dates.
            (#"{"pub_date": {"$in": ["2015-06-30", "2019-02-15"]}}"#, "CFI"),
            (#"{"pub_date": {"$in": ["2019-02-15T00:00:00-05:00"]}}"#, "FI"),
            (#"{"pub_date": {"$nin": ["2015-07-01"]}}"#, "BCFGHI"),
            // A query string that is not a date compares as text.
            (#"{"pub_date": {"$gt": "2016"}}"#, "FI"),
        ]

        @Test(arguments: cases)
        func dateStringsCompareAsInstantsAndDateOnlyMeansTheWholeUTCDay(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct Membership {
        static let cases: [(String, String)] = [
            (#"{"section_name": {"$in": ["Sports", "World"]}}"#, "CDF"),
            (#"{"section_name": {"$in": [null, "Opinion"]}}"#, "EGH"),
            (#"{"section_name": {"$in": []}}"#, ""),
            (#"{"word_count": {"$in": [879, "0"]}}"#, "AF"),
            (#"{"word_count": {"$in": ["879"]}}"#, "B"),
            (#"{"keywords.value": {"$in": ["Politics", "Basketball"]}}"#, "BDF"),
            (#"{"page_numbers": {"$in": [12, 90]}}"#, "FI"),
            (#"{"byline": {"$in": [[]]}}"#, "B"),
            (#"{"section_name": {"$nin": ["Sports", "World"]}}"#, "ABEGHI"),
            (#"{"section_name": {"$nin": [null]}}"#, "ABCDFHI"),
            (#"{"section_name": {"$nin": []}}"#, Corpus.allIDs),
            (#"{"word_count": {"$nin": [879, 0, 450]}}"#, "BCGHI"),
            (#"{"keywords.value": {"$nin": ["Politics"]}}"#, "ACEFGHI"),
        ]

        @Test(arguments: cases)
        func inMatchesAnyListedValueAndNinNone(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct Existence {
        static let cases: [(String, String)] = [
            (#"{"byline": {"$exists": true}}"#, "ABDEFI"),
            (#"{"byline": {"$exists": false}}"#, "CGH"),
            (#"{"byline": {"$exists": 1}}"#, "ABDEFI"),
            (#"{"byline": {"$exists": 0}}"#, "CGH"),
            (#"{"section_name": {"$exists": true}}"#, "ABCDEFHI"),
            (#"{"abstract": {"$exists": true}}"#, "ABCDEF"),
            (#"{"pub_date": {"$exists": false}}"#, "H"),
            (#"{"byline.person": {"$exists": true}}"#, "ADE"),
            (#"{"keywords.rank": {"$exists": true}}"#, "ABDEF"),
            (#"{"keywords.rank": {"$exists": false}}"#, "CGHI"),
            (#"{"multimedia.1": {"$exists": true}}"#, "A"),
            (#"{"multimedia.0": {"$exists": true}}"#, "A"),
            (#"{"page_numbers.5": {"$exists": true}}"#, ""),
        ]

        @Test(arguments: cases)
        func existsTellsPresentFieldsIncludingNullFromMissingOnes(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct RegularExpressions {
        static let cases: [(String, String)] = [
            (#"{"headline.main": {"$regex": "^Knicks"}}"#, "F"),
            (#"{"section_name": {"$regex": "^sports$"}}"#, "I"),
            (#"{"section_name": {"$regex": "^sports$", "$options": "i"}}"#, "CFI"),
            (#"{"section_name": {"$options": "i", "$regex": "^SPORTS$"}}"#, "CFI"),
            (#"{"keywords.value": {"$regex": "Election"}}"#, "B"),
            (#"{"headline.main": {"$regex": "société", "$options": "i"}}"#, "A"),
            (#"{"headline.main": {"$regex": "SOCIÉTÉ", "$options": "i"}}"#, "A"),
            (#"{"headline.main": {"$regex": "SOCIÉTÉ"}}"#, ""),
            (#"{"headline.main": {"$regex": "東京"}}"#, "C"),
            (#"{"abstract": {"$regex": "^the.*back\\.$", "$options": "i"}}"#, "A"),
            // Only strings match; numbers are not text.
            (#"{"word_count": {"$regex": "^8"}}"#, "B"),
            // m: anchors at lines; s: dot matches newlines; x: white space ignored.
            (#"{"lead_paragraph": {"$regex": "^Talks"}}"#, ""),
            (#"{"lead_paragraph": {"$regex": "^Talks", "$options": "m"}}"#, "D"),
            (#"{"lead_paragraph": {"$regex": "PARIS.+Talks"}}"#, ""),
            (#"{"lead_paragraph": {"$regex": "PARIS.+Talks", "$options": "s"}}"#, "D"),
            (#"{"section_name": {"$regex": "^ Spo rts $", "$options": "x"}}"#, "CF"),
            (#"{"section_name": {"$regex": ""}}"#, "ABCDFHI"),
        ]

        @Test(arguments: cases)
        func regexMatchesStringValuesWithItsOptions(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct Arrays {
        static let cases: [(String, String)] = [
            // $size
            (#"{"keywords": {"$size": 0}}"#, "C"),
            (#"{"keywords": {"$size": 1}}"#, "D"),
            (#"{"keywords": {"$size": 2}}"#, "AEF"),
            (#"{"keywords": {"$size": 3}}"#, "B"),
            (#"{"byline": {"$size": 0}}"#, "B"),
            (#"{"multimedia": {"$size": 0}}"#, "BC"),
            (#"{"page_numbers": {"$size": 2}}"#, "I"),
            (#"{"section_name": {"$size": 0}}"#, ""),
            // $all
            (#"{"keywords.value": {"$all": ["Politics", "Trump, Donald J"]}}"#, "B"),
            (#"{"keywords.name": {"$all": ["subject"]}}"#, "ABDEF"),
            (#"{"keywords.name": {"$all": ["subject", "organizations"]}}"#, "EF"),
            (#"{"page_numbers": {"$all": [3, 12]}}"#, "F"),
            (#"{"page_numbers": {"$all": [12.0, 3]}}"#, "F"),
            (#"{"page_numbers": {"$all": [3, 90]}}"#, ""),
            (#"{"page_numbers": {"$all": []}}"#, ""),
            (#"{"section_name": {"$all": ["Sports"]}}"#, "CF"),
            // $elemMatch with a filter on each element as a document.
            (#"{"keywords": {"$elemMatch": {"name": "subject", "value": "Politics"}}}"#, "BD"),
            (#"{"keywords": {"$elemMatch": {"name": "persons", "value": "Politics"}}}"#, ""),
            (#"{"keywords.name": "persons", "keywords.value": "Politics"}"#, "B"),
            (#"{"keywords": {"$elemMatch": {"rank": {"$gte": 2}, "name": "subject"}}}"#, "BF"),
            (#"{"keywords": {"$elemMatch": {"rank": {"$exists": false}}}}"#, "E"),
            (#"{"keywords": {"$elemMatch": {"$or": [{"value": "Basketball"}, {"value": "Restaurants"}]}}}"#, "AF"),
            (#"{"multimedia": {"$elemMatch": {"width": {"$gte": 500}, "height": {"$lt": 450}}}}"#, "A"),
            (#"{"multimedia": {"$elemMatch": {"width": {"$gte": 500}, "height": {"$lt": 100}}}}"#, ""),
            (#"{"multimedia.width": {"$gte": 500}, "multimedia.height": {"$lt": 100}}"#, "A"),
            // $elemMatch with conditions on each element itself.
            (#"{"page_numbers": {"$elemMatch": {"$gt": 7, "$lt": 12}}}"#, ""),
            (#"{"page_numbers": {"$elemMatch": {"$gte": 80, "$lt": 88}}}"#, "I"),
            (#"{"page_numbers": {"$elemMatch": {"$in": [7, 90]}}}"#, "FI"),
            (#"{"section_name": {"$elemMatch": {"$eq": "Sports"}}}"#, ""),
            (#"{"keywords": {"$elemMatch": {"value": "Politics"}}, "section_name": "World"}"#, "D"),
        ]

        @Test(arguments: cases)
        func sizeAllAndElemMatchLookInsideArrays(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct Logic {
        static let cases: [(String, String)] = [
            // $not: the inner conditions do not hold (missing fields match).
            (#"{"word_count": {"$not": {"$gt": 500}}}"#, "BDEGHI"),
            (#"{"section_name": {"$not": {"$regex": "^S"}}}"#, "ABDEGHI"),
            (#"{"section_name": {"$not": {"$regex": "^s", "$options": "i"}}}"#, "ABDEGH"),
            (#"{"pub_date": {"$not": {"$lte": "2015-07-01"}}}"#, "BFGHI"),
            (#"{"keywords.value": {"$not": {"$in": ["Politics"]}}}"#, "ACEFGHI"),
            (#"{"keywords": {"$not": {"$size": 2}}}"#, "BCDGHI"),
            (#"{"word_count": {"$not": {"$gte": 300, "$lte": 879}}}"#, "BCDGH"),
            // $and / $or / $nor
            (#"{"$and": [{"section_name": "Sports"}, {"word_count": {"$gt": 1000}}]}"#, "C"),
            (#"{"$or": [{"section_name": "World"}, {"word_count": "879"}]}"#, "BD"),
            (#"{"$nor": [{"section_name": "Sports"}, {"section_name": null}]}"#, "ABDHI"),
            (#"{"$or": [{"pub_date": null}, {"byline": {"$size": 0}}]}"#, "BGH"),
            (#"{"$and": [{"$or": [{"section_name": "Sports"}, {"section_name": "sports"}]}, {"pub_date": {"$gte": "2019-01-01"}}]}"#, "FI"),
            (#"{"section_name": "Sports", "$or": [{"word_count": 879}, {"word_count": 1200}]}"#, "CF"),
            (#"{"$nor": [{"$or": [{"word_count": 879}, {"word_count": "879"}]}]}"#, "CDEGHI"),
            (#"{"$and": [{"word_count": {"$gte": 300}}, {"word_count": {"$lte": 450}}]}"#, "EI"),
        ]

        @Test(arguments: cases)
        func logicalOperatorsCombineFiltersAndNotNegatesConditions(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }
    }

    @Suite struct FullText {
        static let cases: [(String, String)] = [
            (#"{"$text": {"$search": "cafe societe"}}"#, "A"),
            (#"{"$text": {"$search": "Café Société"}}"#, "A"),
            (#"{"$text": {"$search": "CAFÉ"}}"#, "A"),
            (#"{"$text": {"$search": "bistro paris"}}"#, "A"),
            (#"{"$text": {"$search": "paris"}}"#, "AD"),
            (#"{"$text": {"$search": "politics"}}"#, "BD"),
            (#"{"$text": {"$search": "trump"}}"#, "B"),
            (#"{"$text": {"$search": "trumps"}}"#, "B"),
            (#"{"$text": {"$search": "trump's"}}"#, "B"),
            (#"{"$text": {"$search": "Trump’s"}}"#, "B"),
            (#"{"$text": {"$search": "make america great"}}"#, "B"),
            (#"{"$text": {"$search": "“Make America”"}}"#, "B"),
            (#"{"$text": {"$search": "elysee"}}"#, "D"),
            (#"{"$text": {"$search": "ÉLYSÉE palace"}}"#, "D"),
            (#"{"$text": {"$search": "東京オリンピック"}}"#, "C"),
            (#"{"$text": {"$search": "2020 preview"}}"#, "C"),
            (#"{"$text": {"$search": "tokyo"}}"#, "C"),
            (#"{"$text": {"$search": "stocks"}}"#, "E"),
            (#"{"$text": {"$search": "knicks"}}"#, "F"),
            // Whole words only, every term, only the searched fields.
            (#"{"$text": {"$search": "knick"}}"#, ""),
            (#"{"$text": {"$search": "knicks paris"}}"#, ""),
            (#"{"$text": {"$search": "dining"}}"#, ""),
            (#"{"$text": {"$search": "jane"}}"#, ""),
            (#"{"$text": {"$search": "   "}}"#, ""),
            (#"{"$text": {"$search": ""}}"#, ""),
            (#"{"$text": {"$search": "knicks"}, "section_name": "Sports"}"#, "F"),
            (#"{"$text": {"$search": "politics"}, "section_name": "World"}"#, "D"),
        ]

        @Test(arguments: cases)
        func textSearchNeedsEveryFoldedTermAsAWordOfTheSearchedFields(filter: String, expected: String) throws {
            #expect(try Corpus.ids(matchingJSON: filter) == expected, "\(filter)")
        }

        @Test func textFilterHandsTheFoldedTermsToTheTextMatcher() {
            var received: [[String]] = []
            let matched = Filter.text("Café “Société” Trump’s").matches(
                resolve: { _ in [] },
                textMatches: { terms in
                    received.append(terms)
                    return true
                })
            #expect(matched)
            #expect(received == [["cafe", "societe", "trumps"]])
        }
    }

    @Suite struct Contains {
        static let cases: [(String, String, String)] = [
            ("headline.main", "societe", "A"),
            ("headline.main", "CAFÉ SOC", "A"),
            ("headline.main", "Cafe\u{301}", "A"),
            ("abstract", "élysée", "D"),
            ("abstract", "ELYSEE PALACE", "D"),
            ("keywords.value", "donald", "B"),
            ("headline.main", "オリンピ", "C"),
            ("headline.main", "’s rally", "B"),
            ("abstract", "make america", "B"),
            ("section_name", "SPORT", "CFI"),
            ("word_count", "87", "B"),
            ("headline.main", "", Corpus.allIDs),
            ("headline.main", "zzz", ""),
            ("nonexistent", "", ""),
        ]

        @Test(arguments: cases)
        func containsIsACaseAndAccentInsensitiveSubstringTest(path: String, needle: String, expected: String) {
            #expect(Corpus.ids(matching: .field(path, [.contains(needle)])) == expected)
        }

        @Test func containsInTheDictionaryLiteralIsTheTildeOperator() {
            let filter: Filter = ["headline.main ~": "SOCIÉTÉ"]
            #expect(filter == .field("headline.main", [.contains("SOCIÉTÉ")]))
            #expect(Corpus.ids(matching: filter) == "A")
        }
    }
}

// MARK: - Parsing JSON filters

extension FilterTests {
    @Suite struct Parsing {
        static let cases: [(String, Filter)] = [
            ("{}", .all),
            (#"{"section_name": "Sports"}"#, .field("section_name", [.eq(.string("Sports"))])),
            (#"{"word_count": {"$gte": 100, "$lt": 500}}"#, .field("word_count", [.gte(.number("100")), .lt(.number("500"))])),
            (#"{"a": 1, "b": 2}"#, .and([.field("a", [.eq(.number("1"))]), .field("b", [.eq(.number("2"))])])),
            (#"{"$or": [{"a": 1}, {"b": null}]}"#, .or([.field("a", [.eq(.number("1"))]), .field("b", [.eq(.null)])])),
            (#"{"$and": [{"a": 1}]}"#, .and([.field("a", [.eq(.number("1"))])])),
            (#"{"$nor": [{"a": true}]}"#, .nor([.field("a", [.eq(.bool(true))])])),
            (#"{"a": {"$ne": null}}"#, .field("a", [.ne(.null)])),
            (#"{"a": {"$in": [1, "1"]}}"#, .field("a", [.in([.number("1"), .string("1")])])),
            (#"{"a": {"$nin": []}}"#, .field("a", [.nin([])])),
            (#"{"a": {"$all": ["x"]}}"#, .field("a", [.all([.string("x")])])),
            (#"{"a": {"$exists": 0}}"#, .field("a", [.exists(false)])),
            (#"{"a": {"$exists": true}}"#, .field("a", [.exists(true)])),
            (#"{"a": {"$size": 2}}"#, .field("a", [.size(2)])),
            (#"{"a": {"$regex": "^x", "$options": "i"}}"#, .field("a", [.regex("^x", options: "i")])),
            (#"{"a": {"$regex": "^x"}}"#, .field("a", [.regex("^x", options: "")])),
            (#"{"a": {"$not": {"$size": 2}}}"#, .field("a", [.not([.size(2)])])),
            (
                #"{"keywords": {"$elemMatch": {"name": "subject"}}}"#,
                .field("keywords", [.elemMatch(.filter(.field("name", [.eq(.string("subject"))])))])
            ),
            (
                #"{"p": {"$elemMatch": {"$gte": 80, "$lt": 85}}}"#,
                .field("p", [.elemMatch(.conditions([.gte(.number("80")), .lt(.number("85"))]))])
            ),
            (
                #"{"k": {"$elemMatch": {"$or": [{"v": 1}]}}}"#,
                .field("k", [.elemMatch(.filter(.or([.field("v", [.eq(.number("1"))])])))])
            ),
            (#"{"$text": {"$search": "Café"}}"#, .text("Café")),
            (#"{"headline": {"main": "X"}}"#, .field("headline", [.eq(.object([JSONMember(key: "main", value: .string("X"))]))])),
            (#"{"a": {}}"#, .field("a", [.eq(.object([]))])),
            (
                #"{"a": [1, {"$gt": 1}]}"#,
                .field("a", [.eq(.array([.number("1"), .object([JSONMember(key: "$gt", value: .number("1"))])]))])
            ),
        ]

        @Test(arguments: cases)
        func jsonFilterDocumentsParseIntoTheQueryModel(text: String, expected: Filter) throws {
            #expect(try Filter(jsonText: text) == expected)
            #expect(try Filter(json: JSONParser.parse(text)) == expected)
        }

        static let errors: [(String, [String])] = [
            (#"{"section_name": {"$bogus": 1}}"#, ["$bogus", "section_name"]),
            (#"{"a": {"$not": {"$bogus": 1}}}"#, ["$bogus", "'a'"]),
            (#"{"$bogus": [{"a": 1}]}"#, ["$bogus"]),
            (#"{"section_name": {"$in": "Sports"}}"#, ["$in", "section_name", "array", "string"]),
            (#"{"news_desk": {"$nin": {"a": 1}}}"#, ["$nin", "news_desk", "array"]),
            (#"{"keywords.value": {"$all": "Politics"}}"#, ["$all", "keywords.value", "array"]),
            (#"{"headline.main": {"$regex": "(unclosed"}}"#, ["$regex", "headline.main"]),
            (#"{"headline.main": {"$regex": "[a-"}}"#, ["$regex", "headline.main"]),
            (#"{"headline.main": {"$regex": 5}}"#, ["$regex", "headline.main"]),
            (#"{"headline.main": {"$regex": "x", "$options": 1}}"#, ["$options", "headline.main"]),
            (#"{"headline.main": {"$options": "i"}}"#, ["$options", "headline.main"]),
            (#"{"keywords": {"$size": -1}}"#, ["$size", "keywords"]),
            (#"{"keywords": {"$size": 1.5}}"#, ["$size", "keywords"]),
            (#"{"keywords": {"$size": "2"}}"#, ["$size", "keywords"]),
            (#"{"word_count": {"$not": 5}}"#, ["$not", "word_count"]),
            (#"{"word_count": {"$not": "x"}}"#, ["$not", "word_count"]),
            (#"{"word_count": {"$not": {"gt": 5}}}"#, ["$not", "word_count"]),
            (#"{"word_count": {"$not": {}}}"#, ["$not", "word_count"]),
            (#"{"byline": {"$exists": "yes"}}"#, ["$exists", "byline"]),
            (#"{"keywords": {"$elemMatch": [1]}}"#, ["$elemMatch", "keywords"]),
            // An error inside $elemMatch names the full dotted path.
            (#"{"keywords": {"$elemMatch": {"value": {"$in": "Politics"}}}}"#, ["$in", "keywords.value"]),
            (#"{"$or": []}"#, ["$or"]),
            (#"{"$and": {"a": 1}}"#, ["$and"]),
            (#"{"$nor": [5]}"#, ["$nor[0]"]),
            (#"{"$or": [{"a": {"$in": 1}}]}"#, ["$in", "'a'"]),
            (#"{"$text": {"$search": 5}}"#, ["$text"]),
            (#"{"$text": "cafe"}"#, ["$text"]),
            (#"{"": 1}"#, ["empty field name"]),
            ("[1, 2]", ["expected an object", "array"]),
            (#""cafe""#, ["expected an object", "string"]),
        ]

        @Test(arguments: errors)
        func invalidFiltersThrowInvalidFilterNamingTheOperatorAndPath(text: String, fragments: [String]) {
            let error = #expect(throws: StoreError.self) { _ = try Filter(jsonText: text) }
            guard case .invalidFilter(let message)? = error else {
                Issue.record("expected invalidFilter, got \(String(describing: error))")
                return
            }
            for fragment in fragments {
                #expect(message.contains(fragment), "message '\(message)' lacks '\(fragment)'")
            }
            #expect(error?.errorDescription?.hasPrefix("filter: ") == true)
        }

        static let malformedJSON: [String] = [
            "",
            "not json",
            #"{"a": }"#,
            #"{"a": 1"#,
            #"{'a': 1}"#,
            #"{"a": 1,}"#,
            #"{"a": 1} trailing"#,
        ]

        @Test(arguments: malformedJSON)
        func malformedJSONTextThrowsInvalidFilterWithAPosition(text: String) {
            let error = #expect(throws: StoreError.self) { _ = try Filter(jsonText: text) }
            guard case .invalidFilter(let message)? = error else {
                Issue.record("expected invalidFilter, got \(String(describing: error))")
                return
            }
            #expect(message.contains("column"), "\(message)")
        }

        @Test func pathsListEveryFieldTheFilterReadsIncludingElemMatchSubpaths() throws {
            let filter = try Filter(
                jsonText: #"""
                    {"_id": "A", "keywords": {"$elemMatch": {"name": "subject", "rank": {"$gt": 1}}},
                     "$or": [{"headline.main": "x"}, {"pub_date": null}], "$text": {"$search": "cafe"}}
                    """#)
            #expect(filter.paths == ["_id", "keywords", "keywords.name", "keywords.rank", "headline.main", "pub_date"])
            #expect(filter.hasTextSearch)
            #expect(try Filter(jsonText: #"{"$nor": [{"a": 1}, {"$text": {"$search": "x"}}]}"#).hasTextSearch)
            #expect(try !Filter(jsonText: #"{"a": {"$elemMatch": {"b": 1}}}"#).hasTextSearch)
            #expect(Filter.all.paths.isEmpty)
        }

        @Test func notIsNorOfOneAndMatchesTheComplement() throws {
            let inner = try Filter(jsonText: #"{"section_name": "Sports"}"#)
            #expect(Filter.not(inner) == .nor([inner]))
            #expect(Corpus.ids(matching: .not(inner)) == "ABDEGHI")
        }
    }
}

// MARK: - The dictionary literal

extension FilterTests {
    @Suite struct DictionaryLiteral {
        static let cases: [(Filter, String, String)] = [
            (
                ["pub_date >=": "2015-07-01", "section_name": "Sports"],
                #"{"pub_date": {"$gte": "2015-07-01"}, "section_name": "Sports"}"#, "F"
            ),
            (["section_name": "Sports"], #"{"section_name": "Sports"}"#, "CF"),
            (["section_name =": "Sports"], #"{"section_name": {"$eq": "Sports"}}"#, "CF"),
            (["word_count >": 500], #"{"word_count": {"$gt": 500}}"#, "ACF"),
            (["word_count <": 450], #"{"word_count": {"$lt": 450}}"#, "DI"),
            (["word_count <=": 450], #"{"word_count": {"$lte": 450}}"#, "DEI"),
            (["word_count": 879], #"{"word_count": 879}"#, "AF"),
            (["word_count": "879"], #"{"word_count": "879"}"#, "B"),
            (["section_name !=": "Sports"], #"{"section_name": {"$ne": "Sports"}}"#, "ABDEGHI"),
            (["section_name <>": nil], #"{"section_name": {"$ne": null}}"#, "ABCDFHI"),
            (["abstract": nil], #"{"abstract": null}"#, "CGHI"),
            (["news_desk in": ["Sports", "Foreign"]], #"{"news_desk": {"$in": ["Sports", "Foreign"]}}"#, "CDFI"),
            (["news_desk in": "Sports"], #"{"news_desk": {"$in": ["Sports"]}}"#, "CFI"),
            (["byline exists": true], #"{"byline": {"$exists": true}}"#, "ABDEFI"),
            (["byline exists": false], #"{"byline": {"$exists": false}}"#, "CGH"),
            (["pub_date": "2015-07-01"], #"{"pub_date": "2015-07-01"}"#, "ADE"),
            (["pub_date <": "2015-07-01"], #"{"pub_date": {"$lt": "2015-07-01"}}"#, "C"),
            (["pub_date >": "2015-07-01"], #"{"pub_date": {"$gt": "2015-07-01"}}"#, "BFI"),
            (["pub_date <=": "2015-07-01"], #"{"pub_date": {"$lte": "2015-07-01"}}"#, "ACDE"),
            (["pub_date  >=": "2019-02-15T00:00:00-05:00"], #"{"pub_date": {"$gte": "2019-02-15T05:00:00Z"}}"#, "FI"),
            (
                ["keywords.value": "Politics", "section_name": "World"],
                #"{"keywords.value": "Politics", "section_name": "World"}"#, "D"
            ),
            (["headline.main ~": "SOCIETE"], #"{"headline.main": {"$regex": "soci[eé]t[eé]", "$options": "i"}}"#, "A"),
        ]

        @Test(arguments: cases)
        func dictionaryLiteralMatchesLikeTheEquivalentJSONFilter(literal: Filter, json: String, expected: String) throws {
            let parsed = try Filter(jsonText: json)
            #expect(Corpus.ids(matching: literal) == Corpus.ids(matching: parsed), "\(json)")
            #expect(Corpus.ids(matching: literal) == expected, "\(json)")
        }

        @Test func dictionaryLiteralBuildsTheSameModelAsTheJSONDocument() throws {
            let literal: Filter = ["pub_date >=": "2015-07-01", "section_name": "Sports"]
            #expect(
                literal
                    == .and([
                        .field("pub_date", [.gte(.string("2015-07-01"))]),
                        .field("section_name", [.eq(.string("Sports"))]),
                    ]))
            #expect(literal == (try Filter(jsonText: #"{"pub_date": {"$gte": "2015-07-01"}, "section_name": "Sports"}"#)))
            let single: Filter = ["word_count >": 500]
            #expect(single == .field("word_count", [.gt(.number("500"))]))
            let membership: Filter = ["news_desk in": "Sports"]
            #expect(membership == .field("news_desk", [.in([.string("Sports")])]))
        }
    }
}

// MARK: - Values: equality, comparison, sort order

extension FilterTests {
    @Suite struct Values {
        static let equalities: [(JSONValue, JSONValue, Bool)] = [
            (1, 1.0, true),
            (.number("1e3"), 1000, true),
            (.number("-0"), 0, true),
            (879, "879", false),
            ("879", 879, false),
            (true, 1, false),
            (false, nil, false),
            (nil, nil, true),
            ("Café", "café", false),
            ([1, 2], [1.0, 2], true),
            ([1, 2], [2, 1], false),
            (["a": 1], ["a": 1.0], true),
            (["a": 1], ["a": 1, "b": nil], false),
            ("2019-02-15T05:00:00+0000", "2019-02-15T05:00:00Z", true),
            ("2019-02-15T05:00:00+0000", "2019-02-15T00:00:00-05:00", true),
            ("2019-02-15T10:30:00+05:30", "2019-02-15T05:00:00.000Z", true),
            ("2015-07-01T23:59:59Z", "2015-07-01", true),
            ("2015-07-01T00:00:00Z", "2015-07-01", true),
            ("2015-07-02T00:00:00Z", "2015-07-01", false),
            ("2015-06-30T23:59:59.999Z", "2015-07-01", false),
            ("2015-07-01T05:00:00+05:30", "2015-07-01", false),
        ]

        @Test(arguments: equalities)
        func equalsComparesWithinATypeNumbersByValueAndDatesAsInstants(candidate: JSONValue, query: JSONValue, expected: Bool) {
            #expect(ValueOrder.equals(candidate, query) == expected)
        }

        static let comparisons: [(JSONValue, JSONValue, Int?)] = [
            (5, 6, -1),
            (.number("1e1"), 9, 1),
            (2.5, .number("2.50"), 0),
            (5, "6", nil),
            ("5", 6, nil),
            (nil, 1, nil),
            (true, false, 1),
            ("abc", "abd", -1),
            ("b", "a", 1),
            ([1], [1], nil),
            (["a": 1], ["a": 1], nil),
            ("2015-07-01T23:59:59Z", "2015-07-01", 0),
            ("2015-07-02T00:00:00+0000", "2015-07-01", 1),
            ("2015-07-01T05:00:00+05:30", "2015-07-01", -1),
            ("2019-02-15T00:00:00-05:00", "2019-02-15T05:00:00Z", 0),
            ("2019-02-15T05:00:00.001Z", "2019-02-15T05:00:00Z", 1),
        ]

        @Test(arguments: comparisons)
        func compareOrdersSameTypeValuesAndRefusesMixedTypes(candidate: JSONValue, query: JSONValue, expected: Int?) {
            let order = ValueOrder.compare(candidate, query)
            #expect(order.map { $0.signum() } == expected)
        }

        /// Every kind of value, in MongoDB's ascending sort order (no two equal).
        static let sortedMixed: [JSONValue] = [
            nil,
            -5, 0.5, 2, .number("1e1"), 1200,
            "2015-07-01T05:00:00+05:30", "2015-07-01", "2015-07-01T12:00:00.250Z", "2015-07-02T00:00:00Z",
            "2019-02-15T05:00:00+0000",
            "", "879", "Apple", "Zebra", "apple", "Élysée", "東京",
            [:], ["a": 1], ["a": 2], ["a": 2, "b": 0], ["b": 0],
            [], [1], [1, 2], [2], ["a"], [["a": 1]],
            false, true,
        ]

        @Test(arguments: [UInt64(1), 2, 3, 42, 2015])
        func sortingAShuffledMixedListGivesMongoDBTypeOrder(seed: UInt64) {
            var generator = SplitMix64(state: seed)
            let shuffled = Self.sortedMixed.shuffled(using: &generator)
            let sorted = shuffled.sorted { ValueOrder.compareSortable($0, $1) < 0 }
            #expect(sorted == Self.sortedMixed)
        }

        @Test func compareSortableIsAStrictOrderOnTheMixedList() {
            let values = Self.sortedMixed
            for i in values.indices {
                #expect(ValueOrder.compareSortable(values[i], values[i]) == 0)
                for j in values.indices where i < j {
                    #expect(ValueOrder.compareSortable(values[i], values[j]) < 0, "\(values[i]) < \(values[j])")
                    #expect(ValueOrder.compareSortable(values[j], values[i]) > 0, "\(values[j]) > \(values[i])")
                }
            }
        }

        @Test func missingSortsWithNullBeforeNumbers() {
            #expect(ValueOrder.compareSortable(nil, .null) == 0)
            #expect(ValueOrder.compareSortable(nil, .number("-1e300")) < 0)
            #expect(ValueOrder.compareSortable(.null, .number("-1e300")) < 0)
            #expect(ValueOrder.compareSortable(1, 1.0) == 0)
            #expect(ValueOrder.sortCompare(nil, .null, descending: false) == 0)
            #expect(ValueOrder.sortCompare(nil, .null, descending: true) == 0)
        }

        @Test func dateStringsSortByInstantWhateverTheirSpelling() {
            let spelled: [JSONValue] = ["2019-02-15T05:00:01Z", "2019-02-15T10:30:00+05:30", "2019-02-14T23:00:00-05:00", "2019-02-15"]
            let sorted = spelled.sorted { ValueOrder.compareSortable($0, $1) < 0 }
            #expect(sorted == ["2019-02-15", "2019-02-14T23:00:00-05:00", "2019-02-15T10:30:00+05:30", "2019-02-15T05:00:01Z"])
        }

        @Test func anArraySortsByItsLeastElementAscendingAndItsGreatestDescending() {
            let values: [JSONValue] = [3, [1, 5], [2], [4, "b"], 4.5]
            let ascending = values.sorted { ValueOrder.sortCompare($0, $1, descending: false) < 0 }
            #expect(ascending == [[1, 5], [2], 3, [4, "b"], 4.5])
            // Descending: larger first; [1, 5] stands for 5 and [4, "b"] for "b" (strings after numbers).
            let descending = values.sorted { ValueOrder.sortCompare($0, $1, descending: true) > 0 }
            #expect(descending == [[4, "b"], [1, 5], 4.5, 3, [2]])
        }

        @Test func anEmptyArraySortsBeforeNullAndMissingInBothDirections() {
            // MongoDB: "a comparison of an empty array considers the empty array as less than null or
            // a missing field".
            #expect(ValueOrder.sortCompare([], nil, descending: false) < 0)
            #expect(ValueOrder.sortCompare([], .null, descending: false) < 0)
            #expect(ValueOrder.sortCompare([], nil, descending: true) < 0)
            #expect(ValueOrder.sortCompare([], .null, descending: true) < 0)
        }
    }
}

// MARK: - Sort keys

extension FilterTests {
    @Suite struct SortKeys {
        static let cases: [(String, String?, Bool)] = [
            ("pub_date", "pub_date", false),
            ("pub_date:desc", "pub_date", true),
            ("pub_date:asc", "pub_date", false),
            ("pub_date:DESC", "pub_date", true),
            ("pub_date:Asc", "pub_date", false),
            ("headline.main:desc", "headline.main", true),
            ("keywords.0.value", "keywords.0.value", false),
            ("", nil, false),
            (":desc", nil, false),
            (":asc", nil, false),
            ("pub_date:", nil, false),
            ("pub_date:descending", nil, false),
            ("pub_date:up", nil, false),
        ]

        @Test(arguments: cases)
        func sortKeyParsesFieldAndOptionalDirection(text: String, path: String?, descending: Bool) {
            let key = SortKey(parsing: text)
            if let path {
                #expect(key == SortKey(path, descending: descending))
            } else {
                #expect(key == nil)
            }
        }

        @Test func sortKeyIsAscendingByDefault() {
            #expect(SortKey("pub_date").isDescending == false)
            #expect(Query().sort.isEmpty)
            #expect(Query().filter == .all)
            #expect(Query().skip == 0)
            #expect(Query().limit == nil)
        }
    }
}

// MARK: - ISO dates

extension FilterTests {
    @Suite struct ISODates {
        static let day: Int64 = 86_400_000

        static let valid: [(String, Int64, Int64)] = [
            ("1970-01-01", 0, day),
            ("2015-07-01", 1_435_708_800_000, 1_435_708_800_000 + day),
            ("2016-02-29", 1_456_704_000_000, 1_456_704_000_000 + day),
            ("2000-02-29", 951_868_800_000 - day, 951_868_800_000),
            ("1969-12-31", -day, 0),
            ("1900-01-01", -2_208_988_800_000, -2_208_988_800_000 + day),
            ("2019-02-15T05:00:00Z", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00:00z", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00:00+0000", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00:00+00:00", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00:00-00:00", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T00:00:00-05:00", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T00:00:00-0500", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T10:30:00+05:30", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T10:30:00.000+0530", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00:00", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00Z", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15 05:00:00Z", 1_550_206_800_000, 1_550_206_800_001),
            ("2019-02-15T05:00:00.123Z", 1_550_206_800_123, 1_550_206_800_124),
            ("2019-02-15T05:00:00.5Z", 1_550_206_800_500, 1_550_206_800_501),
            ("2019-02-15T05:00:00,250Z", 1_550_206_800_250, 1_550_206_800_251),
            ("2019-02-15T05:00:00.123456Z", 1_550_206_800_123, 1_550_206_800_124),
            ("2015-07-01T23:59:59Z", 1_435_795_199_000, 1_435_795_199_001),
            ("2015-07-01T05:00:00+05:30", 1_435_707_000_000, 1_435_707_000_001),
        ]

        @Test(arguments: valid)
        func isoDatesParseToAnIntervalInMilliseconds(text: String, start: Int64, end: Int64) {
            let interval = ISODate.interval(of: text)
            #expect(interval?.start == start)
            #expect(interval?.end == end)
            #expect(ISODate.instant(of: text) == start)
        }

        static let invalid: [String] = [
            "", "2015", "2015-07", "20150701", "2015-7-1", "2015/07/01", "July 1, 2015", "879",
            "Café Société", "2015-07-01x", "2015-07-01Z", "2015-07-01T", "2015-07-01T12",
            "2015-13-01", "2015-00-10", "2015-07-00", "2015-07-32",
            "2015-02-29", "2015-02-30", "2015-04-31", "2100-02-29",
            "2015-07-01T24:00:00Z", "2015-07-01T12:60:00Z", "2015-07-01T12:00:00.Z", "2015-07-01T12:00:00+5:30",
            "2015-07-01T12:00:00 UTC", "2015-07-01T12:00:00Zjunk", "2015-07-01T12:00:00+05:3",
            "2015-07-01T1:00:00Z", "2015-07-01T12:0:00Z", " 2015-07-01",
        ]

        @Test(arguments: invalid)
        func stringsThatAreNotISODatesHaveNoInterval(text: String) {
            #expect(ISODate.interval(of: text) == nil)
            #expect(ISODate.instant(of: text) == nil)
        }

        @Test func aDateOnlyValueIsAWholeUTCDayAndATimestampOneMillisecond() throws {
            let day = try #require(ISODate.interval(of: "2015-07-01"))
            #expect(day.end - day.start == Self.day)
            let lastSecond = try #require(ISODate.instant(of: "2015-07-01T23:59:59.999Z"))
            #expect(lastSecond >= day.start && lastSecond < day.end)
            let nextDay = try #require(ISODate.instant(of: "2015-07-02T00:00:00Z"))
            #expect(nextDay == day.end)
            let stamp = try #require(ISODate.interval(of: "2015-07-01T10:00:00Z"))
            #expect(stamp.end - stamp.start == 1)
        }
    }
}

// MARK: - Text folding

extension FilterTests {
    @Suite struct Folding {
        static let folds: [(String, String)] = [
            ("", ""),
            ("already lower", "already lower"),
            ("MiXeD ASCII 123", "mixed ascii 123"),
            ("Café Société", "cafe societe"),
            ("ÉLYSÉE", "elysee"),
            ("Zürich", "zurich"),
            ("São Paulo", "sao paulo"),
            ("Ñandú", "nandu"),
            ("Cafe\u{301}", "cafe"),
            ("Trump’s", "trump’s"),
            ("“Quoted”", "“quoted”"),
            ("東京オリンピック", "東京オリンピック"),
        ]

        @Test(arguments: folds)
        func foldLowerCasesAndStripsAccents(text: String, expected: String) {
            let folded = TextFolding.fold(text)
            #expect(folded == expected)
            #expect(Array(folded.unicodeScalars) == Array(expected.unicodeScalars))
        }

        static let tokenCases: [(String, [String])] = [
            ("", []),
            ("   ", []),
            ("Café Société Reopens in Paris", ["cafe", "societe", "reopens", "in", "paris"]),
            ("Trump’s Rally", ["trumps", "rally"]),
            ("Trump's", ["trumps"]),
            ("players' union", ["players", "union"]),
            ("'quoted'", ["quoted"]),
            ("“Make America Great Again”", ["make", "america", "great", "again"]),
            ("東京オリンピック 2020 Preview", ["東京オリンピック", "2020", "preview"]),
            ("PHOENIX — Donald J. Trump", ["phoenix", "donald", "j", "trump"]),
            ("The Knicks fell to 10-45.", ["the", "knicks", "fell", "to", "10", "45"]),
            ("e-mail", ["e", "mail"]),
            ("ÉLYSÉE,palace", ["elysee", "palace"]),
            ("Paris (France)", ["paris", "france"]),
        ]

        @Test(arguments: tokenCases)
        func tokensAreFoldedRunsOfLettersAndDigits(text: String, expected: [String]) {
            #expect(TextFolding.tokens(text) == expected)
        }

        /// The tokenizer as first written, a Unicode scalar at a time: the byte-wise one must split
        /// and fold every text as it does.
        static func scalarTokens(_ text: String) -> [String] {
            var tokens: [String] = []
            var current = ""
            for scalar in text.unicodeScalars {
                if scalar.value < 0x80 {
                    let byte = UInt8(scalar.value)
                    switch byte {
                    case 48...57, 97...122: current.unicodeScalars.append(scalar)
                    case 65...90: current.unicodeScalars.append(Unicode.Scalar(byte + 32))
                    case 39 where !current.isEmpty: continue
                    default: if !current.isEmpty { tokens.append(current); current = "" }
                    }
                    continue
                }
                switch ScalarFolding.fold(scalar) {
                case .word(let folded): current += folded
                case .apostrophe where !current.isEmpty: continue
                default: if !current.isEmpty { tokens.append(current); current = "" }
                }
            }
            if !current.isEmpty { tokens.append(current) }
            return tokens
        }

        @Test func tokensOfMixedTextAreThoseOfTheScalarTokenizer() {
            let pieces = [
                "a", "Z", "9", " ", "'", "’", "ʼ", "-", ".", "é", "É", "ß", "ﬁ", "Ⅻ", "東", "オ", "😀", "\u{301}", "ı", "İ", "Ω", "ñ",
                "\u{A0}", "“",
                "\n", "Ａ", "١",
            ]
            var random = SplitMix64(state: 5)
            for _ in 0..<3_000 {
                let text = (0..<Int.random(in: 0...24, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
                #expect(TextFolding.tokens(text) == Self.scalarTokens(text), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            for (text, _) in Self.tokenCases { #expect(TextFolding.tokens(text) == Self.scalarTokens(text)) }
        }
    }
}
