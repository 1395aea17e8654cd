import ArchivistBase
import ArchivistStore
import Dispatch
import Foundation
import Synchronization

/// Copies a data folder into a PostgreSQL table and keeps it up to date from the changes feed,
/// exactly once: each batch of changes (the last change of each ID in it) and the advance of the
/// checkpoint commit in one transaction, so that a restart after a crash of either side resumes
/// where the copy is, with nothing lost and nothing applied twice.
///
/// The copy is one table (`docs/REPLICATION.md`): `id`, `seq`, the document as `jsonb`,
/// `stored_at`, `updated_at`, `terms` (Archivist's own folded words, weighted by field) and a typed
/// column per projected field of one obvious type; and a row of `archivist_replicas`, the
/// checkpoint (the folder's identity, the feed's start, the last sequence number applied, the rows).
public final class Replicator {
    /// What a pass did.
    public struct Report: Sendable, Equatable {
        /// Whether the table was (re)built from the whole folder, and why.
        public var loaded: LoadReason?
        /// Changes read from the feed (after the load, if any).
        public var changes: Int = 0
        /// Rows written (inserted or updated) and deleted.
        public var written: Int = 0
        /// Rows deleted.
        public var deleted: Int = 0
        /// The checkpoint after the pass.
        public var checkpoint: Int = 0
        /// The table's rows after the pass.
        public var rows: Int = 0

        /// Adds what a later batch or pass did: its counts, and where it left the checkpoint.
        mutating func absorb(_ later: Report) {
            if let loaded = later.loaded { self.loaded = loaded }
            changes += later.changes
            written += later.written
            deleted += later.deleted
            checkpoint = later.checkpoint
            rows = later.rows
        }
    }

    /// Why the whole folder was copied.
    public enum LoadReason: String, Sendable, Equatable {
        /// The table did not exist (or its last load did not finish).
        case initial = "initial load"
        /// `--resync` asked for it.
        case resync
    }

    /// What `--status` reports.
    public struct Status: Sendable, Equatable {
        /// The folder's highest sequence number.
        public var folderSequence: Int
        /// Where the folder's feed starts.
        public var feedStart: Int
        /// The checkpoint: the last number applied to the copy (nil: no copy yet).
        public var checkpoint: Int?
        /// Changes after the checkpoint.
        public var pending: Int
        /// Seconds between the oldest change not yet in the copy and now (0 when none).
        public var lag: Double
        /// Rows in the copy.
        public var rows: Int?
        /// When the checkpoint last moved.
        public var updatedAt: String?
        /// The folder the copy was made from, as its checkpoint names it.
        public var source: String?
        /// Why the copy cannot go on incrementally, when it cannot.
        public var problem: String?
    }

    /// What the follower reports as it goes.
    public enum Event {
        /// The initial load's progress: documents copied so far, of about `total`.
        case loading(copied: Int, total: Int)
        /// A batch was committed.
        case batch(Report)
        /// The connection was lost or refused; the next try is in `retry` seconds.
        case disconnected(PostgresError, retry: Double)
        /// Connected again.
        case reconnected
    }

    /// The folder copied.
    public let store: DocumentStore
    /// The server.
    public let info: ConnectionInfo
    /// The copy's table.
    public let table: TableName
    /// Changes per batch (and documents per COPY of the initial load).
    public var batchSize = 2_000
    /// Connections the initial load copies and indexes on at once (each a backend, a core of
    /// the server's).
    public var loadConnections = 2

    private var connection: PostgresConnection?
    private var columns: [ReplicaColumn] = []
    private var stagingMade = false

    /// The checkpoint table, in the copy's schema.
    var catalog: String { table.qualified("archivist_replicas") }

    /// A replicator of `store` into `table` on the server `info` names (not connected yet).
    public init(store: DocumentStore, info: ConnectionInfo, table: TableName = .standard) {
        self.store = store
        self.info = info
        self.table = table
    }

    /// Closes the connection.
    public func close() {
        connection?.close()
        connection = nil
        stagingMade = false
    }

    /// The open connection, made (and the table locked for this process) when there is none.
    private func connected() throws(PostgresError) -> PostgresConnection {
        if let connection, connection.isOpen { return connection }
        close()
        let connection = try PostgresConnection(info)
        // One replicate per table: a session-level advisory lock, released when the session ends.
        let locked = try connection.execute(
            "SELECT pg_try_advisory_lock(hashtext($1))", ["archivist replicate " + table.description], doing: "locking table \(table)")
        guard locked.scalar == "t" else {
            connection.close()
            throw .busy(table: table.description)
        }
        try Replicator.prepareSession(connection)
        self.connection = connection
        return connection
    }

    // MARK: - One pass

