import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

/// Scripts piped into `archivist` with no command.
@Suite("archivist reading a script on standard input")
struct ScriptTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    func script(_ text: String, _ options: [String] = []) throws -> CLIResult {
        try sandbox.run(options, stdin: Array(text.utf8))
    }

    @Test("each line runs as a command; blank lines and comments are skipped; no prompt or banner")
    func runsEachLine() throws {
        let result = try script(
            """
            # set up
            put a {"n": 1}

            put b '{"n": 2}'
            count
            get a
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdoutLines == [#"{"id":"a","outcome":"added"}"#, #"{"id":"b","outcome":"added"}"#, "2", #"{"_id":"a","n":1}"#])
    }

    @Test("errors name their line; later lines still run; the exit status is 1")
    func errorsNameTheirLine() throws {
        let result = try script(
            """
            put a {"n": 1}
            get missing

            bogus
            put c {"n" 1}
            count
            """)
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 3, "\(result)")
        #expect(result.stderrLines[0].hasPrefix("error: line 2: "), "\(result)")
        #expect(result.stderrLines[1].hasPrefix("error: line 4: unknown command 'bogus'"), "\(result)")
        #expect(result.stderrLines[2].hasPrefix("error: line 5: put: JSON argument: invalid JSON"), "\(result)")
        #expect(result.stdoutLines.last == "1", "count still ran: \(result)")
    }

    @Test("--bail stops at the first failing line")
    func bailStopsAtTheFirstFailure() throws {
        let result = try script("put a {\"n\": 1}\nget missing\nput b {\"n\": 2}\n", ["--bail"])
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1)
        #expect(try sandbox.run(["count"]).stdoutText == "1\n")
    }

    @Test("a JSON argument, a quote or a trailing backslash continues on the next lines, and errors name the first")
    func multiLineCommands() throws {
        let result = try script(
            """
            put a {
              "headline": {"main": "Two words"},
              "n": [1,
                    2]
            }
            find \\
              _id = a --fields n
            get nope
            """)
        #expect(result.status == 1)
        #expect(result.stdoutLines.first == #"{"id":"a","outcome":"added"}"#)
        #expect(result.stdoutLines.dropFirst().first == #"{"n":[1,2]}"#, "\(result)")
        #expect(result.stderrLines == ["error: line 8: ID 'nope': no such document"], "\(result)")
    }

    @Test("a line over 64 MiB stops the script with an error naming it; nothing after it runs")
    func aLineOverTheBoundStopsTheScript() throws {
        let text = "put a {\"n\": 1}\ncount '" + String(repeating: "y", count: 65 << 20) + "\nput b {\"n\": 2}\n"
        let result = try script(text)
        #expect(result.status == 1)
        #expect(
            result.stderrLines == ["error: line 2: the command is longer than 64 MiB (started on line 2); the script stops here"],
            "\(result.stderr.prefix(300))")
        let ids = try sandbox.run(["--format", "jsonl", "find", "--fields", "_id"])
        #expect(ids.stdoutLines == [#"{"_id":"a"}"#], "\(ids)")
        #expect(try sandbox.run(["check"]).status == 0)
    }

    @Test("an unfinished command at the end of the input is an error naming where it started")
    func unfinishedAtTheEnd() throws {
        let result = try script("count\nput a {\"n\": [1,\n")
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrLines[0].hasPrefix("error: line 2: the command is not finished"), "\(result)")
    }

    @Test("dot-commands: .mode, .timer, .open, .quit")
    func dotCommands() throws {
        let other = sandbox.root + "/other"
        let result = try script(
            """
            put a {"n": 1}
            .mode json
            stats
            .mode
            .timer on
            count
            .timer off
            .open \(other)
            count
            .quit
            count
            """)
        #expect(result.status == 0, "\(result)")
        let text = result.stdoutText
        #expect(text.contains("\"documents\": 1"), "stats in json: \(text)")
        #expect(result.stdoutLines.contains("json"))
        #expect(result.stderrLines.filter { $0.hasPrefix("time: ") }.count == 1, "\(result)")
        // The count after .open is of the other (new, empty) folder; nothing runs after .quit.
        #expect(Array(result.stdoutLines.suffix(2)) == ["1", "0"], "\(result)")
        #expect(FileManager.default.fileExists(atPath: other + "/archivist.json"))
    }

    @Test("an unknown dot-command is a line-numbered error")
    func unknownDotCommand() throws {
        let result = try script(".frobnicate\n.mode yaml\ncount\n")
        #expect(result.status == 1)
        #expect(result.stderrLines.map { String($0.prefix(14)) } == ["error: line 1:", "error: line 2:"], "\(result)")
        #expect(result.stdoutLines == ["0"])
    }

    @Test("/dev/null as standard input runs nothing and succeeds")
    func emptyInput() throws {
        let result = try sandbox.run([])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
    }

    @Test("--interactive without a terminal prints the banner and prompts, and runs the lines")
    func interactiveWithoutATerminal() throws {
        let result = try script("put a {\"n\":\n 1}\ncount\n", ["--interactive"])
        #expect(result.status == 0, "\(result)")
        let text = result.stdoutText
        #expect(text.hasPrefix("archivist "), "banner: \(text)")
        #expect(text.contains("data> ") && text.contains("...> "), "prompts: \(text)")
        #expect(text.contains("\n1\n") || text.contains("> 1\n"), "count ran: \(text)")
    }

    @Test("a comment at the prompt is skipped like a script's: an apostrophe in it opens no quote")
    func aCommentAtThePromptOpensNoQuote() throws {
        let result = try script("# don't mind me\ncount\n", ["--interactive"])
        #expect(result.status == 0, "\(result)")
        #expect(!result.stdoutText.contains("...> "), "\(result)")
        #expect(result.stdoutText.contains("data> 0\n"), "count ran after the comment: \(result)")
    }

    @Test("import - in a script is an error: standard input holds the commands")
    func importFromStandardInputInAScriptIsAnError() throws {
        let result = try script("import -\n{\"_id\": \"x\"}\ncount\n")
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderrLines.first == "error: line 1: import: '-' cannot be read: standard input holds the commands; give a file",
            "\(result)")
        #expect(result.stdoutLines.last == "0", "nothing was imported: \(result)")
    }

    @Test(".open of a folder whose store cannot be opened is an error that leaves the shell where it was")
    func openOfABadFolderKeepsTheCurrentOne() throws {
        #expect(try sandbox.run(["put", "a", "{}"]).status == 0)
        let bad = sandbox.root + "/bad"
        try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: true)
        try sandbox.write("not json", to: bad + "/" + FileNames.metadata)
        let result = try script(".open \(bad)\ncount\n")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrLines.count == 1 && result.stderrLines[0].hasPrefix("error: line 1: "), "\(result)")
        #expect(result.stdoutLines == ["1"], "count ran on the first folder: \(result)")
    }

    /// Four documents: two in "New York", one about the Knicks' Lopez, one with an apostrophe.
    func seedSections() throws {
        let documents = [
            #"{"_id":"ny1","section_name":"New York","headline":{"main":"Subway Fares Rise"}}"#,
            #"{"_id":"ny2","section_name":"New York","headline":{"main":"An Unlikely Deal at City Hall"}}"#,
            #"{"_id":"sp1","section_name":"Sports","headline":{"main":"Knicks Beat Nets as Lopez Scores 30"}}"#,
            #"{"_id":"op1","section_name":"Opinion","headline":{"main":"Don't Look Up"}}"#,
        ]
        try sandbox.write(documents.joined(separator: "\n") + "\n", to: sandbox.root + "/in.jsonl")
        #expect(try sandbox.run(["import", sandbox.root + "/in.jsonl"]).status == 0)
    }

    @Test("a script's filters are read as typed: quoted values, phrases, bare words; quit leaves")
    func filtersAsTypedInAScript() throws {
        try seedSections()
        let result = try script(
            #"""
            .mode csv
            count section_name = "New York"
            find "unlikely deal" --fields _id
            count "knicks lopez"
            count knicks lopez
            find headline.main ~ "don't" --fields _id
            count section_name = 'New York' and subway
            .mode jsonl
            export "knicks lopez"
            quit
            count
            """#)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(Array(result.stdoutLines.prefix(8)) == ["2", "_id", "ny2", "1", "1", "_id", "op1", "1"], "\(result)")
        #expect(result.stdoutLines.count == 9 && result.stdoutLines[8].hasPrefix(#"{"_id":"sp1","#), "\(result)")
    }

    @Test("on the command line the words of a filter keep their meaning without extra quoting")
    func filtersAsGivenOnTheCommandLine() throws {
        try seedSections()
        #expect(try sandbox.run(["count", "section_name", "=", "New York"]).stdoutLines == ["2"])
        #expect(try sandbox.run(["count", "knicks", "lopez"]).stdoutLines == ["1"])
        #expect(try sandbox.run(["count", "knicks lopez"]).stdoutLines == ["1"])
        #expect(try sandbox.run(["find", "unlikely", "deal", "--fields", "_id", "--format", "csv"]).stdoutLines == ["_id", "ny2"])
        #expect(try sandbox.run(["count", "section_name = Sports"]).stdoutLines == ["1"])
        let removed = try sandbox.run(["remove", "--where", "section_name", "=", "New York"])
        #expect(removed.status == 0 && removed.stdoutLines == [#"{"removed":2,"missing":0}"#], "\(removed)")
        // A syntax error still names its column, in the filter as given.
        let error = try sandbox.run(["count", "section_name", "=", "Sports", "Foreign"])
        #expect(error.status == 1 && error.stderrText == "error: filter: column 23: expected 'and', 'or' or the end, found 'Foreign'\n")
    }

    @Test("a timeline is a row per year, month, week or day, oldest first, empty ones shown, with bars; bucket,count in csv")
    func timelines() throws {
        let dates = [
            "2016-03-01T10:00:00Z", "2016-05-20T00:00:00Z", "2018-01-02T09:00:00-05:00", "2018-07-04T12:00:00Z", "2018-12-31T23:00:00Z",
        ]
        let documents = dates.enumerated().map { #"{"_id":"d\#($0)","pub_date":"\#($1)","headline":{"main":"Climate \#($0)"}}"# }
        try sandbox.write(documents.joined(separator: "\n") + "\n", to: sandbox.root + "/in.jsonl")
        #expect(try sandbox.run(["import", sandbox.root + "/in.jsonl"]).status == 0)
        let table = try sandbox.run(["--format", "table", "facet", "pub_date:year", "climate"], environment: ["COLUMNS": "40"])
        #expect(table.status == 0, "\(table)")
        #expect(
            table.stdoutText == """
                2016  2  ████████████████████
                2017  0
                2018  3  ███████████████████████████████

                """, "\(table.stdoutText)")
        let csv = try sandbox.run(["--format", "csv", "facet", "pub_date:month", "pub_date >= 2018-01-01"])
        #expect(
            csv.stdoutLines == [
                "bucket,count", "2018-01,1", "2018-02,0", "2018-03,0", "2018-04,0", "2018-05,0", "2018-06,0", "2018-07,1", "2018-08,0",
                "2018-09,0", "2018-10,0", "2018-11,0", "2018-12,1",
            ], "\(csv)")
        let weeks = try sandbox.run(["--format", "csv", "facet", "pub_date:week", "--limit", "2"])
        #expect(weeks.stdoutLines == ["bucket,count", "2018-12-24,0", "2018-12-31,1"], "\(weeks)")
        let days = try sandbox.run(["--format", "jsonl", "facet", "pub_date:day", "pub_date < 2016-03-03"])
        #expect(days.stdoutLines == [#"{"bucket":"2016-03-01","count":1}"#], "\(days)")
    }

    @Test("facet --by DATE:SPAN gives the top values of each span, a row per span in table format")
    func topValuesPerSpan() throws {
        let rows = [
            ("2016-03-01", "Sports"), ("2016-04-01", "Sports"), ("2016-05-01", "World"), ("2016-06-01", "Arts"), ("2016-06-02", "Arts"),
            ("2016-06-03", "Arts"), ("2018-01-01", "World"),
        ]
        let documents = rows.enumerated().map { #"{"_id":"d\#($0)","pub_date":"\#($1.0)T12:00:00Z","section_name":"\#($1.1)"}"# }
        try sandbox.write(documents.joined(separator: "\n") + "\n", to: sandbox.root + "/in.jsonl")
        #expect(try sandbox.run(["import", sandbox.root + "/in.jsonl"]).status == 0)
        let table = try sandbox.run(["--format", "table", "facet", "section_name", "--by", "pub_date:year", "--limit", "2"])
        #expect(table.stdoutLines == ["2016  Arts 3 · Sports 2", "2017", "2018  World 1"], "\(table)")
        let csv = try sandbox.run(["--format", "csv", "facet", "section_name", "--by", "pub_date:year", "section_name != Arts"])
        #expect(csv.stdoutLines == ["bucket,value,count", "2016,Sports,2", "2016,World,1", "2018,World,1"], "\(csv)")
        let bad = try sandbox.run(["facet", "section_name", "--by", "pub_date:decade"])
        #expect(bad.status == 64 && bad.stderrText.contains("--by takes DATE:SPAN"), "\(bad)")
    }

    @Test(arguments: ["quit", "exit", ".quit", ".exit"])
    func eachWordForLeavingStopsTheScript(word: String) throws {
        let result = try script("put a {}\n\(word)\nput b {}\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [#"{"id":"a","outcome":"added"}"#], "\(result)")
    }
}
