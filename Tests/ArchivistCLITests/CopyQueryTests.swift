import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

/// The shell over a PostgreSQL copy (`--data postgresql://...`): a folder of generated and awkward
/// documents is replicated with the real `archivist replicate` binary (an initial load, then
/// updates and removals copied incrementally), and every query of the differential tables is
/// answered by the folder and by its copy: the counts, the IDs in order (relevance order for a
/// text search), the facet rows and the timelines must be equal. After every test the copy's
/// tables are as they were: reading never writes.
@Suite(
    "the shell over a PostgreSQL copy",
    .enabled(if: PostgresServer.isAvailable, "no PostgreSQL server binaries under /usr/lib/postgresql: apt-get install postgresql-15"))
struct CopyQueryTests {
    /// A folder, its store, and its copy in a new database.
    final class Fixture {
        let sandbox: TemporaryFolder
        let store: DocumentStore
        let copy: PostgresCopy
        let address: String
        let server: PostgresServer
        let database: String
        /// The folder's documents, for drawing values.
        let documents: [JSONValue]

        /// `edgesAfterLoad`: the awkward documents (values of other types than a column's) come
        /// in a later batch, so that the load finds columns that hold every value and the batch
        /// takes that promise back; else the load copies them.
        init(seed: UInt64, count: Int = 400, edgesAfterLoad: Bool = false) throws {
            server = try PostgresServer.shared.get()
            database = try server.makeDatabase()
            sandbox = try TemporaryFolder()
            let writer = try DocumentStore(folder: sandbox.data, schema: .nyt)
            var generator = ArticleGenerator(seed: seed)
            let generated = generator.documents(count)
            let edges = QueryEdgeDocuments.edgeDocuments
            for result in try writer.upsert(edgesAfterLoad ? generated : generated + edges) { _ = try result.outcome.get() }
            // Removals before the initial load (one document stored again since): the load
            // copies the removals the feed keeps.
            let early = generated.prefix(3).compactMap { $0["_id"]?.stringValue }
            try writer.remove(Array(early.dropFirst()))
            for result in try writer.upsert([generated[2]]) { _ = try result.outcome.get() }
            let conninfo = server.connectionString(database: database)
            let first = try sandbox.run(["replicate", conninfo])
            try #require(first.status == 0, "\(first)")
            loadPromises = try Self.promises(server, database)
            if edgesAfterLoad { for result in try writer.upsert(edges) { _ = try result.outcome.get() } }
            // Then changes the copy takes incrementally: updates, new documents, removals.
            let ids = generated.compactMap { $0["_id"]?.stringValue }
            let changed = stride(from: 0, to: ids.count, by: 7).map { index in
                generated[index].setting("section_name", to: .string(index % 2 == 0 ? "Changed After" : "Sports"))
            }
            for result in try writer.upsert(changed) { _ = try result.outcome.get() }
            try writer.remove(stride(from: 3, to: ids.count, by: 11).map { ids[$0] })
            let second = try sandbox.run(["replicate", conninfo])
            try #require(second.status == 0, "\(second)")
            store = try DocumentStore(folder: sandbox.data, schema: .nyt)
            var documents: [JSONValue] = []
            for entry in try store.entries() { documents.append(try #require(try store.document(withID: entry.id))) }
            self.documents = documents
            promises = try Self.promises(server, database)
            address = "postgresql:///\(database)?host=\(server.socketFolder)&user=postgres"
            copy = try PostgresCopy(address: try CopyAddress(address), textSearch: StoreSchema.nyt.textSearch)
        }

        /// The columns that held every value after the load, and now.
        let loadPromises: Set<String>
        let promises: Set<String>

        /// The typed columns the catalog says hold every value at their path.
        static func promises(_ server: PostgresServer, _ database: String) throws -> Set<String> {
            let names = try server.psql(
                "SELECT string_agg(c->>'name', ',') FROM archivist_replicas, jsonb_array_elements(columns) c WHERE (c->>'holds_every_value')::boolean",
                database: database)
            return Set(names.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        }

        /// The copy's tables as one digest: every row and the checkpoint.
        func fingerprint() throws -> String {
            try server.psql(
                "SELECT md5(string_agg(id || ':' || seq || ':' || doc::text || ':' || coalesce(terms::text, ''), ',' ORDER BY id)) || (SELECT md5(string_agg(t::text, ',')) FROM archivist_replicas t) FROM articles",
                database: database)
        }
    }

    static let seeds: [UInt64] = [20_150_701, 20_190_215]
    /// Each seed's folder gets its awkward documents at the load (the first) or after it.
    static func edgesAfterLoad(_ seed: UInt64) -> Bool { seed == seeds[1] }

    /// A value with its numbers spelled as doubles (`jsonb` writes `1e3` as `1000`).
    static func numbersByValue(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let literal): return .number(Double(literal).map { String($0 == 0 ? 0 : $0) } ?? literal)
        case .array(let items): return .array(items.map(numbersByValue))
        case .object(let members): return .object(members.map { JSONMember(key: $0.key, value: numbersByValue($0.value)) })
        default: return value
        }
    }