    /// Brings the copy up to date with the folder: the initial load when there is no copy (or
    /// `resync`), else the changes after the checkpoint, a batch at a time. A copy that no longer
    /// follows the folder (another folder, an older backup, a feed purged past the checkpoint)
    /// fails with `.copyReset` unless `resync`.
    public func run(resync: Bool = false, shouldStop: () -> Bool = { false }, events: (Event) -> Void = { _ in }) throws -> Report {
        let connection = try connected()
        try createCatalog(connection)
        var report = Report()
        let checkpoint = try readCheckpoint(connection)
        let exists = try tableExists(connection, table.name)
        if resync || checkpoint == nil || checkpoint?.loaded == false || !exists {
            if checkpoint == nil, exists {
                let rows = try connection.execute("SELECT count(*) FROM \(table.sql)", doing: "counting the rows of \(table)").scalar
                if rows != "0" {
                    throw PostgresError.unusableTable(
                        table: table.description,
                        reason:
                            "it exists with \(rows ?? "?") rows and no checkpoint in archivist_replicas: it is not a copy this folder made (choose another --table, or drop it)"
                    )
                }
            }
            report.loaded = checkpoint == nil || checkpoint?.loaded == false ? .initial : .resync
            let loaded = try load(connection, shouldStop: shouldStop, events: events)
            report.checkpoint = loaded.checkpoint
            report.rows = loaded.rows
            report.written = loaded.rows
            report.changes = loaded.changes
        } else if let checkpoint {
            try verify(checkpoint)
            try createRemovals(connection, table.name + "_removed")
            columns = checkpoint.columns
            report.checkpoint = checkpoint.lastSequence
            report.rows = checkpoint.rows
        }
        while !shouldStop() {
            let batch = try applyNextBatch(connection, after: report.checkpoint, rows: report.rows)
            guard let batch else { break }
            report.absorb(batch)
            events(.batch(batch))
        }
        return report
    }

    /// Keeps the copy up to date until `shouldStop`: a whole pass (`run`), then, each time `wait`
    /// returns (the folder's log changed, or a moment passed), the batches after the checkpoint.
    /// While nothing changes nothing is sent to the server: a look at the folder's last number is
    /// all a wake-up costs. A lost or refused connection is ridden out: the follower closes it,
    /// waits (0.5 s, doubling to 10 s), and starts again with a whole pass from the checkpoint.
    public func follow(
        resync: Bool = false, shouldStop: () -> Bool, wait: () -> Void, pause: (Double) -> Void,
        events: (Event) -> Void
    ) throws -> Report {
        var total = Report()
        var needsResync = resync
        var needsPass = true
        var backoff = 0.5
        var wasLost = false
        var identity = ""
        while !shouldStop() {
            do {
                if needsPass {
                    let pass = try run(resync: needsResync, shouldStop: shouldStop, events: events)
                    identity = try folderIdentity()
                    needsResync = false
                    needsPass = false
                    total.absorb(pass)
                } else if try store.lastSequence > total.checkpoint {
                    // What `verify` checks against the server's checkpoint, against the one in hand.
                    if try folderIdentity() != identity {
                        throw PostgresError.copyReset(table: table.description, reason: "the folder was replaced while it was followed")
                    }
                    let start = try store.feedStart
                    if total.checkpoint < start {
                        throw PostgresError.copyReset(
                            table: table.description,
                            reason: "the folder's changes feed starts after \(start) now, past the copy's checkpoint \(total.checkpoint)")
                    }
                    let connection = try connected()
                    while !shouldStop(), let batch = try applyNextBatch(connection, after: total.checkpoint, rows: total.rows) {
                        total.absorb(batch)
                        events(.batch(batch))
                    }
                }
                if wasLost { events(.reconnected) }
                wasLost = false
                backoff = 0.5
            } catch let error as PostgresError where error.isTransient {
                close()
                wasLost = true
                needsPass = true
                events(.disconnected(error, retry: backoff))
                pause(backoff)
                backoff = min(backoff * 2, 10)
                continue
            }
            if shouldStop() { break }
            wait()
        }
        return total
    }

    // MARK: - Status

    /// The folder's position, the copy's checkpoint and how far behind it is. Reads only.
    public func status() throws -> Status {
        let connection = try PostgresConnection(info)
        defer { connection.close() }
        let last = try store.lastSequence
        let start = try store.feedStart
        var status = Status(folderSequence: last, feedStart: start, checkpoint: nil, pending: 0, lag: 0)
        guard try tableExists(connection, "archivist_replicas"), let checkpoint = try readCheckpoint(connection) else {
            status.pending = try pendingChanges(after: 0).count
            status.problem = "no copy in \(table) yet"
            return status
        }
        status.checkpoint = checkpoint.lastSequence
        status.rows = checkpoint.rows
        status.updatedAt = checkpoint.updatedAt
        status.source = checkpoint.folder
        do {
            try verify(checkpoint)
            let pending = try pendingChanges(after: checkpoint.lastSequence)
            status.pending = pending.count
            if let oldest = pending.oldest { status.lag = max(0, Double(Timestamp.now().milliseconds - oldest.milliseconds) / 1000) }
        } catch let error as PostgresError {
            status.problem = error.description
        }
        if !checkpoint.loaded { status.problem = status.problem ?? "the initial load has not finished" }
        return status
    }

