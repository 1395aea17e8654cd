import ArchivistPostgres
import ArchivistStore
import Foundation

extension Command {
    /// `replicate`'s options.
    enum ReplicateOption: CommandOptions {
        case follow, table, status, resync

        var declaration: Option {
            switch self {
            case .follow:
                Option("--follow", help: "keep the copy within a moment of the folder until Ctrl-C, riding out the server going away")
            case .table: Option("--table", value: "NAME", help: "the copy's table, NAME or SCHEMA.NAME (default articles)")
            case .status: Option("--status", help: "print the folder's last change, the copy's checkpoint, changes pending, lag and rows")
            case .resync:
                Option("--resync", help: "rebuild the copy from the whole folder (after a reset: another folder, an older backup, a purge)")
            }
        }
    }

    /// `replicate [CONNINFO] [--follow] [--table NAME] [--status] [--resync]`.
    public static let replicate = Command(
        name: "replicate", synopsis: "[CONNINFO]", summary: "Copy the folder into a PostgreSQL table and keep it up to date, exactly once",
        discussion: """
            Copies every document into a PostgreSQL table (created when absent: id, seq, the document as jsonb,
            stored_at, updated_at, terms, and a typed column for each projected field of one obvious type), then
            the changes committed since, a batch at a time: each batch and the checkpoint (in archivist_replicas)
            commit in one transaction, so a run stopped or killed anywhere resumes where the copy is, nothing lost
            or applied twice. CONNINFO is a libpq URI (postgresql://user@host/db) or key=value words; without it,
            libpq's PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGSSLMODE and ~/.pgpass. No password is ever
            printed. A copy made from another folder, or ahead of this one (an older backup), or behind a feed
            purged by 'compact --purge-removals', is reported; --resync rebuilds it aside and swaps it in.
            The table's layout and a read-only role for a team: docs/REPLICATION.md.
            """,
        examples: [
            "replicate postgresql://localhost/news", "replicate --follow", "replicate --status",
            "replicate 'host=/var/run/postgresql dbname=news' --table nyt.articles --resync",
        ],
        options: ReplicateOption.self,
        arity: 0...1, isInterruptible: true
    ) { invocation, shell in
        var table = TableName.standard
        if let name = invocation.value(.table) {
            do throws(PostgresError) {
                table = try TableName(name)
            } catch {
                throw invocation.usageError(error.description)
            }
        }
        if invocation.isSet(.status), invocation.isSet(.follow) || invocation.isSet(.resync) {
            throw invocation.usageError("--status only reads: it cannot be combined with --follow or --resync")
        }
        let store = try shell.store()
        do {
            let info = try ConnectionInfo(invocation.positionalWords.first?.text ?? "")
            let replicator = Replicator(store: store, info: info, table: table)
            if let batch = try EnvironmentVariable.replicateBatch.count(in: shell.environment, minimum: 1) { replicator.batchSize = batch }
            if let lanes = try EnvironmentVariable.replicateConnections.count(in: shell.environment, minimum: 1) {
                replicator.loadConnections = min(lanes, 16)
            }
            defer { replicator.close() }
            if invocation.isSet(.status) {
                let status = try replicator.status()
                shell.renderer.render(single: statusRecord(status, table: table, server: info.display), to: shell.output)
                return
            }
            let progress = ProgressReporter(errors: shell.errors)
            let started = Date()
            let report: Replicator.Report
            let events: (Replicator.Event) -> Void = { event in
                switch event {
                case .loading(let copied, let total):
                    progress.show("loading \(table): \(Plural.count(copied, "document")) of \(total)")
                case .batch(let batch):
                    if invocation.isSet(.follow), shell.errors.isTerminal {
                        progress.show(
                            "following: checkpoint \(batch.checkpoint) · \(Plural.count(batch.changes, "change")) · \(Plural.count(batch.rows, "row"))"
                        )
                    }
                case .disconnected(let error, let retry):
                    progress.finish()
                    shell.errors.line("replicate: note: \(error.description); trying again in " + String(format: "%.1f", retry) + " s")
                    shell.errors.flush()
                case .reconnected:
                    shell.errors.line("replicate: note: connected again to \(info.display)")
                    shell.errors.flush()
                }
            }
            if invocation.isSet(.follow) {
                let watcher = LogWatcher(folder: store.folder)
                report = try replicator.follow(
                    resync: invocation.isSet(.resync), shouldStop: { Interruption.isRequested },
                    wait: { _ = watcher.wait(timeout: 0.5) },
                    pause: { seconds in
                        let end = Date().addingTimeInterval(seconds)
                        while Date() < end, !Interruption.isRequested { usleep(50_000) }
                    }, events: events)
            } else {
                report = try replicator.run(resync: invocation.isSet(.resync), shouldStop: { Interruption.isRequested }, events: events)
            }
            progress.finish()
            shell.renderer.render(
                single: reportRecord(report, table: table, server: info.display, seconds: Date().timeIntervalSince(started)),
                to: shell.output)
            if Interruption.isRequested, !invocation.isSet(.follow) {
                throw invocation.interrupted("stopped at checkpoint \(report.checkpoint)")
            }
        } catch let error as PostgresError {
            throw invocation.failure(error.description)
        }
    }

    /// What a run of `replicate` prints.
    static func reportRecord(_ report: Replicator.Report, table: TableName, server: String, seconds: Double) -> Record {
        Record([
            ("table", .string(table.description)), ("server", .string(server)),
            ("loaded", report.loaded.map { .string($0.rawValue) } ?? .null), ("changes", .int(report.changes)),
            ("written", .int(report.written)), ("deleted", .int(report.deleted)), ("checkpoint", .int(report.checkpoint)),
            ("rows", .int(report.rows)), ("seconds", .number(String(format: "%.3f", seconds))),
        ])
    }

    /// What `replicate --status` prints.
    static func statusRecord(_ status: Replicator.Status, table: TableName, server: String) -> Record {
        Record([
            ("table", .string(table.description)), ("server", .string(server)), ("folder_seq", .int(status.folderSequence)),
            ("feed_start", .int(status.feedStart)), ("checkpoint", status.checkpoint.map { .int($0) } ?? .null),
            ("pending", .int(status.pending)), ("lag_seconds", .number(String(format: "%.3f", status.lag))),
            ("rows", status.rows.map { .int($0) } ?? .null), ("updated_at", status.updatedAt.map { .string($0) } ?? .null),
            ("source", status.source.map { .string($0) } ?? .null), ("problem", status.problem.map { .string($0) } ?? .null),
        ])
    }
}
