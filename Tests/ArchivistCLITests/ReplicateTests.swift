import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `archivist replicate` against a real PostgreSQL 15 server that the tests start themselves
/// (`PostgresServer`: initdb and pg_ctl in a temporary folder, as the postgres user, on a Unix
/// socket). Every test ends by comparing the copy with the folder: the same IDs with the same
/// sequence numbers, each document equal as jsonb, and the checkpoint's row count the table's.
@Suite(
    "replicate into PostgreSQL",
    .enabled(if: PostgresServer.isAvailable, "no PostgreSQL server binaries under /usr/lib/postgresql: apt-get install postgresql-15"))
struct ReplicateTests {
    /// The shared server and a new database in it.
    static func database() throws -> (server: PostgresServer, conninfo: String) {
        let server = try PostgresServer.shared.get()
        let name = try server.makeDatabase()
        return (server, server.connectionString(database: name))
    }

    /// A folder of `count` generated articles (seed 5), imported through the CLI.
    static func folder(_ sandbox: TemporaryFolder, count: Int, seed: UInt64 = 5) throws {
        let file = sandbox.root + "/articles-\(seed).jsonl"
        try sandbox.write(ArticleGenerator.jsonLines(count: count, seed: seed), to: file)
        let imported = try sandbox.run(["import", file])
        try #require(imported.status == 0, "\(imported)")
    }

    /// The folder's live documents (compact JSON by ID) and the sequence number of each one's last change.
    static func folderState(_ sandbox: TemporaryFolder) throws -> (documents: [String: String], sequences: [String: Int]) {
        let exported = try sandbox.run(["export", "--format", "jsonl"])
        try #require(exported.status == 0, "\(exported)")
        var documents: [String: String] = [:]
        for line in exported.stdoutLines where !line.isEmpty {
            guard case .string(let id)? = try json(line)["_id"] else { continue }
            documents[id] = line
        }
        let changes = try sandbox.run(["changes", "--format", "jsonl"])
        try #require(changes.status == 0, "\(changes)")
        var sequences: [String: Int] = [:]
        for line in changes.stdoutLines where !line.isEmpty {
            let change = try json(line)
            guard case .string(let id)? = change["id"], case .number(let seq)? = change["seq"] else { continue }
            if case .string("removed")? = change["change"] {
                sequences[id] = nil
            } else {
                sequences[id] = Int(seq)
            }
        }
        return (documents, sequences)
    }

    /// The copy equals the folder: IDs and numbers, documents as jsonb, the checkpoint's rows.
    static func expectCopyEqualsFolder(
        _ sandbox: TemporaryFolder, conninfo: String, table: String = "articles", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (documents, sequences) = try folderState(sandbox)
        #expect(Set(documents.keys) == Set(sequences.keys), sourceLocation: sourceLocation)
        let connection = try PostgresConnection(ConnectionInfo(conninfo))
        defer { connection.close() }
        let rows = try connection.execute("SELECT id, seq FROM \(table) ORDER BY id", doing: "reading the copy")
        var copied: [String: Int] = [:]
        for row in rows.values { copied[row[0]!] = Int(row[1]!)! }
        #expect(copied == sequences, "IDs and sequence numbers differ", sourceLocation: sourceLocation)
        let array = "[" + documents.values.joined(separator: ",") + "]"
        let equal = try connection.execute(
            "SELECT count(*) FROM \(table) t JOIN jsonb_array_elements($1::jsonb) e(d) ON t.id = e.d->>'_id' WHERE t.doc = e.d", [array],
            doing: "comparing documents")
        #expect(Int(equal.scalar ?? "") == documents.count, "documents differ as jsonb", sourceLocation: sourceLocation)
        let counted = try connection.execute(
            "SELECT (SELECT count(*) FROM \(table)), rows, last_seq FROM archivist_replicas WHERE table_name = $1", [table],
            doing: "reading the checkpoint")
        let checkpoint = try #require(counted.values.first, sourceLocation: sourceLocation)
        #expect(checkpoint[0] == checkpoint[1], "the checkpoint's row count is the table's", sourceLocation: sourceLocation)
        let last = try sandbox.run(["changes", "--format", "jsonl"]).stdoutLines.compactMap { line -> Int? in
            guard !line.isEmpty, case .number(let seq)? = try json(line)["seq"] else { return nil }
            return Int(seq)
        }.max()
        if let last {
            #expect(Int(checkpoint[2] ?? "") == last, "the checkpoint is the folder's last change", sourceLocation: sourceLocation)
        }
    }