    /// How many changes follow `since`, and the time of the first, a page at a time.
    private func pendingChanges(after since: Int) throws -> (count: Int, oldest: Timestamp?) {
        var count = 0
        var oldest: Timestamp?
        var cursor = since
        while true {
            let page = try store.changePage(since: cursor, limit: 10_000)
            if oldest == nil { oldest = page.changes.first?.time }
            count += page.changes.count
            if page.changes.count < 10_000 { break }
            cursor = page.through
        }
        return (count, oldest)
    }

    // MARK: - The checkpoint

    /// A row of `archivist_replicas`.
    struct Checkpoint {
        var folder: String
        var folderCreatedAt: String
        var feedStart: Int
        var lastSequence: Int
        var lastID: String?
        var rows: Int
        var columns: [ReplicaColumn]
        var loaded: Bool
        var updatedAt: String?
    }

    private func createCatalog(_ connection: PostgresConnection) throws(PostgresError) {
        guard !(try tableExists(connection, "archivist_replicas")) else { return }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(catalog) (
                table_name text PRIMARY KEY,
                folder text NOT NULL,
                folder_created_at text NOT NULL,
                feed_start bigint NOT NULL,
                last_seq bigint NOT NULL,
                last_id text,
                rows bigint NOT NULL,
                columns jsonb NOT NULL,
                loaded boolean NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """, doing: "creating the checkpoint table archivist_replicas")
    }

    private func readCheckpoint(_ connection: PostgresConnection) throws(PostgresError) -> Checkpoint? {
        let rows = try connection.execute(
            """
            SELECT folder, folder_created_at, feed_start, last_seq, last_id, rows, columns::text, loaded,
                   to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
            FROM \(catalog) WHERE table_name = $1
            """, [table.name], doing: "reading the checkpoint of \(table)")
        guard let row = rows.values.first else { return nil }
        var columns: [ReplicaColumn] = []
        if let text = row[6], case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) {
            columns = items.compactMap(ReplicaColumn.init(json:))
        }
        return Checkpoint(
            folder: row[0] ?? "", folderCreatedAt: row[1] ?? "", feedStart: Int(row[2] ?? "") ?? 0,
            lastSequence: Int(row[3] ?? "") ?? 0, lastID: row[4], rows: Int(row[5] ?? "") ?? 0, columns: columns,
            loaded: row[7] == "t", updatedAt: row[8])
    }

    /// The folder's identity as the checkpoint records it: its creation time.
    private func folderIdentity() throws -> String {
        try store.createdAt?.description ?? ""
    }

    /// Fails with `.copyReset` when the checkpoint does not describe this folder's feed.
    private func verify(_ checkpoint: Checkpoint) throws {
        let identity = try folderIdentity()
        if !checkpoint.folderCreatedAt.isEmpty, !identity.isEmpty, checkpoint.folderCreatedAt != identity {
            throw PostgresError.copyReset(
                table: table.description,
                reason:
                    "the copy was made from a folder created \(checkpoint.folderCreatedAt) (\(checkpoint.folder)), and this folder was created \(identity)"
            )
        }
        let last = try store.lastSequence
        if checkpoint.lastSequence > last {
            throw PostgresError.copyReset(
                table: table.description,
                reason:
                    "the copy's checkpoint is \(checkpoint.lastSequence), above the folder's last change \(last) (was the folder restored from an older copy?)"
            )
        }
        let start = try store.feedStart
        if checkpoint.lastSequence < start {
            throw PostgresError.copyReset(
                table: table.description,
                reason:
                    "the folder's changes feed starts after \(start) now (compact --purge-removals or a rebuilt index), past the copy's checkpoint \(checkpoint.lastSequence)"
            )
        }
        // The change numbered at the checkpoint, when the log still holds it, must be the one
        // applied: a folder restored from a backup and written to since gives its numbers again.
        if let lastID = checkpoint.lastID, checkpoint.lastSequence > 0,
            let change = try store.changePage(since: checkpoint.lastSequence - 1, limit: 1).changes.first,
            change.sequence == checkpoint.lastSequence, change.id != lastID
        {
            throw PostgresError.copyReset(
                table: table.description,
                reason:
                    "change \(checkpoint.lastSequence) of the folder is to \(change.id), and the copy applied it to \(lastID) (was the folder restored from an older copy?)"
            )
        }
    }

    // MARK: - The table

    private func tableExists(_ connection: PostgresConnection, _ relation: String) throws(PostgresError) -> Bool {
        let name = table.schema.map { TableName.quote($0) + "." + TableName.quote(relation) } ?? TableName.quote(relation)
        return try connection.execute("SELECT to_regclass($1) IS NOT NULL", [name], doing: "looking for table \(relation)").scalar == "t"
    }

    /// The column list of the table, in COPY order.
    private var columnNames: [String] {
        ["id", "seq", "doc", "stored_at", "updated_at", "terms"] + columns.map(\.name)
    }

    private func createTable(_ connection: PostgresConnection, _ relation: String, primaryKey: Bool = true) throws(PostgresError) {
        var definitions = [
            primaryKey ? "id text PRIMARY KEY" : "id text NOT NULL", "seq bigint NOT NULL", "doc jsonb NOT NULL", "stored_at timestamptz",
            "updated_at timestamptz",
            "terms tsvector",
        ]
        definitions += columns.map { "\(TableName.quote($0.name)) \($0.kind.rawValue)" }
        try connection.execute(
            "CREATE TABLE \(table.qualified(relation)) (\n    " + definitions.joined(separator: ",\n    ") + "\n)",
            doing: "creating table \(relation)")
    }

    /// The secondary indexes, built once the rows are in: `(name suffix, definition)`.
    private var secondaryIndexes: [(String, String)] {
        var indexes = [("seq", "(seq)"), ("doc", "USING gin (doc jsonb_path_ops)"), ("terms", "USING gin (terms)")]
        for column in columns where column.isIndexed {
            indexes.append(
                (
                    column.name,
                    column.kind == .textArray ? "USING gin (\(TableName.quote(column.name)))" : "(\(TableName.quote(column.name)))"
                ))
        }
        return indexes
    }

    /// Creates the table of removals, `TABLE_removed`, when it is missing: the ID, number and
    /// time of each document's removal, while the folder's feed keeps it (a copy made before it
    /// existed gets it empty, and records the removals from then on).
    private func createRemovals(_ connection: PostgresConnection, _ relation: String, primaryKey: Bool = true) throws(PostgresError) {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(table.qualified(relation)) (
                id text \(primaryKey ? "PRIMARY KEY" : "NOT NULL"), seq bigint NOT NULL, removed_at timestamptz)
            """, doing: "creating table \(relation)")
    }