    /// Facet rows equal: the same values (numbers by value: `jsonb` keeps `1e3` as `1000`) with
    /// the same counts, in the same order.
    static func sameFacets(_ a: [(value: JSONValue, count: Int)], _ b: [(value: JSONValue, count: Int)]) -> Bool {
        a.count == b.count
            && zip(a, b).allSatisfy { x, y in
                guard x.count == y.count else { return false }
                if case .number(let p) = x.value, case .number(let q) = y.value { return Double(p) == Double(q) }
                return x.value == y.value
            }
    }

    @Test("count and find answer every random filter as the folder does: counts, totals, IDs in order", arguments: seeds)
    func findAndCountAgree(seed: UInt64) throws {
        let fixture = try Fixture(seed: seed, edgesAfterLoad: Self.edgesAfterLoad(seed))
        let before = try fixture.fingerprint()
        var generator = QueryGenerator(seed: seed ^ 0xF11, documents: fixture.documents)
        var mismatches = 0
        for round in 0..<260 {
            let filter = generator.filter()
            let expected = try fixture.store.find(Query(filter: filter))
            let actual = try fixture.copy.find(Query(filter: filter), counting: true)
            let counted = try fixture.copy.count(matching: filter)
            if actual.ids != expected.ids || actual.total != expected.total || counted != expected.total {
                mismatches += 1
                if mismatches <= 10 {
                    Issue.record(
                        "seed \(seed) round \(round): \(filter): folder \(expected.total) \(expected.ids.prefix(6)), copy \(actual.total ?? -1)/\(counted) \(actual.ids.prefix(6))"
                    )
                }
            }
        }
        #expect(mismatches == 0, "\(mismatches) of 260 filters differ")
        #expect(try fixture.fingerprint() == before, "the copy changed")
    }

    @Test("sorted, skipped and limited finds return the folder's window", arguments: seeds)
    func sortedWindowsAgree(seed: UInt64) throws {
        let fixture = try Fixture(seed: seed, edgesAfterLoad: Self.edgesAfterLoad(seed))
        let before = try fixture.fingerprint()
        var generator = QueryGenerator(seed: seed ^ 0x5027, documents: fixture.documents)
        var mismatches = 0
        for round in 0..<120 {
            let filter =
                generator.dice.chance(50)
                ? (generator.dice.chance(50) ? .all : .field("pub_date", [.exists(true)])) : generator.filter(depth: 1)
            let sort = generator.sort()
            let skip = generator.dice.chance(60) ? 0 : generator.dice.below(30)
            let limit: Int? = generator.dice.chance(20) ? nil : 1 + generator.dice.below(generator.dice.chance(50) ? 10 : 80)
            let query = Query(filter: filter, sort: sort, skip: skip, limit: limit)
            let expected = try fixture.store.find(query)
            let actual = try fixture.copy.find(query, counting: true)
            if actual.ids != expected.ids || actual.total != expected.total {
                mismatches += 1
                if mismatches <= 10 {
                    let keys = sort.map { "\($0.path)\($0.isDescending ? ":desc" : "")" }
                    Issue.record(
                        "seed \(seed) round \(round): \(filter) sort \(keys) skip \(skip) limit \(limit ?? -1): folder \(expected.ids.prefix(8)), copy \(actual.ids.prefix(8))"
                    )
                }
            }
        }
        #expect(mismatches == 0, "\(mismatches) of 120 sorted queries differ")
        // Text searches ranked: the first ten are the folder's first ten.
        for search in ["election", "court said", "the", "Trump's", "café", "zzyzx"] {
            let query = Query(filter: .text(search), limit: 10)
            #expect(try fixture.copy.find(query).ids == fixture.store.find(query).ids, "ranked search '\(search)'")
        }
        #expect(try fixture.fingerprint() == before, "the copy changed")
    }

