import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import Foundation

extension Command {
    /// `stats`: counts of the data folder.
    public static let stats = Command(
        name: "stats", synopsis: "", summary: "Show document count, bytes, index size and dead index entries",
        examples: ["stats", "--format json stats"], arity: 0...0
    ) { _, shell in
        if let copy = try shell.copy() {
            shell.renderer.render(single: try copyStatisticsRecord(copy, shell: shell), to: shell.output)
            return
        }
        let stats = try shell.store().statistics()
        shell.renderer.render(single: statisticsRecord(stats, folder: shell.dataFolder), to: shell.output)
    }

    /// What `stats` prints for a PostgreSQL copy: the copy, its rows, the checkpoint, and, when the
    /// folder it is replicated from is on this machine, how far behind it the copy is.
    static func copyStatisticsRecord(_ copy: PostgresCopy, shell: Shell) throws -> Record {
        let (rows, checkpoint) = try copy.statistics()
        var fields: [(String, JSONValue)] = [
            ("copy", .string(copy.info.display)), ("table", .string(copy.table.description)), ("documents", .int(rows)),
            ("replicated_from", .string(checkpoint.folder)), ("checkpoint_seq", .int(checkpoint.lastSequence)),
            ("checkpoint_rows", .int(checkpoint.rows)), ("checkpoint_updated_at", .string(checkpoint.updatedAt)),
            ("seconds_since_checkpoint", .number(String(format: "%.3f", checkpoint.age))),
            ("typed_columns", .array(checkpoint.columns.map { .string("\($0.name) \($0.kind.rawValue)") })),
        ]
        // The lag behind the folder, when the folder is here to ask.
        var folderSequence: JSONValue = .null
        var pending: JSONValue = .null
        var lag: JSONValue = .null
        if !checkpoint.folder.isEmpty, FileManager.default.fileExists(atPath: checkpoint.folder + "/archivist.json"),
            let store = try? DocumentStore(folder: checkpoint.folder, schema: .nyt)
        {
            folderSequence = .int(try store.lastSequence)
            var count = 0
            var oldest: Timestamp?
            var cursor = checkpoint.lastSequence
            while true {
                let page = try store.changePage(since: cursor, limit: 10_000)
                if oldest == nil { oldest = page.changes.first?.time }
                count += page.changes.count
                if page.changes.count < 10_000 { break }
                cursor = page.through
            }
            pending = .int(count)
            lag = .number(String(format: "%.3f", oldest.map { max(0, Double(Timestamp.now().milliseconds - $0.milliseconds) / 1000) } ?? 0))
        }
        fields += [("folder_last_seq", folderSequence), ("changes_pending", pending), ("lag_seconds", lag)]
        return Record(fields)
    }

    /// What `stats` prints: the counts, then the segments (each with its file, documents,
    /// deletions, tombstones, bytes and the sequence numbers it holds; null when the store read
    /// the whole log).
    static func statisticsRecord(_ stats: StoreStatistics, folder: String) -> Record {
        let segments: JSONValue =
            stats.segments.map { list in
                JSONValue.array(
                    list.map { segment -> JSONValue in
                        let members: [(String, JSONValue)] = [
                            ("file", .string(segment.file)), ("documents", .int(segment.documents)),
                            ("deleted", .int(segment.deletedDocuments)),
                            ("tombstones", .int(segment.tombstones - segment.deletedTombstones)),
                            ("bytes", .int(segment.bytes)), ("first_seq", .int(segment.firstSequence)),
                            ("last_seq", .int(segment.lastSequence)),
                        ]
                        return .object(members.map { JSONMember(key: $0.0, value: $0.1) })
                    })
            } ?? .null
        let live = stats.segments.map { list in list.reduce(0) { $0 + $1.documents - $1.deletedDocuments } }
        var fields: [(String, JSONValue)] = [
            ("folder", .string(folder)),
            ("documents", .int(stats.documents)),
            ("document_bytes", .int(stats.documentBytes)),
            ("index_bytes", .int(stats.indexBytes)),
            ("index_lines", .int(stats.indexLines)),
            ("dead_entries", .int(stats.deadEntries)),
            ("tombstones", .int(stats.tombstones)),
            ("format_version", .int(stats.formatVersion)),
            ("projection", .array(stats.projection.map { .string($0) })),
        ]
        fields += [
            ("segment_count", stats.segments.map { .int($0.count) } ?? .null),
            ("segment_bytes", .int(stats.segmentBytes)),
            ("segment_documents", live.map { .int($0) } ?? .null),
            ("changes_after_segments", .int(stats.changesAfterSegments)),
            ("last_seq", .int(stats.lastSequence)),
            ("feed_start", .int(stats.feedStart)),
            ("segments", segments),
        ]
        return Record(fields)
    }