    /// Copies the removals the folder's feed holds up to `position` into `TABLE__load_removed`
    /// (a page of the feed at a time), then keeps each ID's last one, drops those of documents
    /// stored again since (their rows are in `TABLE__load`, indexed by then), and keys the table.
    private func loadRemovals(_ connection: PostgresConnection, loadName: String, through position: Int) throws {
        let relation = loadName + "_removed"
        let target = table.qualified(relation)
        try createRemovals(connection, relation, primaryKey: false)
        var since = 0
        while since < position {
            let page = try store.changePage(since: since, limit: 10_000)
            guard !page.changes.isEmpty else { break }
            let removed = page.changes.filter { $0.kind == .removed && $0.sequence <= position }
            if !removed.isEmpty {
                try connection.copy("COPY \(target) (id, seq, removed_at) FROM STDIN", doing: "copying removals into \(relation)") {
                    sink throws(PostgresError) in
                    for change in removed {
                        try sink.row([.text(change.id), .text(String(change.sequence)), .text(change.time.description)])
                    }
                }
            }
            since = page.through
        }
        try connection.execute(
            "DELETE FROM \(target) AS r USING \(target) AS n WHERE r.id = n.id AND r.seq < n.seq", doing: "keeping the last removals")
        try connection.execute(
            "DELETE FROM \(target) AS r USING \(table.qualified(loadName)) AS t WHERE r.id = t.id AND r.seq < t.seq",
            doing: "keeping the last removals")
        try connection.execute(
            "ALTER TABLE \(target) ADD CONSTRAINT \(TableName.quote(relation + "_pkey")) PRIMARY KEY (id)", doing: "indexing \(relation)")
    }

    /// Builds the load table's indexes on `lanes` at once: the unique index on `id` (which
    /// becomes the primary key), then the secondary ones. Returns the suffixes built, `pkey`
    /// first; an index refused for a value too long for a B-tree (a paragraph in a short field)
    /// is left out.
    private func buildIndexes(on lanes: LoadLanes, of loadName: String) throws(PostgresError) -> [String] {
        let all = [("pkey", "UNIQUE", "(id)")] + secondaryIndexes.map { ($0.0, "", $0.1) }
        // The document's GIN takes as long as all the others together: it gets a lane to itself.
        var plans: [[(String, String, String)]] = Array(repeating: [], count: lanes.count)
        var spread = 0
        for index in all {
            if index.0 == "doc" || lanes.count == 1 {
                plans[0].append(index)
            } else {
                plans[1 + spread % (lanes.count - 1)].append(index)
                spread += 1
            }
        }
        let built = Mutex<Set<String>>([])
        let table = self.table
        try lanes.run(plans) { plan, connection in
            for (suffix, kind, definition) in plan {
                do {
                    try connection.execute(
                        "CREATE \(kind.isEmpty ? "" : kind + " ")INDEX \(TableName.quote(loadName + "_" + suffix)) ON \(table.qualified(loadName)) \(definition)",
                        doing: "indexing \(table) (\(suffix == "pkey" ? "id" : suffix))")
                    built.withLock { _ = $0.insert(suffix) }
                } catch let error as PostgresError {
                    guard suffix != "pkey", case .statement(_, let state, _, _) = error, state == "54000" else { throw error }
                }
            }
        }
        let names = built.withLock { $0 }
        return all.map(\.0).filter { names.contains($0) }
    }