    @Test("facets and timelines count what the folder counts", arguments: seeds)
    func facetsAndTimelinesAgree(seed: UInt64) throws {
        let fixture = try Fixture(seed: seed, edgesAfterLoad: Self.edgesAfterLoad(seed))
        let before = try fixture.fingerprint()
        var generator = QueryGenerator(seed: seed ^ 0xFACE7, documents: fixture.documents)
        let paths = [
            "section_name", "news_desk", "word_count", "keywords.value", "byline.original", "pub_date",
            "headline.main", "document_type", "type_of_material", "subsection_name", "source",
        ]
        var mismatches = 0
        for round in 0..<60 {
            let path = generator.dice.pick(paths)
            let filter = generator.dice.chance(30) ? Filter.all : generator.filter(depth: 1)
            let limit: Int? = generator.dice.chance(50) ? nil : 1 + generator.dice.below(12)
            let expected = try fixture.store.facet(path, matching: filter, limit: limit).values
            let actual = try fixture.copy.facet(path, matching: filter, limit: limit)
            if !Self.sameFacets(actual, expected) {
                mismatches += 1
                if mismatches <= 10 {
                    let show = { (rows: [(value: JSONValue, count: Int)]) in
                        rows.prefix(8).map { "\(JSONWriter.compactString($0.value))=\($0.count)" }
                    }
                    Issue.record(
                        "seed \(seed) round \(round): facet \(path) of \(filter) limit \(limit ?? -1): folder \(show(expected)), copy \(show(actual))"
                    )
                }
            }
            let bucket = generator.dice.pick(TimeBucket.allCases)
            let folderTimeline = try fixture.store.timeline("pub_date", by: bucket, matching: filter).buckets
            let copyTimeline = try fixture.copy.timeline("pub_date", by: bucket, matching: filter)
            if folderTimeline.map(\.start) != copyTimeline.map(\.start) || folderTimeline.map(\.count) != copyTimeline.map(\.count) {
                mismatches += 1
                if mismatches <= 10 { Issue.record("seed \(seed) round \(round): timeline by \(bucket) of \(filter) differs") }
            }
        }
        #expect(mismatches == 0, "\(mismatches) facets or timelines differ")
        let filters: [Filter] = [.all, .text("election"), .field("section_name", [.eq(.string("Sports"))])]
        let folder = try fixture.store.timelines("pub_date", by: .year, matching: filters)
        let copied = try fixture.copy.timelines("pub_date", by: .year, matching: filters)
        #expect(folder.starts == copied.starts && folder.counts == copied.counts, "timelines of three filters")
        #expect(try fixture.fingerprint() == before, "the copy changed")
    }

    @Test("a load promises the columns that hold every value, and a batch with a value one cannot hold takes it back")
    func columnPromises() throws {
        let fixture = try Fixture(seed: Self.seeds[1], count: 120, edgesAfterLoad: true)
        #expect(fixture.loadPromises.isSuperset(of: ["section_name", "pub_date"]), "\(fixture.loadPromises)")
        // The awkward documents hold `section_name: true`, `null` and `[]`, and dates that are not dates.
        #expect(!fixture.promises.contains("section_name") && !fixture.promises.contains("pub_date"), "\(fixture.promises)")
        #expect(fixture.promises.isSubset(of: fixture.loadPromises))
        for text in [
            "section_name = Sports", "section_name exists", "section_name missing", "section_name = null", "pub_date < 2016-01-01",
            "pub_date ~ ':00-05'",
        ] {
            let filter = try FilterParser.parse(text)
            #expect(try fixture.copy.count(matching: filter) == fixture.store.find(Query(filter: filter)).total, "\(text)")
        }
    }

