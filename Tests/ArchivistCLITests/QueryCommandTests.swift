import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// End-to-end tests of the query commands (`find`, `count`, `facet`, `index`, `export FILTER`,
/// `remove --where`) through the built `archivist` binary, on a small folder of hand-made articles.
@Suite("archivist query commands")
struct QueryCommandTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// Seven articles: three Sports (one undated), two World, one Science, one Opinion.
    static let articles: [String] = [
        #"{"_id":"a1","pub_date":"2015-07-01T10:00:00Z","section_name":"Sports","news_desk":"Sports","headline":{"main":"Knicks Lose Again"},"word_count":879,"keywords":[{"value":"Basketball"},{"value":"New York Knicks"}],"subsection_name":"Pro Basketball","byline":{"original":"By Ben Brooks"},"abstract":"The Knicks lost."}"#,
        #"{"_id":"a2","pub_date":"2015-07-02","section_name":"Sports","news_desk":"Sports","headline":{"main":"Yankees Win, Finally"},"word_count":450,"keywords":[{"value":"Baseball"},{"value":"New York Yankees"}],"subsection_name":"Baseball"}"#,
        #"{"_id":"b1","pub_date":"2019-02-15T05:00:00+0000","section_name":"World","news_desk":"Foreign","headline":{"main":"Climate Change Talks Resume"},"word_count":1200,"keywords":[{"value":"Global Warming"}],"abstract":"Negotiators on climate change met again."}"#,
        #"{"_id":"b2","pub_date":"2019-02-16T00:00:00Z","section_name":"World","news_desk":"Foreign","headline":{"main":"Café Society in Zürich"},"word_count":"300","keywords":[{"value":"Zürich (Switzerland)"}]}"#,
        #"{"_id":"c1","pub_date":"2020-03-01T12:00:00Z","section_name":"Science","news_desk":"Science","headline":{"main":"Rare Beetles, Climate Change and You"},"word_count":2000,"keywords":[{"value":"Global Warming"},{"value":"Insects"}],"subsection_name":"Climate"}"#,
        #"{"_id":"c2","pub_date":"2021-01-01","section_name":"Opinion","news_desk":"OpEd","headline":{"main":"A Letter, With \"Quotes\""},"word_count":99}"#,
        #"{"_id":"d1","section_name":"Sports","headline":{"main":"Undated Sports Brief"},"word_count":120}"#,
    ]

    /// The articles by `_id`, as stored.
    static let byIdentifier: [String: JSONValue] = byID(articles.map { try! json($0) })  // the literals above parse

    /// The compact line `find`, `export` and jsonl print for an article.
    static func line(_ id: String) -> String {
        JSONWriter.compactString(byIdentifier[id]!) + "\n"
    }

    /// Imports the articles.
    func seed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = sandbox.root + "/articles.jsonl"
        try sandbox.write(Self.articles.joined(separator: "\n") + "\n", to: file)
        let result = try sandbox.run(["import", file])
        try #require(result.status == 0, "import failed: \(result)", sourceLocation: sourceLocation)
    }

    /// The `_id` of each JSON line a run printed.
    func ids(_ result: CLIResult) throws -> [String] {
        try result.jsonLines().map { try #require($0["_id"]?.stringValue, "no _id in \($0)") }
    }

    /// Runs and requires exit 0 and an empty stderr.
    func ok(
        _ arguments: [String], environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        let result = try sandbox.run(arguments, environment: environment)
        #expect(result.status == 0, "archivist \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        #expect(
            result.stderrText == "", "archivist \(arguments.joined(separator: " ")) wrote on stderr: \(result.stderrText)",
            sourceLocation: sourceLocation)
        return result
    }

    /// The stderr line saying a field outside the projection made the command read the documents.
    static func scanNote(_ field: String) -> String {
        "note: \(field) is not in the index projection, so the documents were read from disk ('archivist index add FIELD' adds a field)\n"
    }

    // MARK: - find

    @Test("find prints whole matching documents as JSON Lines by default and as a JSON array with --format json")
    func findPrintsWholeDocuments() throws {
        try seed()
        let lines = try ok(["find", "section_name = Sports"])
        #expect(lines.stdoutText == Self.line("a1") + Self.line("a2") + Self.line("d1"))
        let jsonl = try ok(["--format", "jsonl", "find", "section_name = Sports"])
        #expect(jsonl.stdout == lines.stdout)

        let array = try ok(["--format", "json", "find", "section_name = Sports"])
        #expect(try array.json() == .array(["a1", "a2", "d1"].map { Self.byIdentifier[$0]! }))
        #expect(array.stdoutText.hasPrefix("[\n  {\n"), "not pretty: \(array.stdoutText.prefix(40))")

        // No filter: every document, by ID.
        #expect(try ids(ok(["find"])) == ["a1", "a2", "b1", "b2", "c1", "c2", "d1"])
        // No match: nothing at all.
        #expect(try ok(["find", "section_name = Nowhere"]).stdout.isEmpty)
        #expect(try ok(["--format", "json", "find", "section_name = Nowhere"]).json() == .array([]))
    }

    @Test("find in table format shows ID, date, section and headline in aligned columns")
    func findAsTable() throws {
        try seed()
        let table = try ok(["--format", "table", "find", "section_name = Sports"])
        #expect(
            table.stdoutLines == [
                "_id  pub_date              section_name  headline.main",
                "a1   2015-07-01T10:00:00Z  Sports        Knicks Lose Again",
                "a2   2015-07-02            Sports        Yankees Win, Finally",
                "d1                         Sports        Undated Sports Brief",
            ])
        let fields = try ok(["--format", "table", "find", "news_desk = Foreign", "--fields", "_id,word_count,headline.main"])
        #expect(
            fields.stdoutLines == [
                "_id  word_count  headline.main",
                "b1   1200        Climate Change Talks Resume",
                "b2   300         Café Society in Zürich",
            ])
    }

    @Test("find in csv format prints a header and a row per document, quoting cells that need it")
    func findAsCSV() throws {
        try seed()
        let csv = try ok(["--format", "csv", "find", "section_name = Sports"])
        #expect(
            csv.stdoutText == """
                _id,pub_date,section_name,headline.main
                a1,2015-07-01T10:00:00Z,Sports,Knicks Lose Again
                a2,2015-07-02,Sports,"Yankees Win, Finally"
                d1,,Sports,Undated Sports Brief

                """)
        let quoted = try ok(["--format", "csv", "find", "news_desk = OpEd", "--fields", "_id,headline.main,word_count"])
        #expect(quoted.stdoutText == "_id,headline.main,word_count\nc2,\"A Letter, With \"\"Quotes\"\"\",99\n")
    }

    @Test("--fields picks dotted paths, in order, with null for what a document lacks")
    func findWithFields() throws {
        try seed()
        let result = try sandbox.run([
            "find", "news_desk in (Foreign, Science)", "--fields", "_id, word_count,keywords.value,headline.main,byline.original",
        ])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdoutLines == [
                #"{"_id":"b1","word_count":1200,"keywords.value":"Global Warming","headline.main":"Climate Change Talks Resume","byline.original":null}"#,
                #"{"_id":"b2","word_count":"300","keywords.value":"Zürich (Switzerland)","headline.main":"Café Society in Zürich","byline.original":null}"#,
                #"{"_id":"c1","word_count":2000,"keywords.value":["Global Warming","Insects"],"headline.main":"Rare Beetles, Climate Change and You","byline.original":null}"#,
            ])
        // A field outside the projection is read from the document.
        let unprojected = try ok(["find", "_id in (a1, b1)", "--fields", "_id,subsection_name"])
        #expect(unprojected.stdoutLines == [#"{"_id":"a1","subsection_name":"Pro Basketball"}"#, #"{"_id":"b1","subsection_name":null}"#])
    }

    @Test("--sort takes several keys, each ascending or :desc, ties by ID; --skip and --limit cut the window")
    func findSortedWindows() throws {
        try seed()
        let sorted = ["c2", "c1", "a2", "a1", "d1", "b2", "b1"]
        #expect(try ids(ok(["find", "--sort", "section_name", "--sort", "pub_date:desc"])) == sorted)
        #expect(
            try ids(ok(["find", "--sort", "section_name:asc", "--sort", "pub_date:desc", "--skip", "2", "--limit", "3"])) == [
                "a2", "a1", "d1",
            ])
        #expect(try ids(ok(["find", "--sort", "section_name", "--sort", "pub_date:desc", "--skip", "6"])) == ["b1"])
        #expect(try ids(ok(["find", "--sort", "section_name", "--sort", "pub_date:desc", "--skip", "9"])).isEmpty)
        #expect(try ids(ok(["find", "--sort", "section_name", "--sort", "pub_date:desc", "--limit", "0"])).isEmpty)
        // Dates sort as instants whatever their spelling; a missing date comes first ascending.
        #expect(try ids(ok(["find", "--sort", "pub_date"])) == ["d1", "a1", "a2", "b1", "b2", "c1", "c2"])
        // Numbers before strings (MongoDB's order): "300" is the largest word count descending.
        #expect(try ids(ok(["find", "--sort", "word_count:desc", "--limit", "3"])) == ["b2", "c1", "b1"])
        // Sort, skip and limit with a filter and --fields, in any order among the filter words.
        let mixed = try ok(["find", "--limit", "2", "section_name", "in", "--sort", "_id:desc", "(Sports, World)", "--fields", "_id"])
        #expect(mixed.stdoutLines == [#"{"_id":"d1"}"#, #"{"_id":"b2"}"#])
    }

    @Test("a full-text search lists the best matches first, and combines with conditions")
    func findByFullText() throws {
        try seed()
        #expect(try ids(ok(["find", #""climate change""#])) == ["b1", "c1"])
        #expect(try ids(ok(["find", #""Climate" and news_desk = Science"#])) == ["c1"])
        #expect(try ids(ok(["find", #""zurich cafe""#])) == ["b2"])
        #expect(try ids(ok(["find", #""beetles climate" or "knicks""#, "--sort", "_id"])) == ["a1", "c1"])
    }

    @Test("infix and JSON filters select the same documents")
    func infixAndJSONFiltersAgree() throws {
        try seed()
        let pairs: [(String, String)] = [
            ("news_desk in (Foreign, OpEd)", #"{"news_desk": {"$in": ["Foreign", "OpEd"]}}"#),
            ("pub_date >= 2019-02-15 and pub_date < 2020-01-01", #"{"pub_date": {"$gte": "2019-02-15", "$lt": "2020-01-01"}}"#),
            ("not section_name = Sports", #"{"$nor": [{"section_name": "Sports"}]}"#),
            ("word_count > 500 or pub_date missing", #"{"$or": [{"word_count": {"$gt": 500}}, {"pub_date": {"$exists": false}}]}"#),
            ("headline.main ~ cafe", #"{"headline.main": {"$regex": "Café"}}"#),
            (#""global warming""#, #"{"$text": {"$search": "global warming"}}"#),
        ]
        for (infix, document) in pairs {
            let a = try ok(["find", infix, "--fields", "_id"])
            let b = try ok(["find", document, "--fields", "_id"])
            #expect(a.stdout == b.stdout, "\(infix) vs \(document)")
            #expect(!a.stdout.isEmpty, "\(infix) matched nothing")
        }
        #expect(try ids(ok(["find", "pub_date >= 2019-02-15 and pub_date < 2020-01-01"])) == ["b1", "b2"])
        // A date alone is its whole UTC day, whatever the stored spelling.
        #expect(try ids(ok(["find", "pub_date = 2019-02-15"])) == ["b1"])
        #expect(try ids(ok(["find", "pub_date = 2019-02-15T00:00:00-05:00"])) == ["b1"])
    }

    @Test("the words of a filter may be given as separate arguments")
    func filterWordsAsSeparateArguments() throws {
        try seed()
        let joined = try ok(["find", "section_name = Sports and word_count > 200", "--fields", "_id"])
        let separate = try ok(["find", "section_name", "=", "Sports", "and", "word_count", ">", "200", "--fields", "_id"])
        #expect(joined.stdoutLines == [#"{"_id":"a1"}"#, #"{"_id":"a2"}"#])
        #expect(separate.stdout == joined.stdout)
        #expect(try ok(["count", "news_desk", "not", "in", "(Sports,", "Foreign)"]).stdoutText == "3\n")
        #expect(try ok(["count", #""climate"#, #"change""#]).stdoutText == "2\n")
    }

    // MARK: - count

    @Test("count prints a bare integer in every format", arguments: ["table", "json", "jsonl", "csv", "default"])
    func countIsABareInteger(format: String) throws {
        try seed()
        let prefix = format == "default" ? [] : ["--format", format]
        #expect(try ok(prefix + ["count"]).stdoutText == "7\n")
        #expect(try ok(prefix + ["count", "section_name = Sports"]).stdoutText == "3\n")
        #expect(try ok(prefix + ["count", #"{"word_count": {"$gte": 450}}"#]).stdoutText == "4\n")
        if format == "default" { #expect(try ok(["count", "section_name = Nowhere"]).stdoutText == "0\n") }
        let scanned = try sandbox.run(prefix + ["count", "subsection_name exists"])
        #expect(scanned.status == 0)
        #expect(scanned.stdoutText == "3\n")
        #expect(scanned.stderrText == Self.scanNote("subsection_name"))
    }

    // MARK: - facet

    @Test("facet in table format prints each value, its count and a bar scaled to the largest count")
    func facetAsTable() throws {
        try seed()
        let result = try ok(["--format", "table", "facet", "section_name"], environment: ["COLUMNS": "60"])
        // Labels padded to the longest (7), counts right-aligned, bars of 60 - 7 - 1 - 4 = 48 for the largest.
        let bar = { (n: Int) in String(repeating: "█", count: n) }
        #expect(
            result.stdoutLines == [
                "Sports   3  " + bar(48),
                "World    2  " + bar(32),
                "Opinion  1  " + bar(16),
                "Science  1  " + bar(16),
            ])
    }

    @Test("facet prints value and count records, most frequent first, ties by value; --limit and a filter narrow it")
    func facetRecords() throws {
        try seed()
        let all = try ok(["facet", "section_name"])
        #expect(
            all.stdoutLines == [
                #"{"value":"Sports","count":3}"#, #"{"value":"World","count":2}"#,
                #"{"value":"Opinion","count":1}"#, #"{"value":"Science","count":1}"#,
            ])
        let keywords = try ok(["facet", "keywords.value", "pub_date", ">=", "2019-01-01", "--limit", "2"])
        #expect(keywords.stdoutLines == [#"{"value":"Global Warming","count":2}"#, #"{"value":"Insects","count":1}"#])
        // A document without the field counts for no value.
        let json = try ok(["--format", "json", "facet", "news_desk", #"{"section_name": "Sports"}"#])
        #expect(json.stdoutText == "[\n  {\n    \"value\": \"Sports\",\n    \"count\": 2\n  }\n]\n")
        let csv = try ok(["--format", "csv", "facet", "word_count", "--limit", "3"])
        #expect(csv.stdoutText == "value,count\n99,1\n120,1\n450,1\n")
        let scanned = try sandbox.run(["facet", "subsection_name"])
        #expect(scanned.status == 0)
        #expect(
            scanned.stdoutLines == [
                #"{"value":"Baseball","count":1}"#, #"{"value":"Climate","count":1}"#, #"{"value":"Pro Basketball","count":1}"#,
            ])
        #expect(scanned.stderrText == Self.scanNote("subsection_name"))
    }

    // MARK: - Errors

    static let syntaxErrors: [([String], String)] = [
        (["find", "section_name >= "], "error: filter: column 17: expected a value after '>='\n"),
        (["find", "section_name", ">="], "error: filter: column 16: expected a value after '>='\n"),
        (["count", "(section_name = Sports"], "error: filter: column 23: expected ')' to close the '(' at column 1\n"),
        (["find", "section_name = Sports Foreign"], "error: filter: column 23: expected 'and', 'or' or the end, found 'Foreign'\n"),
        (["facet", "section_name", "byline exists Sports"], "error: filter: column 15: expected 'and', 'or' or the end, found 'Sports'\n"),
        (["export", "news_desk in Sports"], "error: filter: column 14: expected '(' after 'in'\n"),
        (
            ["remove", "--where", "section_name = Sports and"],
            "error: filter: column 26: expected a condition such as 'field = value' or a quoted phrase\n"
        ),
    ]

    @Test(
        "a filter syntax error exits 1 with one error line naming the column, prints nothing and changes nothing", arguments: syntaxErrors)
    func syntaxErrorExits1(arguments: [String], message: String) throws {
        try seed()
        let before = snapshot(sandbox.data)
        let result = try sandbox.run(arguments)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText == message)
        #expect(result.stdout.isEmpty)
        #expect(sameSnapshot(before, snapshot(sandbox.data)), "the data folder changed")
    }

    @Test("an unterminated string and a bad JSON filter are errors with a column too")
    func otherFilterErrors() throws {
        try seed()
        let unterminated = try sandbox.run(["find", #"section_name = "Sports"#])
        #expect(unterminated.status == 1)
        #expect(unterminated.stderrText == "error: filter: column 16: expected a closing \" for the string that starts here\n")
        let json = try sandbox.run(["find", #"{"section_name": }"#])
        #expect(json.status == 1)
        #expect(json.stderrText.hasPrefix("error: filter: column "), "\(json.stderrText)")
        let unknown = try sandbox.run(["count", #"{"word_count": {"$near": 5}}"#])
        #expect(unknown.status == 1)
        #expect(unknown.stderrText.hasPrefix("error: filter: ") && unknown.stderrText.contains("$near"), "\(unknown.stderrText)")
    }

    // MARK: - The projection

    @Test(
        "a filter on a field outside the projection prints the results and a note; index add makes the note go, index drop brings it back")
    func projectionNoteAndIndexCommands() throws {
        try seed()
        let query = ["find", "subsection_name = Baseball", "--fields", "_id,subsection_name"]
        let expected = [#"{"_id":"a2","subsection_name":"Baseball"}"#]

        let scanned = try sandbox.run(query)
        #expect(scanned.status == 0, "\(scanned)")
        #expect(scanned.stdoutLines == expected)
        #expect(scanned.stderrText == Self.scanNote("subsection_name"))
        // A sort key outside the projection is noted too.
        let sorted = try sandbox.run(["find", "--sort", "subsection_name:desc", "--fields", "_id"])
        #expect(sorted.stdoutLines.prefix(3) == [#"{"_id":"a1"}"#, #"{"_id":"c1"}"#, #"{"_id":"a2"}"#])
        #expect(sorted.stderrText == Self.scanNote("subsection_name"))

        let list = try ok(["index", "list"])
        let before = try list.jsonLines().compactMap { $0["field"]?.stringValue }
        #expect(before == StoreSchema.nyt.projection.paths)
        #expect(!before.contains("subsection_name"))

        let added = try ok(["index", "add", "subsection_name"])
        let afterAdd = try added.jsonLines().compactMap { $0["field"]?.stringValue }
        #expect(afterAdd == Projection(paths: before + ["subsection_name"]).paths)
        #expect(try ok(["index", "list"]).stdout == added.stdout)

        let indexed = try ok(query)
        #expect(indexed.stdoutLines == expected)
        #expect(try ok(["find", "--sort", "subsection_name:desc", "--fields", "_id"]).stdout == sorted.stdout)
        #expect(try ok(["count", "subsection_name exists"]).stdoutText == "3\n")
        #expect(try ok(["check"]).status == 0)

        let dropped = try ok(["index", "drop", "subsection_name", "web_url"])
        let afterDrop = try dropped.jsonLines().compactMap { $0["field"]?.stringValue }
        #expect(afterDrop == before.filter { $0 != "web_url" })
        let again = try sandbox.run(query)
        #expect(again.stdoutLines == expected)
        #expect(again.stderrText == Self.scanNote("subsection_name"))
        let webURL = try sandbox.run(["count", "web_url missing and subsection_name missing"])
        #expect(webURL.stdoutText == "4\n")
        #expect(
            webURL.stderrText
                == "note: subsection_name, web_url are not in the index projection, so the documents were read from disk ('archivist index add FIELD' adds a field)\n"
        )
        // A facet whose field and filter both lie outside the projection reads each document once
        // and names the field once.
        let facet = try sandbox.run(["--format", "jsonl", "facet", "subsection_name", "subsection_name exists"])
        #expect(facet.status == 0, "\(facet)")
        #expect(facet.stdoutLines.count == Set(facet.stdoutLines).count && !facet.stdoutLines.isEmpty, "\(facet)")
        #expect(facet.stderrText == Self.scanNote("subsection_name"))

        // Dropping a field that is not projected is an error that changes nothing.
        let missing = try sandbox.run(["index", "drop", "subsection_name"])
        #expect(missing.status == 1)
        #expect(missing.stderrText.hasPrefix("error: index: 'subsection_name' is not in the projection"), "\(missing.stderrText)")
        #expect(try ok(["check"]).status == 0)
    }

    // MARK: - export and remove

    @Test("export FILTER --to FILE writes exactly the matching documents, sorted by ID, and nothing on stdout")
    func exportMatchingDocuments() throws {
        try seed()
        let target = sandbox.root + "/world.jsonl"
        let result = try ok(["export", "section_name", "=", "World", "--to", target])
        #expect(result.stdout.isEmpty)
        #expect(String(decoding: sandbox.contents(target) ?? [], as: UTF8.self) == Self.line("b1") + Self.line("b2"))
        #expect(tree(sandbox.root).filter { $0.hasPrefix("world") } == ["world.jsonl"], "a temporary file was left beside the export")

        // Without --to, on stdout; a JSON filter works too; no match writes an empty file.
        #expect(try ok(["export", #"{"word_count": {"$gt": 1000}}"#]).stdoutText == Self.line("b1") + Self.line("c1"))
        let empty = sandbox.root + "/none.jsonl"
        #expect(try ok(["export", "section_name = Nowhere", "--to", empty]).stdout.isEmpty)
        #expect(sandbox.contents(empty) == [])
        // A filter outside the projection still exports, with the note.
        let scanned = try sandbox.run(["export", "subsection_name = Climate"])
        #expect(scanned.status == 0)
        #expect(scanned.stdoutText == Self.line("c1"))
        #expect(scanned.stderrText == Self.scanNote("subsection_name"))
    }

    @Test("remove --where removes exactly the matching documents, and check still passes")
    func removeWhere() throws {
        try seed()
        let matching = try ids(ok(["find", "word_count < 500"]))
        #expect(matching == ["a2", "c2", "d1"])

        let result = try ok(["remove", "--where", "word_count < 500"])
        #expect(result.stdoutText == #"{"removed":3,"missing":0}"# + "\n")
        #expect(try ids(ok(["export"])) == ["a1", "b1", "b2", "c1"])
        #expect(try ok(["count"]).stdoutText == "4\n")
        #expect(try ok(["count", "word_count < 500"]).stdoutText == "0\n")
        let check = try ok(["check"])
        #expect(check.stdoutText == #"{"ok":true,"documents":4,"problems":0}"# + "\n")

        // The filter's words may follow --where as separate arguments; no match is no error.
        #expect(
            try ok(["remove", "--where", "section_name", "=", "World", "and", "news_desk", "=", "Foreign"]).stdoutText
                == #"{"removed":2,"missing":0}"# + "\n")
        #expect(try ok(["remove", "--where", "section_name = Nowhere"]).stdoutText == #"{"removed":0,"missing":0}"# + "\n")
        #expect(try ids(ok(["export"])) == ["a1", "c1"])
        // A filter outside the projection reads the documents to decide, and says so.
        let scanned = try sandbox.run(["remove", "--where", "subsection_name = Climate"])
        #expect(scanned.status == 0)
        #expect(scanned.stdoutText == #"{"removed":1,"missing":0}"# + "\n")
        #expect(scanned.stderrText == Self.scanNote("subsection_name"))
        #expect(try ids(ok(["export"])) == ["a1"])
        #expect(try ok(["check"]).stdoutText == #"{"ok":true,"documents":1,"problems":0}"# + "\n")
    }

    // MARK: - Discrepancies between the indexes and the documents

    @Test("a range on a field holding several values counts, finds, exports and removes each document once")
    func rangeOnAMultiValuedFieldThroughTheCommands() throws {
        try seed()
        // Every article with keywords has one after "A": a1, a2, b1, b2, c1.
        #expect(try ok(["count", "keywords.value > A"]).stdoutText == "5\n")
        #expect(try ids(ok(["find", "keywords.value > A"])) == ["a1", "a2", "b1", "b2", "c1"])
        #expect(try ids(ok(["export", "keywords.value > A"])) == ["a1", "a2", "b1", "b2", "c1"])
        #expect(
            try ok(["facet", "section_name", "keywords.value >= Baseball"]).stdoutLines
                == [#"{"value":"Sports","count":2}"#, #"{"value":"World","count":2}"#, #"{"value":"Science","count":1}"#])
        // "Zürich (Switzerland)" is not before "Z": b2 stays.
        #expect(try ok(["remove", "--where", "keywords.value < Z"]).stdoutText == #"{"removed":4,"missing":0}"# + "\n")
        #expect(try ids(ok(["export"])) == ["b2", "c2", "d1"])
        #expect(try ok(["check"]).status == 0)
    }

    @Test("count with = -0 (or 0 against a stored -0.0) matches as the filter's own matching does")
    func negativeZeroThroughTheCommands() throws {
        #expect(try sandbox.run(["put", "zero", #"{"word_count": 0}"#]).status == 0)
        #expect(try sandbox.run(["put", "negative-zero", #"{"word_count": -0.0}"#]).status == 0)
        #expect(try sandbox.run(["put", "one", #"{"word_count": 1}"#]).status == 0)
        for filter in [
            "word_count = 0", "word_count = -0", "word_count in (-0, 5)", #"{"word_count": -0.0}"#, "word_count <= 0 and word_count >= 0",
        ] {
            let counted = try ok(["count", filter]).stdoutText
            #expect(counted == "2\n", "count \(filter)")
        }
    }
}