    /// Sets up a session that writes rows: TOAST compression by lz4 where the server has it
    /// (several times faster than the default pglz, for the documents and terms of every row).
    static func prepareSession(_ connection: PostgresConnection) throws(PostgresError) {
        do throws(PostgresError) {
            try connection.execute("SET default_toast_compression TO 'lz4'", doing: "choosing the compression")
        } catch {
            // A server built without lz4 refuses the value (22023): it keeps pglz.
            guard case .statement(_, let state, _, _) = error, state == "22023" else { throw error }
        }
    }

    /// Copies the whole folder into `TABLE__load`, builds its indexes, then swaps it in for the
    /// table and writes the checkpoint, in one transaction: readers see the old copy or the new
    /// one, never a half-built one. A crash before the swap leaves the old copy and checkpoint.
    private func load(
        _ connection: PostgresConnection, shouldStop: () -> Bool, events: (Event) -> Void
    ) throws -> (checkpoint: Int, rows: Int, changes: Int) {
        let loadName = table.name + "__load"
        try connection.execute(
            "DROP TABLE IF EXISTS \(table.qualified(loadName)), \(table.qualified(loadName + "_removed"))",
            doing: "dropping an unfinished load of \(table)")
        // The typed columns, from the projected values of the first documents.
        let projection = store.projection
        var sample: [[JSONValue?]] = []
        for change in try store.changePage(since: 0, limit: 2_000).changes where change.kind != .removed {
            let fields = change.fields
            sample.append(projection.paths.map { fields[$0] })
        }
        columns = ReplicaColumn.columns(for: projection, sample: sample)
        // The rows go in first, into a table without any index (COPY at the server's full rate),
        // then the primary key and the other indexes are built. The documents are read in the
        // order of their IDs (the folder's own layout, as export reads them), a window at a time;
        // the checkpoint is the folder's last number before the first read, and the changes after
        // it (some already copied: a row is only replaced by a higher number) follow as batches.
        try createTable(connection, loadName, primaryKey: false)
        let target = table.qualified(loadName)
        let names = columnNames.map(TableName.quote).joined(separator: ", ")
        let total = try store.count
        let position = try store.lastSequence
        var copied = 0
        events(.loading(copied: 0, total: total))
        let store = self.store
        let columns = self.columns
        let limit = batchSize
        // The next window's rows are read and encoded on other threads while this one is sent:
        // the folder's side and the server's overlap.
        let prepare: @Sendable (String?) -> Result<LoadPage, any Error> = { after in
            Result {
                let entries = try store.entries(after: after, limit: limit)
                let ids = entries.map(\.id)
                let batch = try Replicator.rows(for: ids, listed: entries, store: store, columns: columns)
                return LoadPage(count: ids.count, last: ids.last, rows: batch.rows, partial: batch.partial)
            }
        }
        // Windows go out on several connections at once (the server parses each in its own
        // backend); the next window is read while they are sent.
        let lanes = try LoadLanes(info: info, count: loadConnections) { lane throws(PostgresError) in
            try Replicator.prepareSession(lane)
        }
        defer { lanes.close() }
        let copySQL = "COPY \(target) (\(names)) FROM STDIN"
        let copying = "copying documents into \(loadName)"
        var current = try prepare(nil).get()
        // The columns some document had a value for that they could not hold.
        var partial: Set<String> = []
        while true {
            partial.formUnion(current.partial)
            if shouldStop() {
                try? lanes.finish()
                throw PostgresError.loadStopped(table: table.description)
            }
            let last = current.last
            let next = current.count < limit ? nil : Prefetch { prepare(last) }
            if !current.rows.isEmpty {
                try lanes.send(current.rows, sql: copySQL, doing: copying)
                copied += current.rows.count
                events(.loading(copied: lanes.copied, total: max(total, copied)))
            }
            guard let next else { break }
            current = try next.value().get()
        }
        try lanes.finish()
        events(.loading(copied: lanes.copied, total: max(total, lanes.copied)))
        let since = position
        let changes = 0
        let atPosition = position > 0 ? try store.changePage(since: position - 1, limit: 1).changes.first : nil
        let lastID = atPosition?.sequence == position ? atPosition?.id : nil
        // The indexes are built side by side too: the document's GIN (the longest) on one lane,
        // the key, the terms and the typed columns' on the others; the primary key then takes the
        // unique index already built.
        let built = try buildIndexes(on: lanes, of: loadName)
        try connection.execute(
            "ALTER TABLE \(target) ADD CONSTRAINT \(TableName.quote(loadName + "_pkey")) PRIMARY KEY USING INDEX \(TableName.quote(loadName + "_pkey"))",
            doing: "indexing \(table) (id)")
        try loadRemovals(connection, loadName: loadName, through: position)
        try connection.execute("ANALYZE \(table.qualified(loadName))", doing: "analyzing \(table)")
        let rows =
            Int(try connection.execute("SELECT count(*) FROM \(table.qualified(loadName))", doing: "counting \(table)").scalar ?? "") ?? 0
        try connection.execute("BEGIN", doing: "installing \(table)")
        try connection.execute("DROP TABLE IF EXISTS \(table.sql)", doing: "replacing \(table)")
        try connection.execute(
            "ALTER TABLE \(table.qualified(loadName)) RENAME TO \(TableName.quote(table.name))", doing: "installing \(table)")
        for suffix in built {
            try connection.execute(
                "ALTER INDEX \(table.qualified(loadName + "_" + suffix)) RENAME TO \(TableName.quote(table.name + "_" + suffix))",
                doing: "installing \(table)")
        }
        try connection.execute("DROP TABLE IF EXISTS \(table.qualified(table.name + "_removed"))", doing: "replacing \(table)")
        try connection.execute(
            "ALTER TABLE \(table.qualified(loadName + "_removed")) RENAME TO \(TableName.quote(table.name + "_removed"))",
            doing: "installing \(table)")
        try connection.execute(
            "ALTER INDEX \(table.qualified(loadName + "_removed_pkey")) RENAME TO \(TableName.quote(table.name + "_removed_pkey"))",
            doing: "installing \(table)")
        for index in self.columns.indices { self.columns[index].holdsEveryValue = !partial.contains(self.columns[index].name) }
        let columnsJSON = String(decoding: JSONWriter.compactBytes(.array(self.columns.map(\.json))), as: UTF8.self)
        try connection.execute(
            """
            INSERT INTO \(catalog) (table_name, folder, folder_created_at, feed_start, last_seq, last_id, rows, columns, loaded, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, true, now())
            ON CONFLICT (table_name) DO UPDATE SET folder = EXCLUDED.folder, folder_created_at = EXCLUDED.folder_created_at,
                feed_start = EXCLUDED.feed_start, last_seq = EXCLUDED.last_seq, last_id = EXCLUDED.last_id, rows = EXCLUDED.rows,
                columns = EXCLUDED.columns, loaded = true, updated_at = now()
            """,
            [
                table.name, store.folder, try folderIdentity(), String(try store.feedStart), String(since), lastID, String(rows),
                columnsJSON,
            ], doing: "writing the checkpoint of \(table)")
        try connection.execute("COMMIT", doing: "installing \(table)")
        // The staging table of later batches takes the new table's columns.
        try connection.execute("DROP TABLE IF EXISTS pg_temp.archivist_staging", doing: "dropping the staging table")
        stagingMade = false
        return (since, rows, changes)
    }