    /// `check`: compare documents with the index.
    public static let check = Command(
        name: "check", synopsis: "", summary: "Verify every document against the index; exit 1 naming each problem",
        discussion:
            "Reads every document file. Each problem is printed as FILE: WHAT (or a record in json, jsonl, csv); 'archivist repair' fixes them.",
        examples: ["check"], arity: 0...0
    ) { invocation, shell in
        let store = try shell.store()
        // On a terminal, how far the reading of the documents is (it reads every file).
        let reporter = ProgressReporter(errors: shell.errors)
        let problems = try store.check { done, total in
            reporter.show("check: \(done) of \(Plural.count(total, "document folder")) read (\(total == 0 ? 100 : done * 100 / total)%)")
        }
        reporter.finish()
        if problems.isEmpty {
            let count = try store.count
            shell.renderer.render(
                single: Record([("ok", .bool(true)), ("documents", .int(count)), ("problems", .int(0))]), to: shell.output)
            return
        }
        if shell.effectiveFormat == .table {
            for problem in problems { shell.output.line(problem.description) }
        } else {
            shell.renderer.render(
                list: problems.map { problem in
                    Record([
                        ("kind", .string(problem.kind.rawValue)), ("file", .string(problem.file)),
                        ("id", problem.id.map(JSONValue.string) ?? .null), ("detail", .string(problem.detail)),
                    ])
                }, to: shell.output)
        }
        throw invocation.failure("\(Plural.count(problems.count, "problem")) in '\(shell.dataFolder)'; run 'archivist repair'")
    }

    /// `repair`: fix what `check` finds.
    public static let repair = Command(
        name: "repair", synopsis: "", summary: "Fix what check finds: quarantine unreadable files, rebuild the index",
        discussion: """
            Unreadable documents and documents without _id are moved to quarantine/<time>/ (never deleted);
            a document stored under the wrong file name is moved to its right place; the index is rebuilt
            from the documents. Prints each action. The rebuild keeps every sequence number of the changes
            feed: an unchanged document keeps its number, a changed or new one gets a new number, a
            document whose file is gone gets a removal. Only an unreadable index is numbered anew: then
            feed_start moves past every old number, and the output says so ('renumbered').
            """,
        examples: ["repair"], arity: 0...0
    ) { invocation, shell in
        let store = try shell.store()
        let report = try store.repair()
        var records: [Record] = []
        for item in report.quarantined {
            records.append(Record([("action", .string("quarantined")), ("file", .string(item.from)), ("to", .string(item.to))]))
        }
        for item in report.moved {
            records.append(Record([("action", .string("moved")), ("file", .string(item.from)), ("to", .string(item.to))]))
        }
        if report.rebuiltIndex {
            records.append(Record([("action", .string("rebuilt")), ("file", .string(FileNames.index)), ("to", .string(FileNames.index))]))
        }
        if report.renumbered {
            records.append(
                Record([
                    ("action", .string("renumbered")), ("file", .string(FileNames.index)),
                    ("to", .string("feed_start \(report.feedStart)")),
                ]))
            shell.errors.line("note: \(renumberedNote(feedStart: report.feedStart))")
        }
        if records.isEmpty {
            shell.renderer.render(single: Record([("ok", .bool(true)), ("problems", .int(0))]), to: shell.output)
        } else {
            shell.renderer.render(list: records, to: shell.output)
        }
        let remaining = report.remaining
        if !remaining.isEmpty {
            throw invocation.failure(
                "\(Plural.count(remaining.count, "problem")) \(Plural.word(for: remaining.count, "remains", "remain")), first: \(remaining[0].description)"
            )
        }
    }

