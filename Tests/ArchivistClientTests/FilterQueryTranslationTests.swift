import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct FilterQueryTranslationTests {
    @Test(arguments: [
        ("news_desk:Sports", Filter.field("news_desk", [.eq(.string("Sports"))])),
        ("news_desk:\"Sports\"", .field("news_desk", [.eq(.string("Sports"))])),
        ("  news_desk : \"Sports\"  ", .field("news_desk", [.eq(.string("Sports"))])),
        ("headline.main:\"Big News Today\"", .field("headline.main", [.eq(.string("Big News Today"))])),
        ("news_desk:(\"Sports\")", .field("news_desk", [.eq(.string("Sports"))])),
        ("news_desk:(\"Sports\" \"Foreign\")", .field("news_desk", [.in([.string("Sports"), .string("Foreign")])])),
        ("type_of_material:( \"News\"  Op-Ed )", .field("type_of_material", [.in([.string("News"), .string("Op-Ed")])])),
        (
            "section_name:\"World\" AND news_desk:Foreign",
            .and([.field("section_name", [.eq(.string("World"))]), .field("news_desk", [.eq(.string("Foreign"))])])
        ),
        (
            "a:1  AND  b:(\"x\" \"y\") AND c_2:\"z z\"",
            .and([
                .field("a", [.eq(.string("1"))]), .field("b", [.in([.string("x"), .string("y")])]),
                .field("c_2", [.eq(.string("z z"))]),
            ])
        ),
        ("source:\"The New York Times\"", .field("source", [.eq(.string("The New York Times"))])),
    ])
    func simpleFiltersTranslate(fq: String, expected: Filter) {
        #expect(FilterQueryTranslation.filter(for: fq) == expected)
    }

    static func keyword(_ name: String, _ condition: Condition) -> Filter {
        .field("keywords", [.elemMatch(.filter(.and([.field("name", [.eq(.string(name))]), .field("value", [condition])])))])
    }

    @Test(arguments: [
        ("glocations:\"Café, Zürich\"", keyword("glocations", .eq(.string("Café, Zürich")))),
        (
            "subject:(\"Elections\" \"Refugees\")",
            .or([keyword("subject", .eq(.string("Elections"))), keyword("subject", .eq(.string("Refugees")))])
        ),
        ("persons.contains:trump", keyword("persons", .contains("trump"))),
        ("headline:\"Big News\"", .field("headline.main", [.contains("Big News")])),
        (
            "headline.search:(rally crowd)",
            .or([.field("headline.main", [.contains("rally")]), .field("headline.main", [.contains("crowd")])])
        ),
        ("kicker:\"Op-Ed\"", .field("headline.kicker", [.eq(.string("Op-Ed"))])),
        ("pub_year:2016", .field("pub_date", [.gte(.string("2016-01-01")), .lte(.string("2016-12-31"))])),
        ("section_name.contains:sport", .field("section_name", [.contains("sport")])),
        (
            "news_desk:Sports AND subject:Baseball",
            .and([.field("news_desk", [.eq(.string("Sports"))]), keyword("subject", .eq(.string("Baseball")))])
        ),
    ])
    func apiFieldsAreReadWhereAStoredDocumentKeepsThem(fq: String, expected: Filter) {
        #expect(FilterQueryTranslation.filter(for: fq) == expected)
    }

    @Test(arguments: [
        "body:\"climate\"", "body.search:climate", "day_of_week:Monday", "secpg:A1", "pub_year:16", "pub_year:+201", "pub_year:２０１６",
        "pub_year:(2016 last)", "pub_year.contains:2016", ".contains:x",
    ])
    func fieldsWhoseValuesAreNotStoredAreNotTranslated(fq: String) {
        #expect(FilterQueryTranslation.filter(for: fq) == nil, "\(String(describing: FilterQueryTranslation.filter(for: fq)))")
    }

    @Test func translatedFiltersMatchTheDocumentsTheAPIWouldReturn() throws {
        let document = try JSONParser.parse(
            Array(
                """
                {"_id": "a", "headline": {"main": "Trump’s Rally Draws Crowds in Zürich", "kicker": null},
                 "keywords": [{"name": "subject", "value": "Presidential Election of 2016", "rank": 1},
                              {"name": "persons", "value": "Trump, Donald J", "rank": "2"},
                              {"name": "glocations", "value": "Zurich (Switzerland)", "rank": 3}],
                 "pub_date": "2016-11-08T23:59:59+0000", "section_name": "U.S.", "news_desk": "National"}
                """.utf8))
        let matching = [
            "subject:\"Presidential Election of 2016\"", "persons.contains:(donald hillary)", "glocations.contains:zurich",
            "headline:\"rally draws\"", "headline:zurich", "pub_year:2016", "pub_year:(2015 2016)",
            "section_name:\"U.S.\" AND news_desk:National",
        ]
        let failing = [
            "subject:\"Trump, Donald J\"", "persons:Trump", "glocations:\"Zurich\"", "headline:\"crowds draw\"",
            "pub_year:2017", "kicker:Analysis", "section_name:U.S. AND news_desk:Foreign",
        ]
        for fq in matching {
            let filter = try #require(FilterQueryTranslation.filter(for: fq), "\(fq)")
            #expect(filter.matches(document, textSearch: StoreSchema.nyt.textSearch), "\(fq) → \(filter)")
        }
        for fq in failing {
            let filter = try #require(FilterQueryTranslation.filter(for: fq), "\(fq)")
            #expect(!filter.matches(document, textSearch: StoreSchema.nyt.textSearch), "\(fq) → \(filter)")
        }
    }

    @Test(arguments: [
        "",
        "   ",
        "Sports",
        ":Sports",
        "news_desk:",
        "news_desk:()",
        "news_desk:(\"Sports\"",
        "news_desk:\"Sports",
        "news-desk:Sports",
        "news desk:Sports",
        "pub_date:[2020-01-01 TO 2020-12-31]",
        "pub_date:{2020-01-01 TO 2020-12-31}",
        "headline:Trump*",
        "news_desk:(Spo* Foreign)",
        "news_desk:Sports OR section_name:World",
        "news_desk:Sports section_name:World",
        "news_desk:Sports and section_name:World",
        "news_desk:Sports AND",
        "news_desk:Sports &&  section_name:World",
        "NOT news_desk:Sports",
        "-news_desk:Sports",
        "(news_desk:Sports)",
    ])
    func otherSyntaxIsNotTranslated(fq: String) {
        #expect(FilterQueryTranslation.filter(for: fq) == nil)
    }

    @Test(arguments: [
        "news_desk:(\"Sports\" AND \"Foreign\")",
        "headline:Tr?mp",
        "headline:trump~",
        "news_desk:Sports^2",
    ])
    func booleanOperatorsInsideParenthesesAndOtherWildcardsAreNotTranslated(fq: String) {
        #expect(FilterQueryTranslation.filter(for: fq) == nil, "\(String(describing: FilterQueryTranslation.filter(for: fq)))")
    }

    @Test func orInsideParenthesesMeansAnyOf() {
        let result = FilterQueryTranslation.filter(for: "news_desk:(\"Sports\" OR \"Foreign\")")
        #expect(result == .field("news_desk", [.in([.string("Sports"), .string("Foreign")])]), "\(String(describing: result))")
    }
}