    /// Applies the changes after `checkpoint` (a batch of at most `batchSize`) and moves the
    /// checkpoint, in one transaction; nil when there were none.
    private func applyNextBatch(_ connection: PostgresConnection, after checkpoint: Int, rows: Int) throws -> Report? {
        let page = try store.changePage(since: checkpoint, limit: batchSize)
        guard !page.changes.isEmpty else { return nil }
        try connection.execute("BEGIN", doing: "copying changes into \(table)")
        do {
            let applied = try apply(page.changes, to: table.name, connection)
            // A column that stops holding every value says so in the same transaction as the row
            // that made it: a reader's snapshot never sees the row with the old promise. The
            // columns in memory change only once that commits (a batch undone is tried again).
            var updated = columns
            for index in updated.indices where updated[index].holdsEveryValue && applied.partial.contains(updated[index].name) {
                updated[index].holdsEveryValue = false
            }
            let columnsJSON =
                updated != columns ? String(decoding: JSONWriter.compactBytes(.array(updated.map(\.json))), as: UTF8.self) : nil
            let moved = try connection.execute(
                """
                UPDATE \(catalog) SET last_seq = $2, last_id = $3, rows = rows + $4, updated_at = now(),
                    columns = COALESCE($6::jsonb, columns)
                WHERE table_name = $1 AND last_seq = $5
                RETURNING rows
                """,
                [
                    table.name, String(page.through), page.changes.last?.id, String(applied.inserted - applied.deleted), String(checkpoint),
                    columnsJSON,
                ],
                doing: "moving the checkpoint of \(table)")
            guard moved.values.count == 1 else {
                throw PostgresError.copyReset(table: table.description, reason: "its checkpoint moved while this batch was applied")
            }
            try connection.execute("COMMIT", doing: "copying changes into \(table)")
            columns = updated
            var report = Report()
            report.changes = page.changes.count
            report.written = applied.written
            report.deleted = applied.deleted
            report.checkpoint = page.through
            report.rows = Int(moved.scalar ?? "") ?? rows
            return report
        } catch {
            if connection.isOpen { _ = try? connection.execute("ROLLBACK", doing: "undoing a batch") }
            throw error
        }
    }