    /// `merge`'s options.
    enum MergeOption: CommandOptions {
        case background

        var declaration: Option {
            switch self {
            case .background:
                Option("--background", help: "return at once when another merger is at work (what writes start)")
            }
        }
    }

    /// `merge [--background]`: run the merges of segments that are due.
    public static let merge = Command(
        name: "merge", synopsis: "", summary: "Run the merges of segments that are due",
        discussion: """
            Writes add small segments; the merge policy joins segments of one size class into one of the next
            (docs/ARCHITECTURE.md, "Merges"). A write that leaves a merge due starts 'archivist merge
            --background' and returns; the merger builds each merge while writers go on, and installs it
            under the writers' lock for a moment (ARCHIVIST_MERGES=inline makes writes merge before they
            return instead). 'merge' runs the due merges now, after waiting for a merger at work to finish:
            what a script that times its writes, or wants the folder settled before it is copied, runs
            last. Prints the merges run and the segments left.
            """,
        examples: ["merge"], options: MergeOption.self, arity: 0...0
    ) { invocation, shell in
        let store = try shell.storeForMerging()
        let merges = try store.runDueMerges(waiting: invocation.isSet(.background) ? 0 : 86_400)
        let stats = try store.statistics()
        shell.renderer.render(
            single: Record([("merges", .int(merges)), ("segments", stats.segments.map { .int($0.count) } ?? .null)]), to: shell.output)
    }

    /// `compact`'s options.
    enum CompactOption: CommandOptions {
        case purgeRemovals

        var declaration: Option {
            switch self {
            case .purgeRemovals:
                Option("--purge-removals", help: "drop the removals kept for the changes feed too (feed_start moves past them)")
            }
        }
    }

    /// `compact [--purge-removals]`: rewrite the index without dead entries.
    public static let compact = Command(
        name: "compact", synopsis: "", summary: "Rewrite the index without dead entries",
        discussion: """
            Keeps the last change of each ID: one line per document and, for a removed one, its removal (a
            tombstone), each with its sequence number, so that 'changes --since SEQ' from any number this
            folder gave out still lists the latest change of every document changed after SEQ, removals
            included; where the feed starts (feed_start) does not move. With --purge-removals the tombstones
            are dropped too: feed_start moves to the highest number they held, and a follower behind it
            must read every document again ('changes --since' below it fails, saying where the feed starts).
            Prints the lines dropped, the index's lines and bytes, and feed_start.
            """,
        examples: ["compact", "compact --purge-removals"], options: CompactOption.self, arity: 0...0
    ) { invocation, shell in
        let store = try shell.store()
        let before = try store.feedStart
        let purge = invocation.isSet(.purgeRemovals)
        let dropped = try store.compact(purgeRemovals: purge)
        let stats = try store.statistics()
        shell.renderer.render(
            single: Record([
                ("dropped", .int(dropped)), ("index_lines", .int(stats.indexLines)),
                ("index_bytes", .int(stats.indexBytes)), ("feed_start", .int(stats.feedStart)),
            ]), to: shell.output)
        if stats.feedStart != before {
            shell.errors.line(
                "note: feed_start moved to \(stats.feedStart): a follower of 'changes' behind it must read every document again")
        }
    }

    /// What is said when every document was numbered again (a rebuild of an unreadable or
    /// missing index).
    static func renumberedNote(feedStart: Int) -> String {
        "\(FileNames.index) was rebuilt from the documents with new sequence numbers (it was unreadable or missing): "
            + "feed_start moved to \(feedStart), and a follower of 'changes' behind it must read every document again"
    }
}