    @Test("hostile filters are answered correctly or refused in one line, never an SQL error, and change nothing")
    func hostileFilters() throws {
        let fixture = try Fixture(seed: 7, count: 120)
        let before = try fixture.fingerprint()
        let huge = (0..<20_000).map { JSONValue.string("value \($0) '; DROP TABLE articles; --") } + [.string("Sports")]
        var deep = Filter.field("section_name", [.eq(.string("Sports"))])
        for level in 0..<60 { deep = level % 2 == 0 ? .not(deep) : .and([deep, .all]) }
        let filters: [Filter] = [
            .field("section_name", [.eq(.string("Sports'; DROP TABLE articles; --"))]),
            .field("section_name", [.eq(.string("\"; SELECT pg_sleep(10); --"))]),
            .field("headline.main", [.contains("%_\\'\";")]),
            .field("headline.main", [.gt(.string("') OR 1=1 --"))]),
            .field("a\"b'c;d", [.eq(.number("1"))]),
            .field("headline\" || true || \".main", [.exists(true)]),
            .field("x$y", [.eq(.string("$v"))]),
            .field("section_name", [.in(huge)]),
            .field("keywords.value", [.nin(huge)]),
            .field("word_count", [.in((0..<5_000).map { .number(String($0)) })]),
            .text("election' & 'x'); DROP TABLE articles; --"),
            .text("a:* | !b <-> c"),
            deep,
        ]
        for filter in filters {
            let expected = try fixture.store.find(Query(filter: filter))
            do {
                let actual = try fixture.copy.find(Query(filter: filter), counting: true)
                #expect(actual.ids == expected.ids && actual.total == expected.total, "\(String(describing: filter).prefix(200))")
                #expect(try fixture.copy.count(matching: filter) == expected.total)
            } catch {
                Issue.record("the copy failed on \(String(describing: filter).prefix(200)): \(error)")
            }
        }
        // The infix language, deepest nesting accepted, through the shell.
        let nested = String(repeating: "not (", count: 40) + "section_name = Sports" + String(repeating: ")", count: 40)
        let folder = try fixture.sandbox.run(["count", nested])
        let copied = try fixture.sandbox.run(["--data", fixture.address, "count", nested], dataOption: false)
        #expect(copied.status == 0 && copied.stdoutText == folder.stdoutText, "\(copied)")
        let tooDeep = String(repeating: "(", count: 2_000) + "a = 1" + String(repeating: ")", count: 2_000)
        let refused = try fixture.sandbox.run(["--data", fixture.address, "count", tooDeep], dataOption: false)
        #expect(
            refused.status != 0 && refused.stderrLines.filter { !$0.isEmpty }.count == 1 && !refused.stderrText.contains("SQL state"),
            "\(refused)")
        #expect(try fixture.fingerprint() == before, "the copy changed")
    }