    /// Writes the last change of each ID of `changes` into `relation` (inside the caller's
    /// transaction): documents through COPY into a staging table, then upserted (a row is only
    /// replaced by a newer number); removals delete rows older than them.
    private func apply(
        _ changes: [Change], to relation: String, _ connection: PostgresConnection
    ) throws -> (written: Int, inserted: Int, deleted: Int, partial: Set<String>) {
        var last: [String: Change] = [:]
        for change in changes { last[change.id] = change }
        let upserts = last.values.filter { $0.kind != .removed }.map(\.id).sorted()
        let removals = last.values.filter { $0.kind == .removed }.sorted { $0.id < $1.id }
        var written = 0
        var inserted = 0
        var partial: Set<String> = []
        if !upserts.isEmpty {
            if !stagingMade {
                try connection.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS archivist_staging (LIKE \(table.qualified(relation))) ON COMMIT DELETE ROWS",
                    doing: "creating the staging table")
                stagingMade = true
            }
            let batch = try self.rows(for: upserts)
            let rows = batch.rows
            partial = batch.partial
            let names = columnNames.map(TableName.quote).joined(separator: ", ")
            try connection.copy("COPY archivist_staging (\(names)) FROM STDIN", doing: "copying documents into \(relation)") {
                sink throws(PostgresError) in
                for row in rows { try sink.line(row) }
            }
            let updates = columnNames.dropFirst().map { "\(TableName.quote($0)) = EXCLUDED.\(TableName.quote($0))" }.joined(separator: ", ")
            let target = table.qualified(relation)
            let counted = try connection.execute(
                """
                WITH up AS (
                    INSERT INTO \(target) AS t (\(names)) SELECT \(names) FROM archivist_staging
                    ON CONFLICT (id) DO UPDATE SET \(updates) WHERE t.seq < EXCLUDED.seq
                    RETURNING (xmax = 0) AS fresh
                ) SELECT count(*), count(*) FILTER (WHERE fresh) FROM up
                """, doing: "writing documents into \(relation)")
            written = Int(counted.values.first?[0] ?? "") ?? 0
            inserted = Int(counted.values.first?[1] ?? "") ?? 0
            // A document stored again is no longer removed.
            try connection.execute(
                "DELETE FROM \(table.qualified(relation + "_removed")) AS r USING archivist_staging s WHERE r.id = s.id AND r.seq < s.seq",
                doing: "writing documents into \(relation)")
            try connection.execute("TRUNCATE archivist_staging", doing: "emptying the staging table")
        }
        var deleted = 0
        if !removals.isEmpty {
            let ids = ReplicaColumn.arrayLiteral(removals.map(\.id))
            let numbers = "{" + removals.map { String($0.sequence) }.joined(separator: ",") + "}"
            let gone = try connection.execute(
                """
                WITH gone AS (
                    DELETE FROM \(table.qualified(relation)) AS t USING unnest($1::text[], $2::bigint[]) AS r(id, seq)
                    WHERE t.id = r.id AND t.seq < r.seq RETURNING 1
                ) SELECT count(*) FROM gone
                """, [ids, numbers], doing: "deleting removed documents from \(relation)")
            deleted = Int(gone.scalar ?? "") ?? 0
            // Each removal is kept (its ID, number and time) for `changes` on the copy.
            let times = ReplicaColumn.arrayLiteral(removals.map(\.time.description))
            try connection.execute(
                """
                INSERT INTO \(table.qualified(relation + "_removed")) AS k (id, seq, removed_at)
                SELECT id, seq, at FROM unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS r(id, seq, at)
                WHERE NOT EXISTS (SELECT 1 FROM \(table.qualified(relation)) t WHERE t.id = r.id AND t.seq > r.seq)
                ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, removed_at = EXCLUDED.removed_at WHERE k.seq < EXCLUDED.seq
                """, [ids, numbers, times], doing: "recording removals in \(relation)_removed")
        }
        return (written, inserted, deleted, partial)
    }

    /// The COPY rows (encoded, each a line) of documents `ids` as the folder holds them now (an ID
    /// removed since is left out: its removal follows in the feed), and the typed columns some of
    /// them had a value for that the column could not hold. Read and encoded on all cores.
    private func rows(for ids: [String]) throws -> (rows: [[UInt8]], partial: Set<String>) {
        try Replicator.rows(for: ids, store: store, columns: columns)
    }

    /// `rows(for:)` of `store` with `columns`, callable from any thread.
    /// `listed` are entries the caller already holds (the load's listing): each is used for its
    /// first read instead of a look-up, and looked up again only when its file has changed since.
    static func rows(
        for ids: [String], listed: [IndexEntry]? = nil, store: DocumentStore, columns: [ReplicaColumn]
    ) throws -> (rows: [[UInt8]], partial: Set<String>) {
        let projection = store.projection
        let textSearch: TextSearch? = store.schema.textSearch.fields.isEmpty ? nil : store.schema.textSearch
        let results = ConcurrentReads.shared.map(ids.count) { index -> Result<(line: [UInt8], partial: [Int])?, StoreError> in
            do throws(StoreError) {
                // The entry and the file must agree (a writer may replace the file in between).
                for attempt in 0..<5 {
                    let known = attempt == 0 ? listed?[index] : nil
                    let current = try known == nil ? store.entry(forID: ids[index]) : known
                    guard let entry = current else { return .success(nil) }
                    let read = try known == nil ? store.documentBytes(withID: ids[index]) : store.documentBytes(of: entry)
                    guard let bytes = read else { continue }
                    guard FNV1a64.hash(bytes) == entry.hash else { continue }
                    let document = try store.parsedDocument(bytes, id: ids[index])
                    var line: [UInt8] = []
                    line.reserveCapacity(bytes.count * 2)
                    let values = Replicator.row(
                        entry: entry, bytes: bytes, document: document, projection: projection, columns: columns, textSearch: textSearch)
                    CopySink.encode(values, into: &line)
                    // A NULL column where the document has a value: the column does not hold it.
                    var partial: [Int] = []
                    let first = values.count - columns.count
                    for (position, column) in columns.enumerated() where values[first + position] == .null {
                        if !document.values(atPath: column.path).isEmpty { partial.append(position) }
                    }
                    return .success((line, partial))
                }
                return .success(nil)
            } catch {
                return .failure(error)
            }
        }
        var rows: [[UInt8]] = []
        var partial: Set<String> = []
        rows.reserveCapacity(results.count)
        for result in results {
            guard let row = try result.get() else { continue }
            rows.append(row.line)
            for position in row.partial { partial.insert(columns[position].name) }
        }
        return (rows, partial)
    }

    /// One document's row, in `columnNames` order.
    static func row(
        entry: IndexEntry, bytes: [UInt8], document: JSONValue, projection: Projection, columns: [ReplicaColumn], textSearch: TextSearch?
    ) -> [CopyValue] {
        var row: [CopyValue] = [
            .text(entry.id), .text(String(entry.sequence)), .document(bytes), .text(entry.storedAt.description),
            .text(entry.updatedAt.description), textSearch.map { .text(terms(of: document, textSearch: $0)) } ?? .null,
        ]
        if !columns.isEmpty {
            let values = projection.values(of: document)
            for column in columns {
                let position = projection.position(of: column.path)
                row.append(column.value(of: position.flatMap { values[$0] }))
            }
        }
        return row
    }

    /// Archivist's folded words of a document's searched fields as a `tsvector` literal: each word
    /// with its positions, weighted A (weight 3 and above), B (2), C (1) or D by its field, so that
    /// SQL finds exactly the documents Archivist's own search does (no stemming, the same folding).
    static func terms(of document: JSONValue, textSearch: TextSearch) -> String {
        // Each word once, in the order first seen, with its positions (at most 256, as tsvector
        // keeps) as "position" + weight letter; built as bytes, the hot loop of a load.
        var slots: [String: Int] = [:]
        var words: [String] = []
        var positions: [[UInt32]] = []
        var position: UInt32 = 0
        for (word, weight) in textSearch.words(of: document) {
            guard word.utf8.count < 2_000 else { continue }
            position = min(position + 1, 16_383)
            let letter: UInt32 = weight >= 3 ? 0 : weight >= 2 ? 1 : weight >= 1 ? 2 : 3
            let slot: Int
            if let known = slots[word] {
                slot = known
            } else {
                slot = words.count
                slots[word] = slot
                words.append(word)
                positions.append([])
            }
            if positions[slot].count < 256 { positions[slot].append(position << 2 | letter) }
        }
        var literal: [UInt8] = []
        literal.reserveCapacity(words.count * 12)
        for (slot, word) in words.enumerated() {
            if slot > 0 { literal.append(0x20) }
            literal.append(0x27)
            for byte in word.utf8 {
                if byte == 0x27 || byte == 0x5C { literal.append(byte) }
                literal.append(byte)
            }
            literal.append(contentsOf: [0x27, 0x3A])
            for (index, packed) in positions[slot].enumerated() {
                if index > 0 { literal.append(0x2C) }
                // The position (1...16,383) in decimal, without a temporary array.
                let number = packed >> 2
                var scale: UInt32 = 1
                while scale * 10 <= number { scale *= 10 }
                while scale > 0 {
                    literal.append(UInt8(48 + (number / scale) % 10))
                    scale /= 10
                }
                literal.append(UInt8(65 + packed & 3))
            }
        }
        return String(decoding: literal, as: UTF8.self)
    }
}

/// A window of the initial load, read and encoded.
struct LoadPage: Sendable {
    /// The IDs listed (some may be gone since).
    var count: Int
    /// The last ID listed (the next window starts after it).
    var last: String?
    /// The rows of the documents still there.
    var rows: [[UInt8]]
    /// The typed columns some of them had a value for that the column could not hold.
    var partial: Set<String>
}
