import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// End-to-end tests of the `archivist` executable: each runs the built binary as a child process
/// on a fresh data folder and looks at its output, exit status and the files it leaves.
@Suite("archivist command line")
struct CommandLineTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// `{"added":A,"updated":U,"unchanged":N,"failed":F}` and a newline: what import prints.
    static func counts(added: Int = 0, updated: Int = 0, unchanged: Int = 0, failed: Int = 0) -> String {
        #"{"added":\#(added),"updated":\#(updated),"unchanged":\#(unchanged),"failed":\#(failed)}"# + "\n"
    }

    /// Every stored document, read back with `export`, keyed by `_id`.
    func exported(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: JSONValue] {
        let result = try sandbox.run(["export"])
        #expect(result.status == 0, "export failed: \(result)", sourceLocation: sourceLocation)
        return byID(try result.jsonLines())
    }

    /// Whether nothing at all was stored: no document file and no index entry.
    func nothingStored() -> Bool {
        let documents = tree(sandbox.path(FileNames.documents)).filter { !$0.hasSuffix("/") }
        let index = sandbox.contents(sandbox.path(FileNames.index)) ?? []
        return documents.isEmpty && index.isEmpty
    }

    // MARK: - put, get, add, remove

    @Test("put then get keeps every key and value; the file is pretty, sorted, unescaped and ends in a newline")
    func putGetRoundTripKeepsEveryKeyAndValue() throws {
        let input = #"""
            {"zeta":1,"alpha":null,"url":"https:\/\/www.nytimes.com\/2019\/03\/11\/a.html","big":12345678901234567890123,
             "float":0.0,"exp":1.5e-7,"neg":-42,"Zed":"upper case sorts first",
             "text":"caf\u00e9 ünï 日本 “quotes” \"esc\" back\\slash\ttab","nested":{"b":[1,2.50,{"y":true,"x":false}],"a":{}},
             "empty":[],"word_count":"879"}
            """#
        let put = try sandbox.run(["put", "round-trip", input])
        #expect(put.status == 0, "\(put)")
        #expect(put.stdoutText == #"{"id":"round-trip","outcome":"added"}"# + "\n")
        #expect(put.stderr.isEmpty)

        let expectedFile = #"""
            {
              "Zed": "upper case sorts first",
              "_id": "round-trip",
              "alpha": null,
              "big": 12345678901234567890123,
              "empty": [],
              "exp": 1.5e-7,
              "float": 0.0,
              "neg": -42,
              "nested": {
                "a": {},
                "b": [
                  1,
                  2.50,
                  {
                    "x": false,
                    "y": true
                  }
                ]
              },
              "text": "café ünï 日本 “quotes” \"esc\" back\\slash\ttab",
              "url": "https://www.nytimes.com/2019/03/11/a.html",
              "word_count": "879",
              "zeta": 1
            }

            """#
        let file = try #require(
            sandbox.contents(sandbox.documentFile("round-trip")),
            "no document file at \(FileNames.documentPath(for: "round-trip", in: .nyt))")
        #expect(String(decoding: file, as: UTF8.self) == expectedFile)
        #expect(!String(decoding: file, as: UTF8.self).contains(#"\/"#))

        // jsonl (the default off a terminal): one compact line equal to the input plus _id.
        let get = try sandbox.run(["get", "round-trip"])
        #expect(get.status == 0, "\(get)")
        #expect(get.stdoutLines.count == 1)
        #expect(try get.json() == json(input).setting("_id", to: .string("round-trip")))
        // Integers stay integers and literals keep their spelling.
        #expect(get.stdoutText.contains(#""big":12345678901234567890123"#))
        #expect(get.stdoutText.contains(#""float":0.0"#))
        #expect(get.stdoutText.contains(#""alpha":null"#))
        #expect(get.stdoutText.contains(#""word_count":"879""#))

        // json and table formats print the file as stored.
        for format in ["json", "table"] {
            let pretty = try sandbox.run(["--format", format, "get", "round-trip"])
            #expect(pretty.status == 0)
            #expect(pretty.stdout == file, "get in \(format) format differs from the file")
        }
    }

    @Test("put of the same document twice prints unchanged and writes nothing")
    func putSameDocumentTwiceIsUnchanged() throws {
        let document = #"{"headline":{"main":"Same"},"word_count":12,"news_desk":null}"#
        #expect(try sandbox.run(["put", "same", document]).status == 0)
        let path = sandbox.documentFile("same")
        let before = try #require(fileFacts(path))
        let indexBefore = sandbox.contents(sandbox.path(FileNames.index))
        usleep(20_000)

        let again = try sandbox.run(["put", "same", document])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdoutText == #"{"id":"same","outcome":"unchanged"}"# + "\n")
        // Another spelling of the same value (key order, spaces, escapes, explicit _id) is the same document.
        let respelled = try sandbox.run([
            "put", "same", #"{ "news_desk" : null, "word_count" : 12, "_id" : "same", "headline" : { "main" : "S\u0061me" } }"#,
        ])
        #expect(respelled.stdoutText == #"{"id":"same","outcome":"unchanged"}"# + "\n")
        #expect(fileFacts(path) == before, "the document file was rewritten")
        #expect(sandbox.contents(sandbox.path(FileNames.index)) == indexBefore, "the index changed")

        let changed = try sandbox.run(["put", "same", #"{"headline":{"main":"Different"}}"#])
        #expect(changed.stdoutText == #"{"id":"same","outcome":"updated"}"# + "\n")
        #expect(fileFacts(path) != before)
    }

    @Test("add without _id stores the document under a new lowercase UUID set as its _id")
    func addAssignsUUID() throws {
        let document = #"{"headline":{"main":"No id yet"},"word_count":5}"#
        let first = try sandbox.run(["add", document])
        #expect(first.status == 0, "\(first)")
        let record = try first.json()
        #expect(record["outcome"] == .string("added"))
        let id = try #require(record["id"]?.stringValue)
        #expect(id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/) != nil, "not a lowercase UUID: \(id)")

        let get = try sandbox.run(["get", id])
        #expect(get.status == 0)
        #expect(try get.json() == json(document).setting("_id", to: .string(id)))

        // The same content added again is another document.
        let second = try sandbox.run(["add", document])
        let secondID = try #require(try second.json()["id"]?.stringValue)
        #expect(secondID != id)
        #expect(try exported().count == 2)
    }

    @Test("add with an _id stores the document under it")
    func addWithIDUsesIt() throws {
        let document = #"{"_id":"4fd2a0b78eb7c8105d88fd8e","headline":{"main":"Hello"}}"#
        let add = try sandbox.run(["add", document])
        #expect(add.status == 0)
        #expect(add.stdoutText == #"{"id":"4fd2a0b78eb7c8105d88fd8e","outcome":"added"}"# + "\n")
        #expect(sandbox.exists(sandbox.documentFile("4fd2a0b78eb7c8105d88fd8e")))
        #expect(try sandbox.run(["get", "4fd2a0b78eb7c8105d88fd8e"]).json() == json(document))
        let again = try sandbox.run(["add", document])
        #expect(again.stdoutText == #"{"id":"4fd2a0b78eb7c8105d88fd8e","outcome":"unchanged"}"# + "\n")
    }

    @Test(
        "put refuses what is not a storable document, with one error line and exit 1",
        arguments: [
            ["put", "x", #"{"headline":"#],  // invalid JSON
            ["put", "x", #"[1,2]"#],  // not an object
            ["put", "x", #""text""#],  // not an object
            ["put", "x", #"{"_id":"y"}"#],  // _id differs from the ID
            ["put", "x", #"{"_id":42}"#],  // _id not a string
            ["put", "", #"{}"#],  // empty ID
            ["add", #"{"_id":""}"#],  // empty _id
            ["add", "not json"],
        ])
    func putRefusesInvalidDocuments(arguments: [String]) throws {
        let result = try sandbox.run(arguments)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrText.hasPrefix("error: "))
        #expect(result.stdout.isEmpty)
        #expect(nothingStored())
    }

    @Test("get of a missing ID exits 1 with one error line naming the ID")
    func getMissingIDFails() throws {
        #expect(try sandbox.run(["put", "present", "{}"]).status == 0)
        let result = try sandbox.run(["get", "absent-id"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrText.hasPrefix("error: "))
        #expect(result.stderrText.contains("absent-id"))
    }

    @Test("remove deletes documents and reports the IDs that had none")
    func removeDeletesDocuments() throws {
        for id in ["r1", "r2", "r3"] {
            #expect(try sandbox.run(["put", id, #"{"n":1}"#]).status == 0)
        }
        let both = try sandbox.run(["remove", "r1", "r2"])
        #expect(both.status == 0, "\(both)")
        #expect(both.stdoutText == #"{"removed":2,"missing":0}"# + "\n")
        #expect(!sandbox.exists(sandbox.documentFile("r1")))
        #expect(!sandbox.exists(sandbox.documentFile("r2")))
        #expect(try sandbox.run(["get", "r1"]).status == 1)

        let partly = try sandbox.run(["remove", "r3", "never-there"])
        #expect(partly.status == 1)
        #expect(partly.stdoutText == #"{"removed":1,"missing":1}"# + "\n")
        #expect(partly.stderrLines.count == 1)
        #expect(partly.stderrText.hasPrefix("error: ") && partly.stderrText.contains("never-there"))
        #expect(try exported().isEmpty)
        #expect(try sandbox.run(["check"]).status == 0)
    }

    // MARK: - import

    struct ImportCase: Sendable, CustomTestStringConvertible {
        var file: String
        var added: Int
        var failed: Int
        /// Locations the error lines must name, in order.
        var failures: [String] = []
        var testDescription: String { file }
    }

    static let importCases: [ImportCase] = [
        ImportCase(file: "response-2016-compact.json", added: 3, failed: 0),
        ImportCase(file: "response-2019.json", added: 3, failed: 0),
        ImportCase(file: "response-2025.json", added: 2, failed: 0),
        ImportCase(file: "response-docs-null.json", added: 0, failed: 0),
        ImportCase(
            file: "response-fl-only.json", added: 0, failed: 3,
            failures: ["response.docs[0]", "response.docs[1]", "response.docs[2]"]),
        ImportCase(file: "documents-array.json", added: 3, failed: 0),
        ImportCase(file: "lines-with-bad.jsonl", added: 4, failed: 2, failures: ["line 3", "line 4"]),
        ImportCase(file: "not-json.txt", added: 0, failed: 2, failures: ["line 1", "line 2"]),
    ]

    @Test(
        "import of each fixture shape stores its documents as they were and counts them; a second import finds them unchanged",
        arguments: CommandLineTests.importCases)
    func importFixture(_ fixture: ImportCase) throws {
        let path = CLI.fixture(fixture.file)
        let source = try #require(sandbox.contents(path), "missing fixture \(fixture.file)")
        let expected = byID(importableDocuments(of: source))
        #expect(expected.count == fixture.added, "the test's own reading of \(fixture.file) disagrees")

        let first = try sandbox.run(["import", path])
        #expect(first.status == (fixture.failed > 0 ? 1 : 0), "\(first)")
        #expect(first.stdoutText == Self.counts(added: fixture.added, failed: fixture.failed))
        #expect(first.stderrLines.count == fixture.failed, "\(first.stderrLines)")
        for (line, location) in zip(first.stderrLines, fixture.failures) {
            #expect(line.hasPrefix("error: import: \(path): \(location): "), "\(line)")
        }

        let stored = try exported()
        #expect(stored.keys.sorted() == expected.keys.sorted())
        for (id, document) in expected {
            #expect(stored[id] == document, "document \(id) changed on the way in")
        }
        // The stored files are the canonical pretty form: no escaped slashes left.
        for id in expected.keys {
            let file = try #require(sandbox.contents(sandbox.documentFile(id)))
            #expect(!String(decoding: file, as: UTF8.self).contains(#"\/"#))
            #expect(file.last == 0x0A)
        }

        let second = try sandbox.run(["import", path])
        #expect(second.status == first.status)
        #expect(second.stdoutText == Self.counts(unchanged: fixture.added, failed: fixture.failed))
        #expect(try sandbox.run(["check"]).status == 0)
    }

    @Test("import of a folder or a missing file is one error naming it, and stores nothing")
    func importOfSomethingUnreadable() throws {
        for path in [sandbox.root, sandbox.root + "/no-such-file.jsonl"] {
            let result = try sandbox.run(["import", path])
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.stderrLines.count == 1 && result.stderrText.hasPrefix("error: import: \(path): "), "\(result)")
            #expect(nothingStored())
        }
        #expect(try sandbox.run(["count"]).stdoutText == "0\n")
    }

    @Test("import reports each bad line with its number on stderr and stores the good lines")
    func importReportsBadLinesAndStoresGoodOnes() throws {
        let path = CLI.fixture("lines-with-bad.jsonl")
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1)
        #expect(result.stdoutText == Self.counts(added: 4, failed: 2))
        #expect(result.stderrLines.count == 2)
        #expect(result.stderrLines.first?.hasPrefix("error: import: \(path): line 3: ") == true, "\(result.stderrLines)")
        #expect(result.stderrLines.last?.hasPrefix("error: import: \(path): line 4: ") == true, "\(result.stderrLines)")
        #expect(try exported().keys.sorted() == ["line-1", "line-2", "line-5", "line-6"])
    }

    @Test(
        "import of JSON Lines stores the good lines whichever line is bad",
        arguments: [0, 1, 2])
    func importStoresGoodLinesWhicheverLineIsBad(badIndex: Int) throws {
        var lines = [#"{"_id":"g1","n":1}"#, #"{"_id":"g2","n":2}"#, #"{"_id":"g3","n":3}"#]
        lines[badIndex] = #"{"_id":"cut","headline":{"main":"cut sho"#
        let path = sandbox.root + "/input.jsonl"
        try sandbox.write(lines.joined(separator: "\n") + "\n", to: path)
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutText == Self.counts(added: 2, failed: 1), "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrText.hasPrefix("error: import: \(path): line \(badIndex + 1): "), "\(result)")
        #expect(try exported().count == 2)
    }

    @Test(
        "import of many batches (each read and encoded while the one before commits) reports bad documents in input order and stores the rest",
        arguments: ["jsonl", "array"])
    func importOfManyBatchesKeepsOrderAndCounts(shape: String) throws {
        // 5,500 documents: three batches of 2,000 at most; bad ones in the first, second and last.
        let bad: Set<Int> = [2, 1_999, 2_000, 4_321, 5_499]
        var documents: [String] = []
        let broken = shape == "jsonl" ? "{\"_id\":\"cut\",\"n\":" : "[\"not an object\"]"
        for n in 0..<5_500 {
            documents.append(bad.contains(n) ? broken : "{\"_id\":\"d\(n)\",\"n\":\(n)}")
        }
        let path = sandbox.root + "/many." + (shape == "jsonl" ? "jsonl" : "json")
        let text = shape == "jsonl" ? documents.joined(separator: "\n") + "\n" : "[" + documents.joined(separator: ",\n") + "]"
        try sandbox.write(text, to: path)
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutText == Self.counts(added: 5_495, failed: 5), "\(result)")
        let places = result.stderrLines.map { line in
            line.dropFirst("error: import: \(path): ".count).prefix { $0 != ":" }
        }
        let expected = bad.sorted().map { shape == "jsonl" ? "line \($0 + 1)" : "element \($0 + 1)" }
        #expect(places.map(String.init) == expected, "\(result.stderrLines.prefix(6))")
        let stored = try exported()
        #expect(stored.count == 5_495)
        #expect(stored["d0"] != nil && stored["d5498"] != nil && stored["d2000"] == nil && stored["d1999"] == nil)
        #expect(try sandbox.run(["check"]).status == 0)
    }

    @Test("import of JSON Lines whose last line was cut off (no newline) stores the complete lines")
    func importOfTornLastLine() throws {
        let path = sandbox.root + "/torn.jsonl"
        try sandbox.write(#"{"_id":"t1","n":1}"# + "\n" + #"{"_id":"t2","n":2}"# + "\n" + #"{"_id":"t3","headline":{"ma"#, to: path)
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1)
        #expect(result.stdoutText == Self.counts(added: 2, failed: 1))
        #expect(result.stderrText.hasPrefix("error: import: \(path): line 3: "), "\(result)")
        #expect(try exported().keys.sorted() == ["t1", "t2"])
    }

    @Test("import of the API's 429 fault body exits 1 with its message and stores nothing")
    func importOfFaultBodyStoresNothing() throws {
        #expect(try sandbox.run(["put", "existing", "{}"]).status == 0)
        let indexBefore = sandbox.contents(sandbox.path(FileNames.index))
        let path = CLI.fixture("fault-429.json")
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrText.hasPrefix("error: import: \(path): "))
        #expect(result.stderrText.contains("Rate limit quota violation. Quota limit  exceeded."))
        #expect(try exported().keys.sorted() == ["existing"])
        #expect(sandbox.contents(sandbox.path(FileNames.index)) == indexBefore)
    }

    @Test("import of a server error's body fails naming the file and the message; an object with an _id or a success status is a document")
    func importOfServerErrorBody() throws {
        let error = sandbox.root + "/error.json"
        try sandbox.write(#"{"timestamp":1,"status":503,"error":"Service Unavailable","message":"try\nlater","path":"/svc"}"#, to: error)
        let refused = try sandbox.run(["import", error])
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        #expect(
            refused.stderrLines == [
                "error: import: \(error): an API error, not documents: HTTP 503 Service Unavailable: try later; nothing was stored"
            ])
        #expect(nothingStored())

        let withID = sandbox.root + "/with-id.json"
        try sandbox.write(#"{"_id":"job-1","status":500,"error":"Internal Server Error"}"#, to: withID)
        #expect(try sandbox.run(["import", withID]).stdoutText == Self.counts(added: 1))
        let succeeded = sandbox.root + "/succeeded.json"
        try sandbox.write(#"{"status":200,"error":"none"}"#, to: succeeded)
        #expect(try sandbox.run(["import", succeeded]).stdoutText == Self.counts(added: 1))
        #expect(try exported().count == 2)
    }

    @Test("import of a truncated JSON array names the line and column and stores nothing")
    func importOfTruncatedArrayStoresNothing() throws {
        let path = CLI.fixture("documents-array-truncated.json")
        let result = try sandbox.run(["import", path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrText.hasPrefix("error: import: \(path): "))
        // The unterminated string opens at column 43 of line 3.
        #expect(result.stderrText.contains("line 3, column 43"), "\(result)")
        #expect(nothingStored())
    }

    @Test("import - reads standard input")
    func importFromStandardInput() throws {
        let lines = ArticleGenerator.jsonLines(count: 40, seed: 7)
        let result = try sandbox.run(["import", "-"], stdin: lines)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == Self.counts(added: 40))
        let expected = byID(importableDocuments(of: lines))
        #expect(expected.count == 40)
        #expect(try exported() == expected)

        // export piped into import - in another folder copies the store exactly.
        let export = try sandbox.run(["export"])
        let copy = sandbox.root + "/copy"
        let imported = try sandbox.run(["--data", copy, "import", "-"], dataOption: false, stdin: export.stdout)
        #expect(imported.stdoutText == Self.counts(added: 40))
        let exportedCopy = try sandbox.run(["--data", copy, "export"], dataOption: false)
        #expect(exportedCopy.stdout == export.stdout)
    }

    static let sampleFiles: [String] =
        (try? FileManager.default.contentsOfDirectory(atPath: NYTSamples.folder))?
        .filter { $0.hasSuffix(".json") }.sorted() ?? []

    @Test("the real NYT samples are all there, with their provenance")
    func realSamplesArePresent() throws {
        #expect(Self.sampleFiles.count == 14, "\(Self.sampleFiles)")
        let sources = try String(contentsOfFile: NYTSamples.path("SOURCES.md"), encoding: .utf8)
        for name in Self.sampleFiles {
            #expect(sources.contains("| \(name) |"), "SOURCES.md does not say where \(name) comes from")
        }
    }

    @Test(
        "import of each real NYT sample stores each of its documents exactly as the API sent it",
        arguments: CommandLineTests.sampleFiles)
    func importRealSample(_ name: String) throws {
        let path = NYTSamples.path(name)
        let source = try #require(sandbox.contents(path))
        let value = try JSONParser.parse(source)
        let result = try sandbox.run(["import", path])
        if let fault = value["fault"] {
            #expect(result.status == 1)
            #expect(result.stderrText.contains(fault["faultstring"]?.stringValue ?? "?"))
            #expect(nothingStored())
            return
        }
        // A server error's body (Spring Boot's {timestamp, status, error, message, path}): one
        // line naming the file and the server's message, and nothing stored.
        if case .number? = value["status"], let message = value["message"]?.stringValue {
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderrText.hasPrefix("error: import: \(path): "), "\(result)")
            #expect(result.stderrText.contains(message), "\(result)")
            #expect(nothingStored())
            return
        }
        // A bare array of documents (a response's docs without the envelope) is imported as any
        // JSON array is: every element stored.
        let docs: [JSONValue]
        if case .array(let elements) = value {
            for element in elements { try #require(element["_id"] != nil, "\(name): an element without _id") }
            docs = elements
        } else if case .array(let responseDocs)? = value["response"]?["docs"] {
            docs = responseDocs
        } else {
            Issue.record("\(name): not an API response")
            return
        }
        let withID = docs.filter { $0["_id"] != nil }
        let failed = docs.count - withID.count
        #expect(result.status == (failed > 0 ? 1 : 0), "\(result)")
        #expect(result.stdoutText == Self.counts(added: withID.count, failed: failed))
        let stored = try exported()
        let expected = byID(withID)
        #expect(stored.count == expected.count)
        for (id, document) in expected {
            #expect(stored[id] == document, "\(name): document \(id) differs after import")
            if let file = sandbox.contents(sandbox.documentFile(id)) {
                #expect(try JSONParser.parse(file) == document)
                #expect(!String(decoding: file, as: UTF8.self).contains(#"\/"#))
            } else {
                Issue.record("\(name): no file for \(id)")
            }
        }
        #expect(try sandbox.run(["check"]).status == 0)
    }

    // MARK: - export

    @Test("export prints one compact document per line sorted by ID bytes, and --to writes the same into a file")
    func exportSortedCompactLines() throws {
        let ids = ["b", "A", "nyt://article/ff", "a", "ünï", "10", "9", "_x", "a b"]
        for (number, id) in ids.enumerated() {
            let put = try sandbox.run(["put", id, #"{"n":\#(number),"headline":{"main":"Doc \#(number)"},"note":null}"#])
            #expect(put.status == 0, "\(put)")
        }
        let result = try sandbox.run(["export"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.last == 0x0A)
        let lines = result.stdoutLines
        #expect(lines.count == ids.count)
        var seen: [String] = []
        for line in lines {
            let document = try JSONParser.parse(line)
            // Compact and canonical: exactly what the compact writer makes of the parsed value.
            #expect(line == JSONWriter.compactString(document))
            #expect(!line.contains(": "))
            seen.append(try #require(document["_id"]?.stringValue))
        }
        let sorted = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(seen == sorted)

        let target = sandbox.root + "/backup.jsonl"
        let toFile = try sandbox.run(["export", "--to", target])
        #expect(toFile.status == 0, "\(toFile)")
        #expect(toFile.stdout.isEmpty)
        #expect(sandbox.contents(target) == result.stdout)
        #expect(tree(sandbox.root).filter { $0.hasPrefix("backup") } == ["backup.jsonl"], "a temporary file was left beside the export")

        let inline = try sandbox.run(["export", "--to=" + sandbox.root + "/inline.jsonl"])
        #expect(inline.status == 0)
        #expect(sandbox.contents(sandbox.root + "/inline.jsonl") == result.stdout)
    }

    @Test("export of more documents than it reads at once writes every one, in ID order, byte for byte as get prints it")
    func exportAcrossReadWindows() throws {
        // More than two windows of reads (Command.exportWindow), with a removed document in the
        // middle and the IDs given in an order unlike their files'.
        let count = Command.exportWindow * 2 + 77
        var lines: [String] = []
        for number in (0..<count).reversed() {
            lines.append(#"{"_id":"doc-\#(String(format: "%06d", number * 7919 % 100_003))","n":\#(number),"t":"x\#(number)"}"#)
        }
        try sandbox.write(lines.joined(separator: "\n") + "\n", to: sandbox.root + "/many.jsonl")
        #expect(try sandbox.run(["import", sandbox.root + "/many.jsonl"]).status == 0)
        let gone = "doc-" + String(format: "%06d", 1000 * 7919 % 100_003)
        #expect(try sandbox.run(["remove", gone]).status == 0)
        let result = try sandbox.run(["export"])
        #expect(result.status == 0, "\(result)")
        let exported = result.stdoutLines
        #expect(exported.count == count - 1)
        let ids = try exported.map { try #require(try JSONParser.parse($0)["_id"]?.stringValue) }
        #expect(ids == ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(!ids.contains(gone))
        for id in [ids[0], ids[Command.exportWindow], ids[ids.count - 1]] {
            let one = try sandbox.run(["get", id, "--format", "jsonl"])
            #expect(exported.contains(one.stdoutText.trimmingCharacters(in: .newlines)))
        }
    }

    @Test("export of an empty folder prints nothing and exits 0")
    func exportOfEmptyFolder() throws {
        let result = try sandbox.run(["export"])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
    }

    // MARK: - stats, check, repair, compact

    @Test("stats, compact, check and repair print their records in json format")
    func maintenanceCommandsInJSONFormat() throws {
        #expect(try sandbox.run(["put", "a", #"{"v":1}"#]).status == 0)
        #expect(try sandbox.run(["put", "b", #"{"v":2}"#]).status == 0)
        #expect(try sandbox.run(["put", "c", #"{"v":3}"#]).status == 0)
        #expect(try sandbox.run(["put", "a", #"{"v":10}"#]).status == 0)
        #expect(try sandbox.run(["remove", "b"]).status == 0)

        let stats = try sandbox.run(["--format", "json", "stats"])
        #expect(stats.status == 0, "\(stats)")
        #expect(stats.stdoutLines.count > 1, "json format is pretty")
        let record = try stats.json()
        #expect(record["folder"] == .string(sandbox.data))
        #expect(record["documents"] == .number("2"))
        #expect(record["index_lines"] == .number("5"))
        #expect(record["dead_entries"] == .number("2"))
        #expect(record["tombstones"] == .number("1"))
        #expect(record["format_version"] == .number(String(StoreMetadata.currentFormat)))
        let documentBytes = (fileFacts(sandbox.documentFile("a"))?.size ?? -1) + (fileFacts(sandbox.documentFile("c"))?.size ?? -1)
        #expect(record["document_bytes"] == .number(String(documentBytes)))
        #expect(record["index_bytes"] == .number(String(fileFacts(sandbox.path(FileNames.index))?.size ?? -1)))
        guard case .array(let projection)? = record["projection"] else {
            Issue.record("projection is not an array: \(stats)")
            return
        }
        #expect(!projection.isEmpty && projection.allSatisfy { $0.stringValue != nil })

        let compact = try sandbox.run(["--format", "json", "compact"])
        #expect(compact.status == 0, "\(compact)")
        let compacted = try compact.json()
        #expect(compacted["dropped"] == .number("2"))
        #expect(compacted["index_lines"] == .number("3"))
        #expect(compacted["feed_start"] == .number("0"))
        #expect(compacted["index_bytes"] == .number(String(fileFacts(sandbox.path(FileNames.index))?.size ?? -1)))
        let after = try sandbox.run(["--format", "json", "stats"]).json()
        #expect(after["dead_entries"] == .number("0"))
        #expect(after["documents"] == .number("2"))

        let check = try sandbox.run(["--format", "json", "check"])
        #expect(check.status == 0)
        #expect(try check.json() == json(#"{"ok":true,"documents":2,"problems":0}"#))
        let repair = try sandbox.run(["--format", "json", "repair"])
        #expect(repair.status == 0)
        #expect(try repair.json() == json(#"{"ok":true,"problems":0}"#))
        #expect(try exported() == ["a": json(#"{"_id":"a","v":10}"#), "c": json(#"{"_id":"c","v":3}"#)])
    }

    @Test("check names a document file holding invalid JSON and exits 1; repair quarantines it and check passes")
    func checkAndRepairBrokenDocument() throws {
        #expect(try sandbox.run(["put", "good", #"{"v":1}"#]).status == 0)
        #expect(try sandbox.run(["put", "broken", #"{"v":2}"#]).status == 0)
        let relative = FileNames.documentPath(for: "broken", in: .nyt)
        let garbage = Array(#"{"_id": "broken", "v": 2, "headline": {"main": "cut"#.utf8)
        try sandbox.write(garbage, to: sandbox.path(relative))

        let check = try sandbox.run(["check"])
        #expect(check.status == 1, "\(check)")
        #expect(check.stderrLines.count == 1)
        #expect(check.stderrText.hasPrefix("error: check: 1 problem"), "\(check)")
        let problems = try check.jsonLines()
        #expect(problems.count == 1)
        #expect(problems.first?["kind"] == .string("unreadable-document"))
        #expect(problems.first?["file"] == .string(relative))
        let table = try sandbox.run(["--format", "table", "check"])
        #expect(table.status == 1)
        #expect(table.stdoutText.hasPrefix(relative + ": "), "\(table)")

        let repair = try sandbox.run(["--format", "json", "repair"])
        #expect(repair.status == 0, "\(repair)")
        guard case .array(let actions) = try repair.json() else {
            Issue.record("repair did not print a list: \(repair)")
            return
        }
        let quarantined = actions.first { $0["action"] == .string("quarantined") }
        #expect(quarantined?["file"] == .string(relative))
        let destination = try #require(quarantined?["to"]?.stringValue)
        #expect(destination.hasPrefix(FileNames.quarantine + "/") && destination.hasSuffix("/" + relative), "\(destination)")
        #expect(sandbox.contents(sandbox.path(destination)) == garbage, "the broken file was not kept as it was")
        #expect(!sandbox.exists(sandbox.path(relative)))

        let checkAgain = try sandbox.run(["--format", "json", "check"])
        #expect(checkAgain.status == 0, "\(checkAgain)")
        #expect(try checkAgain.json() == json(#"{"ok":true,"documents":1,"problems":0}"#))
        #expect(try sandbox.run(["get", "broken"]).status == 1)
        #expect(try exported().keys.sorted() == ["good"])
    }

    @Test("check reports an index entry whose document file is gone; repair rebuilds the index")
    func checkAndRepairMissingDocumentFile() throws {
        for id in ["keep-1", "gone", "keep-2"] {
            #expect(try sandbox.run(["put", id, #"{"id":"\#(id)"}"#]).status == 0)
        }
        let relative = FileNames.documentPath(for: "gone", in: .nyt)
        try FileManager.default.removeItem(atPath: sandbox.path(relative))

        let check = try sandbox.run(["check"])
        #expect(check.status == 1, "\(check)")
        #expect(check.stderrText.hasPrefix("error: check: 1 problem"))
        let problems = try check.jsonLines()
        #expect(problems.count == 1)
        #expect(problems.first?["kind"] == .string("missing-document"))
        #expect(problems.first?["file"] == .string(relative))
        #expect(problems.first?["id"] == .string("gone"))
        let get = try sandbox.run(["get", "gone"])
        #expect(get.status == 1)
        #expect(get.stderrText.hasPrefix("error: "))

        let repair = try sandbox.run(["repair"])
        #expect(repair.status == 0, "\(repair)")
        #expect(try repair.jsonLines().contains { $0["action"] == .string("rebuilt") })
        let checkAgain = try sandbox.run(["--format", "json", "check"])
        #expect(checkAgain.status == 0, "\(checkAgain)")
        #expect(try checkAgain.json() == json(#"{"ok":true,"documents":2,"problems":0}"#))
        #expect(try exported().keys.sorted() == ["keep-1", "keep-2"])
    }

    @Test(
        "a corrupt index.jsonl is rebuilt from the documents on open and the bad one is kept in quarantine",
        arguments: ["appended", "middle", "only"])
    func corruptIndexIsRebuiltOnOpen(where placement: String) throws {
        for id in ["d1", "d2", "d3"] {
            #expect(try sandbox.run(["put", id, #"{"id":"\#(id)"}"#]).status == 0)
        }
        let indexPath = sandbox.path(FileNames.index)
        var lines = CLIResult.lines(String(decoding: try #require(sandbox.contents(indexPath)), as: UTF8.self))
        let garbage = "this line is garbage, not an index entry"
        switch placement {
        case "appended": lines.append(garbage)
        case "middle": lines[1] = garbage
        default: lines = [garbage]
        }
        let corrupt = lines.joined(separator: "\n") + "\n"
        try sandbox.write(corrupt, to: indexPath)

        let stats = try sandbox.run(["--format", "json", "stats"])
        #expect(stats.status == 0, "\(stats)")
        #expect(try stats.json()["documents"] == .number("3"))
        let kept = tree(sandbox.path(FileNames.quarantine)).filter { $0.hasSuffix("/" + FileNames.index) }
        #expect(kept.count == 1, "\(tree(sandbox.data))")
        if let kept = kept.first {
            #expect(sandbox.contents(sandbox.path(FileNames.quarantine + "/" + kept)) == Array(corrupt.utf8))
        }
        #expect(!String(decoding: sandbox.contents(indexPath) ?? [], as: UTF8.self).contains(garbage))
        let check = try sandbox.run(["check"])
        #expect(check.status == 0, "\(check)")
        #expect(try exported().keys.sorted() == ["d1", "d2", "d3"])
    }

    static let commandsOnNewerFolder: [[String]] = [
        ["stats"], ["get", "kept"], ["put", "new", "{}"], ["add", "{}"], ["remove", "kept"], ["export"],
        ["check"], ["repair"], ["compact"], ["import", CLI.fixture("documents-array.json")],
    ]

    @Test(
        "a folder of a newer format version is refused with a clear error and left untouched",
        arguments: CommandLineTests.commandsOnNewerFolder)
    func newerFormatIsRefused(arguments: [String]) throws {
        #expect(try sandbox.run(["put", "kept", #"{"v":1}"#]).status == 0)
        let metadataPath = sandbox.path(FileNames.metadata)
        let metadata = try JSONParser.parse(try #require(sandbox.contents(metadataPath)))
        try sandbox.write(
            JSONWriter.prettyBytes(metadata.setting("format", to: .number(String(StoreMetadata.currentFormat + 1)))), to: metadataPath)
        let before = snapshot(sandbox.data)

        let result = try sandbox.run(arguments)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderrText.hasPrefix("error: "))
        #expect(
            result.stderrText.contains(FileNames.metadata)
                && result.stderrText.contains("format version \(StoreMetadata.currentFormat + 1)")
                && result.stderrText.contains("newer"), "\(result)")
        #expect(sameSnapshot(before, snapshot(sandbox.data)), "the folder changed: \(tree(sandbox.data))")
    }

    @Test("a format-1 folder is migrated by the first command that opens it, which says so once on stderr")
    func formatOneFolderIsMigratedAndSaidOnce() throws {
        // The real format-1 folder of the store tests (its provenance: their Fixtures/SOURCES.md).
        let formatOne = CLI.fixtures.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ArchivistStoreTests/Fixtures/format-1").path
        try FileManager.default.copyItem(atPath: formatOne, toPath: sandbox.data)
        let documents = try FileManager.default.contentsOfDirectory(atPath: sandbox.data + "/docs").count

        let first = try sandbox.run(["count", "section_name = \"Business Day\""])
        #expect(first.status == 0, "\(first)")
        #expect(
            first.stderrLines == [
                "note: \(sandbox.data): migrated from format 1 to 4: built segments/ of 41 documents; "
                    + "every document and index.jsonl kept as they were"
            ], "\(first)")
        let second = try sandbox.run(["count", "section_name = \"Business Day\""])
        #expect(second.status == 0 && second.stderrText.isEmpty, "\(second)")
        #expect(second.stdout == first.stdout)
        let stats = try sandbox.run(["stats", "--format", "json"]).json()
        #expect(stats["format_version"] == .number(String(StoreMetadata.currentFormat)) && stats["documents"] == .number("41"))
        #expect(stats["segment_documents"] == .number("41"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.data + "/docs").count == documents)
        #expect(try sandbox.run(["check"]).status == 0)
    }

    // MARK: - IDs

    static let awkwardIDs: [String] = [
        "../../etc/passwd", "a/b", "with space", "ünïcödé", String(repeating: "long-id-", count: 37) + "1234",
        "ABC", "abc", ".hidden", "..", "nyt://article/../../escape", "nyt://article/ABC/def", "100%25", "tab\there",
        "semi;colon", "quote\"d", "back\\slash", "-starts-with-dash",
    ]

    @Test(
        "an awkward ID round-trips through put and get and its file stays inside the data folder",
        arguments: CommandLineTests.awkwardIDs)
    func awkwardIDRoundTrips(id: String) throws {
        let document = #"{"headline":{"main":"awkward"},"n":1}"#
        let put = try sandbox.run(["put", id, document])
        #expect(put.status == 0, "\(put)")
        #expect(try put.json()["id"]?.stringValue?.utf8.elementsEqual(id.utf8) == true)
        let get = try sandbox.run(["get", id])
        #expect(get.status == 0, "\(get)")
        let stored = try get.json()
        #expect(stored["_id"]?.stringValue?.utf8.elementsEqual(id.utf8) == true)
        #expect(try stored == json(document).setting("_id", to: .string(id)))

        // Nothing outside the data folder (io/ is the harness's own).
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.root).sorted() == ["data", "io"])
        let files = tree(sandbox.data).filter { !$0.hasSuffix("/") }
        let documents = files.filter { $0.hasPrefix(FileNames.documents + "/") }
        #expect(documents == [FileNames.documentPath(for: id, in: .nyt)], "\(files)")
        #expect(documents.allSatisfy { $0.split(separator: "/").count == 3 }, "\(documents)")
        #expect(Set(files).subtracting(documents).isSubset(of: [FileNames.metadata, FileNames.index, FileNames.lock]), "\(files)")
        #expect(documents.allSatisfy { $0.split(separator: "/").allSatisfy { $0.utf8.count <= 255 } }, "a file name is too long")

        let removed = try sandbox.run(["remove", id])
        #expect(removed.status == 0)
        #expect(tree(sandbox.path(FileNames.documents)).filter { !$0.hasSuffix("/") }.isEmpty)
    }

    @Test("IDs differing only in case or in Unicode normalization are distinct documents in one folder")
    func distinctIDsShareAFolder() throws {
        let ids = Self.awkwardIDs + ["caf\u{E9}", "cafe\u{301}", "Abc", "aBC", "%41%42%43", "article~x", "nyt://article/x", "x.json"]
        for (number, id) in ids.enumerated() {
            let put = try sandbox.run(["put", id, #"{"n":\#(number)}"#])
            #expect(put.status == 0, "\(id): \(put)")
            #expect(try put.json()["outcome"] == .string("added"), "\(id) was not a new document: \(put)")
        }
        for (number, id) in ids.enumerated() {
            let get = try sandbox.run(["get", id])
            #expect(try get.json()["n"] == .number(String(number)), "\(id) holds another document: \(get)")
        }
        let exportedIDs = try sandbox.run(["export"]).jsonLines().compactMap { $0["_id"]?.stringValue }
        #expect(exportedIDs.map { Array($0.utf8) } == ids.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(try sandbox.run(["--format", "json", "stats"]).json()["documents"] == .number(String(ids.count)))
        #expect(try sandbox.run(["check"]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.root).sorted() == ["data", "io"])
    }

    // MARK: - Usage

    @Test("help lists every command and exits 0")
    func helpListsCommands() throws {
        let help = try sandbox.run(["help"])
        #expect(help.status == 0)
        #expect(help.stdoutText.hasPrefix("usage: archivist"))
        for command in ["put", "add", "get", "remove", "import", "export", "stats", "check", "repair", "compact", "help"] {
            #expect(help.stdoutLines.contains { $0.hasPrefix("  \(command) ") }, "help does not list \(command)")
        }
        let dashed = try sandbox.run(["--help"])
        #expect(dashed.status == 0)
        #expect(dashed.stdout == help.stdout)
        #expect(!sandbox.exists(sandbox.data), "help created the data folder")
    }

    @Test("help COMMAND prints the command's usage and examples and exits 0", arguments: ["import", "put", "export", "check"])
    func helpForOneCommand(command: String) throws {
        let help = try sandbox.run(["help", command])
        #expect(help.status == 0)
        #expect(help.stderr.isEmpty)
        #expect(help.stdoutText.hasPrefix("usage: archivist \(command)"), "\(help)")
        #expect(help.stdoutText.contains("examples:\n  archivist \(command)"))
    }

    @Test(
        "bad usage exits 64 with one error line and touches nothing",
        arguments: [
            ["frobnicate"], ["put"], ["put", "only-id"], ["get"], ["add"], ["import"], ["remove"],
            ["get", "a", "b"], ["stats", "extra"], ["export", "--bogus"], ["export", "--to"],
            ["--format", "xml", "stats"], ["--format"], ["--data"], ["help", "no-such-command"],
        ])
    func badUsageExits64(arguments: [String]) throws {
        let result = try sandbox.run(arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderrText.hasPrefix("error: "))
        #expect(!sandbox.exists(sandbox.data), "a usage error created the data folder")
    }

    // MARK: - Formats

    @Test("--format csv, table, json and jsonl print the same record", arguments: ["csv", "table", "json", "jsonl", "default"])
    func formatsOfOneRecord(format: String) throws {
        #expect(try sandbox.run(["put", "one", #"{"v":1}"#]).status == 0)
        let arguments = format == "default" ? ["check"] : ["--format", format, "check"]
        let result = try sandbox.run(arguments)
        #expect(result.status == 0, "\(result)")
        switch format {
        case "csv":
            #expect(result.stdoutText == "ok,documents,problems\ntrue,1,0\n")
        case "table":
            #expect(result.stdoutLines.count == 3)
            #expect(
                result.stdoutLines.map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
                    == [["ok", "true"], ["documents", "1"], ["problems", "0"]])
        case "json":
            #expect(result.stdoutText == "{\n  \"ok\": true,\n  \"documents\": 1,\n  \"problems\": 0\n}\n")
        default:
            #expect(result.stdoutText == #"{"ok":true,"documents":1,"problems":0}"# + "\n")
        }
    }

    @Test("global options work before or after the command, and as --option=value")
    func globalOptionsAnywhere() throws {
        #expect(try sandbox.run(["put", "one", #"{"v":1}"#]).status == 0)
        let expected = "ok,documents,problems\ntrue,1,0\n"
        #expect(try sandbox.run(["check", "--format", "csv"]).stdoutText == expected)
        #expect(try sandbox.run(["--format=csv", "check"]).stdoutText == expected)
        #expect(try sandbox.run(["check", "--data=" + sandbox.data, "--format=csv"], dataOption: false).stdoutText == expected)
    }

    @Test("get --format csv prints the top-level fields as columns, quoting cells as RFC 4180 asks")
    func getInCSV() throws {
        #expect(try sandbox.run(["put", "c1", #"{"title":"a, \"quoted\" title","n":5,"none":null,"tags":["x","y"]}"#]).status == 0)
        let result = try sandbox.run(["--format", "csv", "get", "c1"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["_id,n,none,tags,title", #"c1,5,,"[""x"",""y""]","a, ""quoted"" title""#])
    }

    @Test("get of a document file that is not JSON fails with one line naming the file, in jsonl and csv", arguments: ["jsonl", "csv"])
    func getOfABrokenDocumentNamesItsFile(format: String) throws {
        #expect(try sandbox.run(["put", "cut", #"{"v": 1}"#]).status == 0)
        let relative = FileNames.documentPath(for: "cut", in: .nyt)
        try sandbox.write(Array(#"{"_id": "cut", "v": 1"#.utf8), to: sandbox.path(relative))
        let result = try sandbox.run(["--format", format, "get", "cut"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutText.isEmpty)
        let lines = result.stderrText.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(relative), "\(result.stderrText)")
    }

    @Test("import prints its counts in every format")
    func importCountsInEachFormat() throws {
        let path = CLI.fixture("documents-array.json")
        let csv = try sandbox.run(["--format", "csv", "import", path])
        #expect(csv.stdoutText == "added,updated,unchanged,failed\n3,0,0,0\n")
        let pretty = try sandbox.run(["--format", "json", "import", path])
        #expect(pretty.stdoutText == "{\n  \"added\": 0,\n  \"updated\": 0,\n  \"unchanged\": 3,\n  \"failed\": 0\n}\n")
    }

    @Test(
        "the harness runs the archivist built beside this test bundle, whatever the scratch path",
        .enabled(
            if: ProcessInfo.processInfo.environment["ARCHIVIST_BIN"] == nil && FileManager.default.fileExists(atPath: "/proc/self/exe")))
    func harnessFindsTheBinaryBesideTheTests() throws {
        let binary = URL(fileURLWithPath: try CLI.binary()).resolvingSymlinksInPath().deletingLastPathComponent().path
        let tests = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .resolvingSymlinksInPath().deletingLastPathComponent().path
        #expect(binary == tests)
    }

    @Test("--version prints the version and exits 0")
    func versionOption() throws {
        let result = try sandbox.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdoutText.hasPrefix("archivist "))
    }

    // MARK: - Data folder choice

    @Test("ARCHIVIST_DATA chooses the data folder; --data overrides it; ./data is the default")
    func dataFolderChoice() throws {
        let fromEnvironment = sandbox.root + "/from-env"
        let put = try sandbox.run(["put", "env-doc", "{}"], dataOption: false, environment: ["ARCHIVIST_DATA": fromEnvironment])
        #expect(put.status == 0, "\(put)")
        #expect(sandbox.exists(fromEnvironment + "/" + FileNames.documentPath(for: "env-doc", in: .nyt)))
        let stats = try sandbox.run(["--format", "json", "stats"], dataOption: false, environment: ["ARCHIVIST_DATA": fromEnvironment])
        #expect(try stats.json()["folder"] == .string(fromEnvironment))

        let fromOption = sandbox.root + "/from-option"
        let overridden = try sandbox.run(
            ["--data", fromOption, "put", "option-doc", "{}"], dataOption: false,
            environment: ["ARCHIVIST_DATA": fromEnvironment])
        #expect(overridden.status == 0)
        #expect(sandbox.exists(fromOption + "/" + FileNames.documentPath(for: "option-doc", in: .nyt)))
        #expect(!sandbox.exists(fromEnvironment + "/" + FileNames.documentPath(for: "option-doc", in: .nyt)))

        let workingFolder = sandbox.root + "/cwd"
        try FileManager.default.createDirectory(atPath: workingFolder, withIntermediateDirectories: true)
        let byDefault = try sandbox.run(["put", "default-doc", "{}"], dataOption: false, currentDirectory: workingFolder)
        #expect(byDefault.status == 0, "\(byDefault)")
        #expect(sandbox.exists(workingFolder + "/data/" + FileNames.documentPath(for: "default-doc", in: .nyt)))
    }

    // MARK: - Concurrency

    @Test("a writer waiting on the lock gives up after ARCHIVIST_LOCK_TIMEOUT naming the holder's pid; readers are not blocked")
    func lockedWriterGivesUpNamingHolder() throws {
        #expect(try sandbox.run(["put", "before", #"{"v":1}"#]).status == 0)
        let lock = try HeldLock(sandbox.path(FileNames.lock))
        let blocked = try sandbox.run(["put", "during", #"{"v":2}"#], environment: ["ARCHIVIST_LOCK_TIMEOUT": "1"], timeout: 30)
        #expect(blocked.status == 1, "\(blocked)")
        #expect(blocked.stdout.isEmpty)
        #expect(blocked.stderrLines.count == 1)
        #expect(blocked.stderrText.hasPrefix("error: "))
        #expect(blocked.stderrText.contains("pid \(getpid())"), "\(blocked)")
        #expect(blocked.seconds >= 0.9 && blocked.seconds < 10, "waited \(blocked.seconds) s")

        let reader = try sandbox.run(["get", "before"], environment: ["ARCHIVIST_LOCK_TIMEOUT": "1"], timeout: 30)
        #expect(reader.status == 0, "a reader was blocked by the lock: \(reader)")
        lock.release()

        let after = try sandbox.run(["put", "during", #"{"v":2}"#], environment: ["ARCHIVIST_LOCK_TIMEOUT": "1"])
        #expect(after.status == 0, "\(after)")
        #expect(try exported().keys.sorted() == ["before", "during"])
    }

    @Test(
        "check while a writer is mid-commit (lock held, journal written, a document renamed in, index not yet appended) reports no problem")
    func checkDuringAnotherWritersCommitReportsNothing() throws {
        #expect(try sandbox.run(["put", "committed", #"{"v":1}"#]).status == 0)
        // Recreate on disk exactly what a live `import` has between renaming a batch's documents
        // into place and appending their index lines: it holds the lock and its journal names them.
        let lock = try HeldLock(sandbox.path(FileNames.lock))
        defer { lock.release() }
        try sandbox.write(#"{"id":"in-flight"}"# + "\n", to: sandbox.path(FileNames.journal))
        try sandbox.write(JSONWriter.prettyBytes(try json(#"{"_id":"in-flight","v":2}"#)), to: sandbox.documentFile("in-flight"))

        let check = try sandbox.run(["check"], environment: ["ARCHIVIST_LOCK_TIMEOUT": "1"], timeout: 30)
        #expect(check.status == 0, "check reported the other writer's batch in flight as damage: \(check)")
        #expect(!check.stdoutText.contains("in-flight"), "\(check)")
    }

    @Test("two concurrent importers both succeed, one waiting for the other")
    func concurrentImportsBothSucceed() throws {
        let first = ArticleGenerator.jsonLines(count: 300, seed: 101)
        let second = ArticleGenerator.jsonLines(count: 300, seed: 202)
        let firstPath = sandbox.root + "/first.jsonl", secondPath = sandbox.root + "/second.jsonl"
        try sandbox.write(first, to: firstPath)
        try sandbox.write(second, to: secondPath)
        #expect(try sandbox.run(["stats"]).status == 0)  // create the folder first
        let a = try sandbox.start(["import", firstPath])
        let b = try sandbox.start(["import", secondPath])
        let resultA = try a.wait(), resultB = try b.wait()
        #expect(resultA.status == 0, "\(resultA)")
        #expect(resultB.status == 0, "\(resultB)")
        #expect(resultA.stdoutText == Self.counts(added: 300))
        #expect(resultB.stdoutText == Self.counts(added: 300))
        var expected = byID(importableDocuments(of: first))
        expected.merge(byID(importableDocuments(of: second))) { old, _ in old }
        #expect(try exported() == expected)
        #expect(try sandbox.run(["check"]).status == 0)
    }
}

extension CommandLineTests {
    @Test("an import of more documents than the flush threshold leaves them in a segment, and stats lists it")
    func importWritesASegment() throws {
        let path = sandbox.root + "/many.jsonl"
        try sandbox.write(ArticleGenerator.jsonLines(count: 4_200, seed: 12), to: path)
        let imported = try sandbox.run(["import", path])
        #expect(imported.status == 0, "\(imported)")
        let record = try sandbox.run(["--format", "json", "stats"]).json()
        #expect(record["segment_documents"] == .number("4200"))
        #expect(record["segment_count"] == .number("1"))
        #expect(record["changes_after_segments"] == .number("0"))
        guard case .array(let segments)? = record["segments"] else {
            Issue.record("stats lists no segments: \(record)")
            return
        }
        #expect(segments.first?["file"] == .string("segments/000001.seg") && segments.first?["documents"] == .number("4200"))
        #expect(sandbox.exists(sandbox.path(FileNames.manifest)) && sandbox.exists(sandbox.path("segments/000001.seg")))
        // A small import stays in the log.
        let small = sandbox.root + "/small.jsonl"
        try sandbox.write(ArticleGenerator.jsonLines(count: 10, seed: 13), to: small)
        #expect(try sandbox.run(["import", small]).status == 0)
        let after = try sandbox.run(["--format", "json", "stats"]).json()
        #expect(after["segment_documents"] == .number("4200") && after["changes_after_segments"] == .number("10"))
    }
}