    @Test("writes, fetches and maintenance are refused at once: the copy is read-only and names its folder")
    func readOnlyRefusals() throws {
        let fixture = try Fixture(seed: 11, count: 50)
        let before = try fixture.fingerprint()
        let attempts: [[String]] = [
            ["put", "x", "{}"], ["add", "{}"], ["remove", "x"], ["remove", "--where", "section_name = Sports"], ["import", "/dev/null"],
            ["compact"], ["repair"], ["check"], ["index", "add", "source"], ["archive", "2020-01"], ["search", "election"],
            ["refresh"], ["replicate"], ["watch"],
        ]
        for words in attempts {
            let result = try fixture.sandbox.run(["--data", fixture.address] + words, dataOption: false, timeout: 30)
            let lines = result.stderrLines.filter { !$0.isEmpty }
            #expect(result.status != 0, "\(words): \(result)")
            #expect(
                lines.count == 1 && lines[0].contains("read-only copy") && lines[0].contains(fixture.sandbox.data),
                "\(words): \(result.stderrText)")
        }
        #expect(try fixture.fingerprint() == before, "the copy changed")
    }

    @Test("--data, ARCHIVIST_DATA and .open reach the copy; the shell's first answer is the folder's")
    func theShellOverTheCopy() throws {
        let fixture = try Fixture(seed: 13, count: 200)
        let question = "count section_name = Sports\nfacet section_name --limit 3\n"
        let folder = try fixture.sandbox.run(["--batch", "--format", "jsonl"], stdin: Array(question.utf8))
        let copied = try fixture.sandbox.run(
            ["--data", fixture.address, "--batch", "--format", "jsonl"], dataOption: false, stdin: Array(question.utf8))
        #expect(copied.status == 0 && copied.stdoutText == folder.stdoutText, "\(copied)")
        let fromVariable = try fixture.sandbox.run(
            ["--format", "jsonl", "count", "section_name = Sports"], dataOption: false, environment: ["ARCHIVIST_DATA": fixture.address])
        #expect(fromVariable.stdoutLines.first == folder.stdoutLines.first, "\(fromVariable)")
        let interactive = try fixture.sandbox.run(
            ["--interactive", "--format", "jsonl"], stdin: Array(".open \(fixture.address)\ncount section_name = Sports\n".utf8))
        #expect(interactive.stdoutText.contains("pg:articles> " + folder.stdoutLines[0] + "\n"), "\(interactive)")
        let banner = try fixture.sandbox.run(["--data", fixture.address, "--interactive"], dataOption: false, stdin: [])
        #expect(banner.stdoutText.contains("replicated from \(fixture.sandbox.data)"), "\(banner)")
        let get = try fixture.sandbox.run(["--format", "jsonl", "get", fixture.documents[0]["_id"]!.stringValue!])
        let copiedGet = try fixture.sandbox.run(
            ["--data", fixture.address, "--format", "jsonl", "get", fixture.documents[0]["_id"]!.stringValue!], dataOption: false)
        #expect(copiedGet.status == 0 && (try? JSONParser.parse(copiedGet.stdout)) == (try? JSONParser.parse(get.stdout)), "\(copiedGet)")
    }

    @Test("changes, export, trend and stats of the copy agree with the folder")
    func changesExportTrendAndStats() throws {
        let fixture = try Fixture(seed: 17, count: 150)
        let before = try fixture.fingerprint()
        let copy = ["--data", fixture.address, "--format", "jsonl"]
        // The copy keeps each document's last change, its removal included (without the fields of
        // the document it removed, which the copy no longer has).
        let changes = try fixture.sandbox.run(["--format", "jsonl", "changes", "--fields", "headline.main"])
        var last: [String: JSONValue] = [:]
        for line in try changes.jsonLines() {
            guard case .string(let id)? = line["id"] else { continue }
            last[id] = line["change"] == .string("removed") ? line.setting("headline.main", to: .null) : line
        }
        let removals = last.values.filter { $0["change"] == .string("removed") }.count
        #expect(removals > 10, "the fixture removes documents before and after the load")
        let expected = Array(last.values)
        let copied = try fixture.sandbox.run(copy + ["changes", "--fields", "headline.main"], dataOption: false)
        let copiedLines = try copied.jsonLines().map(JSONWriter.compactString).sorted()
        let expectedLines = expected.map(JSONWriter.compactString).sorted()
        #expect(
            copiedLines == expectedLines,
            "only the copy: \(copiedLines.filter { !expectedLines.contains($0) }.prefix(3)); only the folder: \(expectedLines.filter { !copiedLines.contains($0) }.prefix(3))"
        )
        let since = try fixture.sandbox.run(copy + ["changes", "--since", "100", "--limit", "5"], dataOption: false)
        let numbers = try since.jsonLines().map { line -> Int in
            if case .number(let seq)? = line["seq"] { return Int(seq) ?? 0 }
            return 0
        }
        #expect(numbers.count == 5 && numbers.allSatisfy { $0 > 100 }, "\(since)")
        for words in [["export"], ["export", "section_name = Sports"]] {
            let folder = try fixture.sandbox.run(["--format", "jsonl"] + words)
            let copied = try fixture.sandbox.run(copy + words, dataOption: false)
            #expect(try copied.jsonLines().map(Self.numbersByValue) == folder.jsonLines().map(Self.numbersByValue), "\(words)")
        }
        let trend = ["trend", "election", "court", "--by", "year"]
        let folderTrend = try fixture.sandbox.run(["--format", "jsonl"] + trend)
        let copiedTrend = try fixture.sandbox.run(copy + trend, dataOption: false)
        #expect(copiedTrend.status == 0 && copiedTrend.stdoutText == folderTrend.stdoutText, "\(copiedTrend)")
        let stats = try fixture.sandbox.run(["--data", fixture.address, "--format", "json", "stats"], dataOption: false).json()
        let folderStats = try fixture.sandbox.run(["--format", "json", "stats"]).json()
        #expect(stats["documents"] == folderStats["documents"] && stats["checkpoint_seq"] == folderStats["last_seq"])
        #expect(stats["replicated_from"] == .string(fixture.sandbox.data) && stats["changes_pending"] == .number("0"))
        #expect(try fixture.fingerprint() == before, "the copy changed")
    }

    @Test("a connection lost between two reads is made again by the next one")
    func aLostConnectionIsMadeAgain() throws {
        let fixture = try Fixture(seed: 19, count: 40)
        let filter = Filter.field("section_name", [.eq(.string("Sports"))])
        let expected = try fixture.store.count(matching: filter).count
        #expect(try fixture.copy.count(matching: filter) == expected)
        // The server ends the copy's session (as a restart would).
        try fixture.server.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(fixture.database)' AND pid <> pg_backend_pid()")
        #expect(try fixture.copy.count(matching: filter) == expected)
        #expect(try fixture.copy.count(matching: filter) == expected)
    }
}