    /// `put` of a new version of `id` (a field `revision` set to `revision`).
    static func putRevision(_ sandbox: TemporaryFolder, id: String, revision: Int) throws {
        let put = try sandbox.run(["put", id, #"{"headline":{"main":"revision \#(revision)"},"revision":\#(revision)}"#])
        try #require(put.status == 0, "\(put)")
    }

    /// Waits until `--status` shows nothing pending (at most `timeout` seconds).
    static func waitUntilCaughtUp(_ sandbox: TemporaryFolder, conninfo: String, timeout: Double = 60) throws {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            let status = try sandbox.run(["replicate", conninfo, "--status", "--format", "json"])
            if status.status == 0, case .number("0")? = try status.json()["pending"] { return }
            usleep(100_000)
        }
        Issue.record("the follower did not catch up within \(timeout) s")
    }

    @Test("the initial load copies the folder, then each run copies only what changed since")
    func initialLoadThenIncrementalRuns() throws {
        let (_, conninfo) = try Self.database()
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 400)
        let first = try sandbox.run(["replicate", conninfo, "--format", "json"])
        try #require(first.status == 0, "\(first)")
        let report = try first.json()
        #expect(report["loaded"] == .string("initial load"))
        #expect(report["rows"] == .number("400"))
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)

        let ids = try Self.folderState(sandbox).documents.keys.sorted()
        for (number, id) in ids.prefix(5).enumerated() { try Self.putRevision(sandbox, id: id, revision: number) }
        for number in 0..<5 { try Self.putRevision(sandbox, id: "new-\(number)", revision: number) }
        let removed = try sandbox.run(["remove"] + Array(ids.suffix(5)))
        try #require(removed.status == 0, "\(removed)")
        let second = try sandbox.run(["replicate", conninfo, "--format", "json"])
        try #require(second.status == 0, "\(second)")
        let incremental = try second.json()
        #expect(incremental["loaded"] == .null)
        #expect(incremental["changes"] == .number("15"))
        #expect(incremental["written"] == .number("10"))
        #expect(incremental["deleted"] == .number("5"))
        #expect(incremental["rows"] == .number("400"))
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)

        let third = try sandbox.run(["replicate", conninfo, "--format", "json"])
        #expect(try third.json()["changes"] == .number("0"))
        let status = try sandbox.run(["replicate", conninfo, "--status", "--format", "json"]).json()
        #expect(status["pending"] == .number("0"))
        #expect(status["rows"] == .number("400"))
        #expect(status["problem"] == .null)
    }

    @Test("an initial load spread over many windows and three connections copies every document once, indexed, compressed by lz4")
    func initialLoadOnSeveralConnections() throws {
        let (_, conninfo) = try Self.database()
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 300, seed: 9)
        let loaded = try sandbox.run(
            ["replicate", conninfo, "--format", "json"],
            environment: ["ARCHIVIST_REPLICATE_BATCH": "16", "ARCHIVIST_REPLICATE_CONNECTIONS": "3"])
        try #require(loaded.status == 0, "\(loaded)")
        #expect(try loaded.json()["rows"] == .number("300"))
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
        let connection = try PostgresConnection(ConnectionInfo(conninfo))
        defer { connection.close() }
        let keys = try connection.execute(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'articles'::regclass AND contype = 'p'", doing: "reading the key")
        #expect(keys.scalar == "1")
        let indexes = try connection.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'articles' ORDER BY 1", doing: "listing the indexes")
        let names = Set(indexes.values.compactMap { $0[0] })
        #expect(names.isSuperset(of: ["articles_pkey", "articles_seq", "articles_doc", "articles_terms"]), "\(names)")
        #expect(!names.contains { $0.contains("__load") }, "\(names)")
        let compression = try connection.execute(
            """
            SELECT count(*) FILTER (WHERE pg_column_compression(doc) = 'lz4'), count(*) FILTER (WHERE pg_column_compression(doc) = 'pglz')
            FROM articles
            """, doing: "reading the compression")
        let counts = try #require(compression.values.first)
        #expect(Int(counts[0] ?? "") ?? 0 > 0, "no document was compressed by lz4: \(counts)")
        #expect(counts[1] == "0")
    }

    @Test("a follower keeps the copy equal to a folder that three writers change at once")
    func followerWithThreeWriters() throws {
        let (_, conninfo) = try Self.database()
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 200)
        let follower = try sandbox.start(["replicate", conninfo, "--follow", "--format", "json"])
        var writers: [RunningCLI] = []
        for writer in 0..<3 {
            var script = ""
            for step in 0..<40 {
                let id = "writer\(writer)-\(step % 15)"
                if step % 7 == 6 {
                    // The document the step before put.
                    script += "remove writer\(writer)-\((step - 1) % 15)\n"
                } else {
                    script += #"put \#(id) {"headline":{"main":"step \#(step)"},"writer":\#(writer)}"# + "\n"
                }
            }
            // Three writers queue for the folder's lock: a busy machine must not time them out.
            writers.append(try sandbox.start(["--batch"], stdin: Array(script.utf8), environment: ["ARCHIVIST_LOCK_TIMEOUT": "120"]))
        }
        for writer in writers {
            let done = try writer.wait(timeout: 120)
            #expect(done.status == 0, "\(done)")
        }
        try Self.waitUntilCaughtUp(sandbox, conninfo: conninfo)
        follower.signal(SIGINT)
        let stopped = try follower.wait(timeout: 60)
        #expect(stopped.status == 0, "\(stopped)")
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
    }

    @Test("replicate killed at many points and run again loses nothing and applies nothing twice")
    func killedAndRestarted() throws {
        let server = try PostgresServer.shared.get()
        let name = try server.makeDatabase()
        let conninfo = server.connectionString(database: name)
        // The server ends a killed client's session (and its advisory lock on the table) only when
        // it notices the closed socket: the next run waits for that, as a person would.
        func waitForKilledSession() throws {
            let deadline = Date().addingTimeInterval(30)
            let held =
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            while try server.psql(held, database: name).trimmingCharacters(in: .whitespacesAndNewlines) != "0" {
                try #require(Date() < deadline, "a killed replicate's session still holds its lock after 30 s")
                usleep(20_000)
            }
        }
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 1_500)
        let small = ["ARCHIVIST_REPLICATE_BATCH": "40"]
        // Kills during the initial load, each after a longer while.
        for delay in [0.05, 0.15, 0.3, 0.6, 1.0] {
            let run = try sandbox.start(["replicate", conninfo], environment: small)
            usleep(UInt32(delay * 1_000_000))
            run.signal(SIGKILL)
            _ = try run.wait(timeout: 30)
            try waitForKilledSession()
        }
        let finished = try sandbox.run(["replicate", conninfo], environment: small)
        try #require(finished.status == 0, "\(finished)")
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
        // Then kills between and inside the batches of an incremental run.
        let ids = try Self.folderState(sandbox).documents.keys.sorted()
        var script = ""
        for (number, id) in ids.prefix(300).enumerated() {
            script += number % 5 == 4 ? "remove \(id)\n" : #"put \#(id) {"revision":\#(number)}"# + "\n"
        }
        let changed = try sandbox.run(["--batch"], stdin: Array(script.utf8))
        try #require(changed.status == 0, "\(changed)")
        for delay in [0.02, 0.05, 0.1, 0.2, 0.3] {
            let run = try sandbox.start(["replicate", conninfo], environment: ["ARCHIVIST_REPLICATE_BATCH": "10"])
            usleep(UInt32(delay * 1_000_000))
            run.signal(SIGKILL)
            _ = try run.wait(timeout: 30)
            try waitForKilledSession()
        }
        let last = try sandbox.run(["replicate", conninfo, "--format", "json"], environment: small)
        try #require(last.status == 0, "\(last)")
        #expect(try last.json()["loaded"] == .null)
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
    }

    @Test("a follower rides out the server stopped at once and started again")
    func followerRidesOutServerRestart() throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let name = try server.makeDatabase()
        let conninfo = server.connectionString(database: name)
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 100)
        let follower = try sandbox.start(["replicate", conninfo, "--follow"])
        try Self.waitUntilCaughtUp(sandbox, conninfo: conninfo)
        try server.stopImmediately()
        for number in 0..<20 { try Self.putRevision(sandbox, id: "while-down-\(number)", revision: number) }
        usleep(1_500_000)
        try server.start()
        try Self.waitUntilCaughtUp(sandbox, conninfo: conninfo)
        follower.signal(SIGINT)
        let stopped = try follower.wait(timeout: 30)
        #expect(stopped.status == 0, "\(stopped)")
        #expect(stopped.stderrText.contains("trying again"), "\(stopped)")
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
    }

    @Test("after compact and repair the next run is incremental: it writes only what changed")
    func compactAndRepairKeepTheCopyIncremental() throws {
        let (_, conninfo) = try Self.database()
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 300)
        let ids = try Self.folderState(sandbox).documents.keys.sorted()
        let removed = try sandbox.run(["remove", ids[0], ids[1]])
        try #require(removed.status == 0)
        for (number, id) in ids[2..<6].enumerated() { try Self.putRevision(sandbox, id: id, revision: number) }
        try #require(try sandbox.run(["replicate", conninfo]).status == 0)
        // More changes, then compact: they reach the copy, and nothing else is written.
        try Self.putRevision(sandbox, id: ids[10], revision: 10)
        try #require(try sandbox.run(["remove", ids[11]]).status == 0)
        let compacted = try sandbox.run(["compact"])
        try #require(compacted.status == 0, "\(compacted)")
        let afterCompact = try sandbox.run(["replicate", conninfo, "--format", "json"])
        try #require(afterCompact.status == 0, "\(afterCompact)")
        let compactReport = try afterCompact.json()
        #expect(compactReport["loaded"] == .null)
        #expect(compactReport["written"] == .number("1"))
        #expect(compactReport["deleted"] == .number("1"))
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
        // A document edited by hand, and repair: only that document is written.
        let file = sandbox.documentFile(ids[20])
        var document = try json(String(decoding: try #require(sandbox.contents(file)), as: UTF8.self))
        document = document.setting("edited_by_hand", to: .bool(true))
        try sandbox.write(JSONWriter.prettyBytes(document), to: file)
        let repaired = try sandbox.run(["repair"])
        try #require(repaired.status == 0, "\(repaired)")
        let afterRepair = try sandbox.run(["replicate", conninfo, "--format", "json"])
        try #require(afterRepair.status == 0, "\(afterRepair)")
        let repairReport = try afterRepair.json()
        #expect(repairReport["loaded"] == .null)
        #expect(repairReport["written"] == .number("1"))
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
    }

    @Test("a folder swapped for another, or restored from an older copy, is detected and resynced")
    func resetsAreDetected() throws {
        let (_, conninfo) = try Self.database()
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 120)
        try #require(try sandbox.run(["replicate", conninfo]).status == 0)
        // An older copy of the folder, kept aside; then more changes, copied.
        let backup = sandbox.root + "/backup"
        try FileManager.default.copyItem(atPath: sandbox.data, toPath: backup)
        for number in 0..<3 { try Self.putRevision(sandbox, id: "later-\(number)", revision: number) }
        try #require(try sandbox.run(["replicate", conninfo]).status == 0)
        // The folder restored from the backup: its last change is below the checkpoint.
        try FileManager.default.removeItem(atPath: sandbox.data)
        try FileManager.default.copyItem(atPath: backup, toPath: sandbox.data)
        let restored = try sandbox.run(["replicate", conninfo])
        #expect(restored.status == 1, "\(restored)")
        #expect(restored.stderrLines.filter { !$0.isEmpty }.count == 1, "\(restored)")
        #expect(restored.stderrText.contains("older copy") && restored.stderrText.contains("--resync"), "\(restored)")
        let resynced = try sandbox.run(["replicate", conninfo, "--resync", "--format", "json"])
        try #require(resynced.status == 0, "\(resynced)")
        #expect(try resynced.json()["loaded"] == .string("resync"))
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
        // Another folder in its place.
        try FileManager.default.removeItem(atPath: sandbox.data)
        usleep(5_000)
        try Self.folder(sandbox, count: 50, seed: 9)
        let swapped = try sandbox.run(["replicate", conninfo])
        #expect(swapped.status == 1, "\(swapped)")
        #expect(swapped.stderrText.contains("made from a folder created"), "\(swapped)")
        let rebuilt = try sandbox.run(["replicate", conninfo, "--resync"])
        try #require(rebuilt.status == 0, "\(rebuilt)")
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
    }

    @Test("a wrong password, a missing database and a role without rights are each one line, with no password")
    func connectionErrors() throws {
        let server = try PostgresServer.shared.get()
        let database = try server.makeDatabase()
        try server.psql("DO $$ BEGIN CREATE ROLE alice LOGIN PASSWORD 'Alice-Pass-31'; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        try server.psql("DO $$ BEGIN CREATE ROLE carol LOGIN PASSWORD 'Carol-Pass-77'; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        try server.psql("CREATE SCHEMA carol AUTHORIZATION carol", database: database)
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 30)
        let cases: [(String, String, String)] = [
            (
                server.connectionString(database: database, user: "alice", password: "Wrong-Secret-9"), "password authentication failed",
                "Wrong-Secret-9"
            ),
            ("postgresql://alice:Alice-Pass-31@/nosuchdb?host=\(server.socketFolder)", "nosuchdb", "Alice-Pass-31"),
            (server.connectionString(database: database, user: "alice", password: "Alice-Pass-31"), "permission denied", "Alice-Pass-31"),
        ]
        for (conninfo, expected, secret) in cases {
            let result = try sandbox.run(["replicate", conninfo])
            #expect(result.status == 1, "\(result)")
            let lines = result.stderrLines.filter { !$0.isEmpty }
            #expect(lines.count == 1, "\(result)")
            #expect(result.stderrText.contains(expected), "\(result)")
            #expect(!result.stderrText.contains(secret) && !result.stdoutText.contains(secret), "\(result)")
        }
        // A role with rights on its own schema only: the copy goes there.
        let own = try sandbox.run(["replicate", server.connectionString(database: database, user: "carol", password: "Carol-Pass-77")])
        #expect(own.status == 0, "\(own)")
        #expect(!own.stdoutText.contains("Carol-Pass-77"))
        #expect(
            try server.psql("SELECT count(*) FROM carol.articles", database: database).trimmingCharacters(in: .whitespacesAndNewlines)
                == "30")
    }

    @Test("a second replicate into the same table while one holds it stops with one line and writes nothing")
    func secondReplicateIsRefused() throws {
        let (_, conninfo) = try Self.database()
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 20)
        // The lock a running replicate holds for its session.
        let holder = try PostgresConnection(ConnectionInfo(conninfo))
        defer { holder.close() }
        let locked = try holder.execute(
            "SELECT pg_try_advisory_lock(hashtext($1))", ["archivist replicate articles"], doing: "taking the lock")
        try #require(locked.scalar == "t")
        let second = try sandbox.run(["replicate", conninfo])
        #expect(second.status == 1, "\(second)")
        #expect(second.stderrLines.filter { !$0.isEmpty }.count == 1, "\(second)")
        #expect(second.stderrText.contains("another 'archivist replicate'"), "\(second)")
        let tables = try holder.execute(
            "SELECT to_regclass('articles') IS NULL AND to_regclass('articles__load') IS NULL", doing: "looking")
        #expect(tables.scalar == "t")
        // Once the lock is let go, the copy is made.
        try holder.execute("SELECT pg_advisory_unlock_all()", doing: "letting go")
        #expect(try sandbox.run(["replicate", conninfo]).status == 0)
        try Self.expectCopyEqualsFolder(sandbox, conninfo: conninfo)
    }

    @Test("a table that replicate did not make is left alone", arguments: ["articles", "nyt.articles"])
    func foreignTableIsLeftAlone(table: String) throws {
        let (server, conninfo) = try Self.database()
        let database = String(conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }!.dropFirst("dbname=".count))
        try server.psql(
            "CREATE SCHEMA IF NOT EXISTS nyt; CREATE TABLE \(table) (id text); INSERT INTO \(table) VALUES ('mine')", database: database)
        let sandbox = try TemporaryFolder()
        try Self.folder(sandbox, count: 10)
        let result = try sandbox.run(["replicate", conninfo, "--table", table])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText.contains("not a copy this folder made"), "\(result)")
        #expect(try server.psql("SELECT id FROM \(table)", database: database).trimmingCharacters(in: .whitespacesAndNewlines) == "mine")
        let bad = try sandbox.run(["replicate", conninfo, "--table", "articles; DROP TABLE x"])
        #expect(bad.status == 64, "\(bad)")
    }
}
