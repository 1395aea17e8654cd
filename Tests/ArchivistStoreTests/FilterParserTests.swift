import ArchivistBase
import Testing

@testable import ArchivistStore

// Tests of the infix filter language (`FilterParser.parse`) and of `FilterParser.parseAny`, which
// picks between it and a MongoDB filter document. Accepted texts are compared with the `Filter`
// value they must compile to; rejected texts with the whole message the user sees
// (`filter: column N: expected ...`).

// MARK: - Shorthands for expected filters

fileprivate func eq(_ path: String, _ value: JSONValue) -> Filter { .field(path, [.eq(value)]) }
fileprivate func str(_ text: String) -> JSONValue { .string(text) }
fileprivate func num(_ literal: String) -> JSONValue { .number(literal) }

@Suite struct FilterParserTests {
    // MARK: Operators

    static let operators: [(String, Filter)] = [
        ("section_name = Sports", eq("section_name", str("Sports"))),
        ("section_name == Sports", eq("section_name", str("Sports"))),
        ("section_name=Sports", eq("section_name", str("Sports"))),
        ("section_name != Sports", .field("section_name", [.ne(str("Sports"))])),
        ("section_name <> Sports", .field("section_name", [.ne(str("Sports"))])),
        ("section_name!=Sports", .field("section_name", [.ne(str("Sports"))])),
        ("word_count < 100", .field("word_count", [.lt(num("100"))])),
        ("word_count <= 100", .field("word_count", [.lte(num("100"))])),
        ("word_count > 100", .field("word_count", [.gt(num("100"))])),
        ("word_count >= 100", .field("word_count", [.gte(num("100"))])),
        ("word_count>=100", .field("word_count", [.gte(num("100"))])),
        ("word_count<100", .field("word_count", [.lt(num("100"))])),
        ("headline.main ~ preview", .field("headline.main", [.contains("preview")])),
        ("headline.main~preview", .field("headline.main", [.contains("preview")])),
        (#"headline.main ~ "New York""#, .field("headline.main", [.contains("New York")])),
        ("headline.main ~ ''", .field("headline.main", [.contains("")])),
        ("news_desk in (Sports, Foreign)", .field("news_desk", [.in([str("Sports"), str("Foreign")])])),
        ("news_desk in (Sports)", .field("news_desk", [.in([str("Sports")])])),
        ("news_desk in(Sports,Foreign)", .field("news_desk", [.in([str("Sports"), str("Foreign")])])),
        ("news_desk IN (Sports, Foreign)", .field("news_desk", [.in([str("Sports"), str("Foreign")])])),
        (
            #"word_count in (1, 2.5, "3", null, true)"#,
            .field("word_count", [.in([num("1"), num("2.5"), str("3"), .null, .bool(true)])])
        ),
        (#"news_desk not in (Sports, "Foreign Desk")"#, .field("news_desk", [.nin([str("Sports"), str("Foreign Desk")])])),
        ("news_desk NOT IN (Sports)", .field("news_desk", [.nin([str("Sports")])])),
        ("byline.original exists", .field("byline.original", [.exists(true)])),
        ("byline.original EXISTS", .field("byline.original", [.exists(true)])),
        ("byline.original missing", .field("byline.original", [.exists(false)])),
        ("byline.original Missing", .field("byline.original", [.exists(false)])),
        ("_id = 4fd2a0b78eb7c8105d88fd8e", eq("_id", str("4fd2a0b78eb7c8105d88fd8e"))),
        ("keywords.0.value = Politics", eq("keywords.0.value", str("Politics"))),
    ]

    @Test(arguments: operators)
    func eachOperatorCompilesToItsCondition(text: String, expected: Filter) throws {
        #expect(try FilterParser.parse(text) == expected, "\(text)")
    }

    // MARK: Logic, precedence and parentheses

    static let a = eq("a", num("1")), b = eq("b", num("2")), c = eq("c", num("3"))

    static let logic: [(String, Filter)] = [
        ("a = 1 and b = 2", .and([a, b])),
        ("a = 1 AND b = 2", .and([a, b])),
        ("a = 1 or b = 2", .or([a, b])),
        ("a = 1 Or b = 2", .or([a, b])),
        ("not a = 1", .nor([a])),
        ("NOT a = 1", .nor([a])),
        ("not not a = 1", .nor([.nor([a])])),
        ("a = 1 and b = 2 and c = 3", .and([a, b, c])),
        ("a = 1 or b = 2 or c = 3", .or([a, b, c])),
        // and binds tighter than or, not tighter than and.
        ("a = 1 or b = 2 and c = 3", .or([a, .and([b, c])])),
        ("a = 1 and b = 2 or c = 3", .or([.and([a, b]), c])),
        ("not a = 1 and b = 2", .and([.nor([a]), b])),
        ("not a = 1 or b = 2", .or([.nor([a]), b])),
        ("a = 1 and not b = 2 or c = 3", .or([.and([a, .nor([b])]), c])),
        ("a = 1 or not b = 2 and c = 3", .or([a, .and([.nor([b]), c])])),
        // Parentheses override it.
        ("(a = 1 or b = 2) and c = 3", .and([.or([a, b]), c])),
        ("a = 1 and (b = 2 or c = 3)", .and([a, .or([b, c])])),
        ("not (a = 1 or b = 2)", .nor([.or([a, b])])),
        ("not (a = 1) and b = 2", .and([.nor([a]), b])),
        ("((a = 1))", a),
        ("(a = 1)", a),
        ("( ( a = 1 ) or ( b = 2 ) )", .or([a, b])),
        ("(a = 1 and (b = 2 or (c = 3)))", .and([a, .or([b, c])])),
        // Empty text (or only white space) matches everything.
        ("", .all),
        ("   ", .all),
        ("\t\n", .all),
    ]

    @Test(arguments: logic)
    func notBindsTighterThanAndWhichBindsTighterThanOr(text: String, expected: Filter) throws {
        #expect(try FilterParser.parse(text) == expected, "\(text)")
    }

    // MARK: Values

    static let values: [(String, Filter)] = [
        // Bare numbers are numbers, keeping their literal text.
        ("word_count = 879", eq("word_count", num("879"))),
        ("word_count = -12.5", eq("word_count", num("-12.5"))),
        ("word_count = 1e3", eq("word_count", num("1e3"))),
        ("word_count = 1E-3", eq("word_count", num("1E-3"))),
        ("word_count = 0", eq("word_count", num("0"))),
        ("word_count = -0", eq("word_count", num("-0"))),
        ("word_count > -5", .field("word_count", [.gt(num("-5"))])),
        // What is not a JSON number stays a string.
        ("word_count = 007", eq("word_count", str("007"))),
        ("word_count = +5", eq("word_count", str("+5"))),
        ("word_count = .5", eq("word_count", str(".5"))),
        ("word_count = 12abc", eq("word_count", str("12abc"))),
        // Quoted numbers are strings.
        (#"word_count = "879""#, eq("word_count", str("879"))),
        ("word_count = '879'", eq("word_count", str("879"))),
        // true, false and null in any case.
        ("flag = true", eq("flag", .bool(true))),
        ("flag = FALSE", eq("flag", .bool(false))),
        ("flag = True", eq("flag", .bool(true))),
        ("kicker = null", eq("kicker", .null)),
        ("kicker = NULL", eq("kicker", .null)),
        ("kicker != null", .field("kicker", [.ne(.null)])),
        (#"kicker = "null""#, eq("kicker", str("null"))),
        (#"flag = "true""#, eq("flag", str("true"))),
        // Dates and timestamps stay strings, whatever their spelling.
        ("pub_date >= 2015-07-01", .field("pub_date", [.gte(str("2015-07-01"))])),
        ("pub_date < 2019-02-15T05:00:00Z", .field("pub_date", [.lt(str("2019-02-15T05:00:00Z"))])),
        ("pub_date = 2019-02-15T05:00:00+0000", eq("pub_date", str("2019-02-15T05:00:00+0000"))),
        ("pub_date <= 2019-02-15T05:00:00.123+05:30", .field("pub_date", [.lte(str("2019-02-15T05:00:00.123+05:30"))])),
        ("pub_date > 2019-02-15T05:00", .field("pub_date", [.gt(str("2019-02-15T05:00"))])),
        ("pub_date = 2015", eq("pub_date", num("2015"))),
        // Bare words keep dots, dashes, slashes, colons and non-ASCII letters.
        ("section_name = U.S.", eq("section_name", str("U.S."))),
        ("web_url = https://www.nytimes.com/2019/a.html", eq("web_url", str("https://www.nytimes.com/2019/a.html"))),
        ("section_name = Zürich", eq("section_name", str("Zürich"))),
        ("headline.main ~ 東京", .field("headline.main", [.contains("東京")])),
        // A keyword in value position is a value.
        ("news_desk = and", eq("news_desk", str("and"))),
    ]

    @Test(arguments: values)
    func bareValuesAreNumbersBooleansNullOrStrings(text: String, expected: Filter) throws {
        #expect(try FilterParser.parse(text) == expected, "\(text)")
    }

    // MARK: Quoted values

    static let quoted: [(String, Filter)] = [
        (#"headline.main = "Slow to Show""#, eq("headline.main", str("Slow to Show"))),
        ("headline.main = 'Slow to Show'", eq("headline.main", str("Slow to Show"))),
        (#"headline.main = """#, eq("headline.main", str(""))),
        ("headline.main = ''", eq("headline.main", str(""))),
        // Doubled quotes stand for themselves, as in SQL.
        ("byline.original = 'it''s'", eq("byline.original", str("it's"))),
        (#"headline.main = "say ""hi""""#, eq("headline.main", str(#"say "hi""#))),
        (#"headline.main = """""#, eq("headline.main", str("\""))),
        ("headline.main = ''''", eq("headline.main", str("'"))),
        // The other quote kind needs no escape.
        (#"headline.main = "it's""#, eq("headline.main", str("it's"))),
        (#"headline.main = 'say "hi"'"#, eq("headline.main", str(#"say "hi""#))),
        // Backslash escapes: \n and \t, any other character stands for itself.
        (#"headline.main = "a\"b""#, eq("headline.main", str(#"a"b"#))),
        (#"headline.main = 'a\'b'"#, eq("headline.main", str("a'b"))),
        (#"headline.main = "back\\slash""#, eq("headline.main", str(#"back\slash"#))),
        (#"headline.main = "tab\there""#, eq("headline.main", str("tab\there"))),
        (#"headline.main = "line\nbreak""#, eq("headline.main", str("line\nbreak"))),
        (#"headline.main = "\x\y""#, eq("headline.main", str("xy"))),
        // Operators, parentheses, commas and keywords inside quotes are text.
        (#"headline.main = "a = (b, c) and not d""#, eq("headline.main", str("a = (b, c) and not d"))),
        (#"headline.main = "  padded  ""#, eq("headline.main", str("  padded  "))),
        (#"news_desk in ("Sports, Too", 'Foreign')"#, .field("news_desk", [.in([str("Sports, Too"), str("Foreign")])])),
        ("headline.main = 'Café Société'", eq("headline.main", str("Café Société"))),
    ]

    @Test(arguments: quoted)
    func quotedValuesTakeBothQuoteKindsDoubledQuotesAndBackslashEscapes(text: String, expected: Filter) throws {
        #expect(try FilterParser.parse(text) == expected, "\(text)")
    }

    // MARK: Full-text search

    static let phrases: [(String, Filter)] = [
        (#""climate change""#, .text("climate change")),
        ("'jury'", .text("jury")),
        ("'it''s'", .text("it's")),
        // A doubled quote of the other kind is two characters.
        (#""it''s""#, .text("it''s")),
        (#""Café “Société”""#, .text("Café “Société”")),
        (#""climate" and section_name = Science"#, .and([.text("climate"), eq("section_name", str("Science"))])),
        (#"section_name = Science and "climate change""#, .and([eq("section_name", str("Science")), .text("climate change")])),
        (#"not "preview""#, .nor([.text("preview")])),
        (#""a" or "b""#, .or([.text("a"), .text("b")])),
        (
            #"byline.original exists and "climate change""#,
            .and([.field("byline.original", [.exists(true)]), .text("climate change")])
        ),
        (#"("x" or "y") and z = 1"#, .and([.or([.text("x"), .text("y")]), eq("z", num("1"))])),
    ]

    @Test(arguments: phrases)
    func aQuotedPhraseOnItsOwnIsAFullTextSearch(text: String, expected: Filter) throws {
        #expect(try FilterParser.parse(text) == expected, "\(text)")
    }

    // MARK: Depth

    @Test func nestingIsRefusedPast512LevelsInsteadOfOverflowingTheStack() throws {
        let deepest = String(repeating: "not ", count: FilterParser.maximumDepth) + "a = 1"
        #expect(throws: Never.self) { try FilterParser.parse(deepest) }
        let parentheses =
            String(repeating: "(", count: FilterParser.maximumDepth) + "a = 1" + String(repeating: ")", count: FilterParser.maximumDepth)
        #expect(throws: Never.self) { try FilterParser.parse(parentheses) }
        for hostile in [
            String(repeating: "not ", count: 100_000) + "a = 1",
            String(repeating: "(", count: 50_000) + "a = 1" + String(repeating: ")", count: 50_000),
            String(repeating: "not (", count: 30_000),
        ] {
            #expect {
                try FilterParser.parse(hostile)
            } throws: { error in
                (error as? StoreError)?.errorDescription?.contains("nested deeper than 512 levels of 'not' and parentheses") == true
            }
        }
        // The 513th not, at column 4 x 512 + 1.
        #expect(throws: StoreError.invalidFilter("column 2049: nested deeper than 512 levels of 'not' and parentheses")) {
            try FilterParser.parse(String(repeating: "not ", count: 513) + "a = 1")
        }
    }

    // MARK: Bare words

    static let bareWords: [(String, Filter)] = [
        ("Sports", .text("Sports")),
        ("climate change", .text("climate change")),
        ("knicks lopez", .text("knicks lopez")),
        ("section_name is Sports", .text("section_name is Sports")),
        ("climate change and section_name = Science", .and([.text("climate change"), eq("section_name", str("Science"))])),
        ("section_name = Sports and Foreign", .and([eq("section_name", str("Sports")), .text("Foreign")])),
        ("not preview", .nor([.text("preview")])),
        ("knicks or nets", .or([.text("knicks"), .text("nets")])),
        ("(knicks or nets) and word_count > 100", .and([.or([.text("knicks"), .text("nets")]), .field("word_count", [.gt(num("100"))])])),
        // A word that an operator (or exists, missing, in, not in) follows is still a field.
        ("byline exists", .field("byline", [.exists(true)])),
        ("byline missing", .field("byline", [.exists(false)])),
        ("news_desk not in (Sports)", .field("news_desk", [.nin([str("Sports")])])),
        ("news_desk in (Sports)", .field("news_desk", [.in([str("Sports")])])),
    ]

    @Test(arguments: bareWords)
    func bareWordsThatNoOperatorFollowsAreAFullTextSearch(text: String, expected: Filter) throws {
        #expect(try FilterParser.parse(text) == expected, "\(text)")
    }

    @Test func theExampleOfTheDocumentationCompiles() throws {
        let filter = try FilterParser.parse("section_name = Sports and pub_date >= 2015-07-01 and not headline.main ~ \"preview\"")
        #expect(
            filter
                == .and([
                    eq("section_name", str("Sports")), .field("pub_date", [.gte(str("2015-07-01"))]),
                    .nor([.field("headline.main", [.contains("preview")])]),
                ]))
        #expect(
            try FilterParser.parse("news_desk in (Sports, Foreign) or word_count > 1000")
                == .or([.field("news_desk", [.in([str("Sports"), str("Foreign")])]), .field("word_count", [.gt(num("1000"))])]))
    }

    @Test func anInfixFilterMatchesLikeItsJSONDocument() throws {
        let pairs: [(String, String)] = [
            (
                "section_name = Sports and word_count >= 100",
                #"{"$and": [{"section_name": "Sports"}, {"word_count": {"$gte": 100}}]}"#
            ),
            (
                "news_desk in (Sports, Foreign) or not byline.original exists",
                #"{"$or": [{"news_desk": {"$in": ["Sports", "Foreign"]}}, {"$nor": [{"byline.original": {"$exists": true}}]}]}"#
            ),
            (#""climate change""#, #"{"$text": {"$search": "climate change"}}"#),
            ("word_count != null", #"{"word_count": {"$ne": null}}"#),
            ("pub_date missing", #"{"pub_date": {"$exists": false}}"#),
            ("keywords.value not in (Politics, 5)", #"{"keywords.value": {"$nin": ["Politics", 5]}}"#),
        ]
        for (infix, document) in pairs {
            #expect(try FilterParser.parse(infix) == Filter(jsonText: document), "\(infix)")
        }
    }

    // MARK: Errors

    static let errors: [(String, String)] = [
        // A missing value, at the end or before something that is not a value.
        ("section_name >= ", "filter: column 17: expected a value after '>='"),
        ("section_name >=", "filter: column 16: expected a value after '>='"),
        ("section_name =", "filter: column 15: expected a value after '='"),
        ("section_name = (Sports)", "filter: column 16: expected a value after '=', found '('"),
        ("(section_name =)", "filter: column 16: expected a value after '=', found ')'"),
        ("word_count > = 5", "filter: column 14: expected a value after '>', found '='"),
        ("word_count =< 5", "filter: column 13: expected a value after '=', found '<'"),
        // Lists.
        ("news_desk in Sports", "filter: column 14: expected '(' after 'in'"),
        ("news_desk in", "filter: column 13: expected '(' after 'in'"),
        ("news_desk in ()", "filter: column 15: expected a value after '(', found ')'"),
        ("news_desk in (Sports,)", "filter: column 22: expected a value after ',', found ')'"),
        ("news_desk in (Sports Foreign)", "filter: column 22: expected ',' or ')', found 'Foreign'"),
        ("news_desk in (Sports, Foreign", "filter: column 30: expected ',' or ')' to close the list at column 14"),
        ("news_desk in (Sports,", "filter: column 22: expected a value after ','"),
        ("news_desk not Sports", "filter: column 11: expected 'not in (...)' after 'news_desk'"),
        ("news_desk not", "filter: column 11: expected 'not in (...)' after 'news_desk'"),
        // Parentheses.
        ("(section_name = Sports", "filter: column 23: expected ')' to close the '(' at column 1"),
        ("a = 1 and (b = 2 or (c = 3)", "filter: column 28: expected ')' to close the '(' at column 11"),
        ("(a = 1 b = 2)", "filter: column 8: expected ')' to close the '(' at column 1"),
        ("()", "filter: column 2: expected a field name or a quoted phrase, found ')'"),
        ("a = 1)", "filter: column 6: expected 'and', 'or' or the end, found ')'"),
        // Unknown operators.
        ("section_name ! Sports", "filter: column 14: expected '!=' ('!' alone is not an operator)"),
        ("section_name !Sports", "filter: column 14: expected '!=' ('!' alone is not an operator)"),
        // Bare words end where something else than a word follows.
        ("section_name (Sports)", "filter: column 14: expected 'and', 'or' or the end, found '('"),
        (#"section_name "Sports""#, "filter: column 14: expected 'and', 'or' or the end, found \"Sports\""),
        // Missing conditions and trailing words.
        ("section_name = Sports and", "filter: column 26: expected a condition such as 'field = value' or a quoted phrase"),
        ("section_name = Sports or ", "filter: column 26: expected a condition such as 'field = value' or a quoted phrase"),
        ("not", "filter: column 4: expected a condition such as 'field = value' or a quoted phrase"),
        ("section_name = Sports Foreign", "filter: column 23: expected 'and', 'or' or the end, found 'Foreign'"),
        ("byline exists Sports", "filter: column 15: expected 'and', 'or' or the end, found 'Sports'"),
        (#""a" "b""#, "filter: column 5: expected 'and', 'or' or the end, found \"b\""),
        ("= Sports", "filter: column 1: expected a field name or a quoted phrase, found '='"),
        ("and a = 1", "filter: column 1: expected a field name or a quoted phrase, found 'and'"),
        ("a = 1 and or b = 2", "filter: column 11: expected a field name or a quoted phrase, found 'or'"),
        ("in = 1", "filter: column 1: expected a field name or a quoted phrase, found 'in'"),
        (", a = 1", "filter: column 1: expected a field name or a quoted phrase, found ','"),
        // Unterminated strings are reported at their opening quote.
        (#"section_name = "Sports"#, #"filter: column 16: expected a closing " for the string that starts here"#),
        ("section_name = 'Sports", "filter: column 16: expected a closing ' for the string that starts here"),
        ("section_name = 'it''s", "filter: column 16: expected a closing ' for the string that starts here"),
        (#"section_name = "abc\""#, #"filter: column 16: expected a closing " for the string that starts here"#),
        (#"a = 1 and "climate change"#, #"filter: column 11: expected a closing " for the string that starts here"#),
        (#"section_name = "Sports" and 'x"#, "filter: column 29: expected a closing ' for the string that starts here"),
        // '~' needs text.
        ("headline.main ~ 123", "filter: column 15: expected text to look for after '~', found 123"),
        ("headline.main ~ null", "filter: column 15: expected text to look for after '~', found null"),
        ("headline.main ~ true", "filter: column 15: expected text to look for after '~', found true"),
        // Columns count characters, not bytes.
        ("headline.main = Café Société", "filter: column 22: expected 'and', 'or' or the end, found 'Société'"),
        ("section_name = \"東京\" x", "filter: column 21: expected 'and', 'or' or the end, found 'x'"),
        ("x = \"東京\" and y = ", "filter: column 18: expected a value after '='"),
    ]

    @Test(arguments: errors)
    func syntaxErrorsNameTheColumnAndWhatWasExpected(text: String, message: String) {
        let error = #expect(throws: StoreError.self) { _ = try FilterParser.parse(text) }
        #expect(error?.errorDescription == message, "\(text)")
        if case .invalidFilter? = error {} else { Issue.record("expected invalidFilter for \(text), got \(String(describing: error))") }
    }

    // MARK: parseAny

    static let documents: [String] = [
        #"{"section_name": "Sports"}"#,
        #"  {"section_name": "Sports", "pub_date": {"$gte": "2015-07-01"}}"#,
        "\t\n{\"$or\": [{\"a\": 1}, {\"b\": null}]}",
        #"{"$text": {"$search": "climate change"}}"#,
        "{}",
    ]

    @Test(arguments: documents)
    func parseAnyReadsTextStartingWithABraceAsAFilterDocument(text: String) throws {
        #expect(try FilterParser.parseAny(text) == Filter(jsonText: text))
    }

    @Test func parseAnyReadsEverythingElseAsTheInfixLanguage() throws {
        #expect(try FilterParser.parseAny("section_name = Sports") == eq("section_name", str("Sports")))
        #expect(try FilterParser.parseAny(#""climate change""#) == .text("climate change"))
        #expect(try FilterParser.parseAny("") == .all)
        #expect(try FilterParser.parseAny("a = {") == eq("a", str("{")))
        // A brace later on does not make it JSON.
        #expect(throws: StoreError.self) { _ = try FilterParser.parse("x = 1 {") }
        #expect(throws: StoreError.self) { _ = try FilterParser.parseAny("x = 1 {") }
    }

    @Test func parseAnyReportsJSONErrorsWithAColumn() {
        let error = #expect(throws: StoreError.self) { _ = try FilterParser.parseAny(#"{"section_name": }"#) }
        #expect(error?.errorDescription?.hasPrefix("filter: column 18: ") == true, "\(String(describing: error?.errorDescription))")
        let operatorError = #expect(throws: StoreError.self) { _ = try FilterParser.parseAny(#"{"a": {"$bogus": 1}}"#) }
        #expect(operatorError?.errorDescription?.contains("$bogus") == true)
    }

    @Test(arguments: ["\r\n", " \r\n\t", "\r"])
    func parseAnySkipsAnyLeadingWhiteSpaceBeforeTheBrace(space: String) throws {
        // A filter read from a file written on Windows starts with CR LF.
        let text = space + "{\"section_name\": \"Sports\"}"
        #expect(try FilterParser.parseAny(text) == eq("section_name", str("Sports")))
    }
}
