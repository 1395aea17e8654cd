import ArchivistBase
import ArchivistClient
import ArchivistStore
import Foundation

extension Command {
    /// `archive`'s options.
    enum ArchiveOption: APIOptions {
        case refetch, status, apiBase, pace

        var declaration: Option {
            switch self {
            case .refetch: Option("--refetch", help: "fetch every month of the range, complete ones too")
            case .status: Option("--status", help: "list the months held instead of fetching (as `archives`)")
            case .apiBase: .apiBase
            case .pace: .pace
            }
        }
    }

    /// `archive FROM [TO]`: fetch whole months from the Archive API into the store.
    public static let archive = Command(
        name: "archive", synopsis: "FROM [TO]", summary: "Fetch whole months from the NYT Archive API into the store",
        discussion: """
            Fetches every article of each month from FROM to TO (YYYY-MM, inclusive; TO defaults to
            FROM, `now` is this month), oldest first, one request a month: 500 months a day at NYT's
            limit, the whole archive (1851-09 on) in about five days. Each month's documents are
            upserted in durable batches of 1,000 as it is read, and the month is recorded as complete
            in archive.json only when all of it is stored. Run the same command again to go on: complete
            months are skipped (except this month and the one before, which still grow; --refetch
            fetches them all), and a month cut short by Ctrl-C, a crash or the daily limit is fetched
            again whole (unchanged documents are not rewritten).

            When the day's 500 requests are used up, archive stops before the next one, says how many
            months are left and exits 1: the same command continues tomorrow (UTC). A month that still
            fails after the retries is reported and the run goes on; the exit status is then 1 and the
            summary names it. A month without a paper (September and October 1978, the strike) is
            complete and empty. Prints a summary (json, jsonl) or a row per month (table, csv); `archives` lists
            what the folder holds.
            """ + "\n\n" + apiHelp,
        examples: ["archive 2019-01", "archive 1851-09 2025-12", "archive 2020-01 now --pace 12", "archive 2024-01 2024-06 --refetch"],
        options: ArchiveOption.self, arity: 0...2, isInterruptible: true
    ) { invocation, shell in
        if invocation.isSet(.status) {
            try listArchive(range: try archiveRange(invocation, required: false), shell: shell)
            return
        }
        guard let (first, last) = try archiveRange(invocation, required: true) else { return }
        let configuration = try clientConfiguration(invocation, shell: shell)
        let store = try shell.store()
        let records = ArchiveRecords(store: store)
        let plan = Archiver.plan(from: first, to: last, refetch: invocation.isSet(.refetch), recorded: try records.all())
        let range = first == last ? first.description : "\(first)..\(last)"
        if plan.skipped > 0 {
            shell.errors.line(
                "note: \(Plural.count(plan.skipped, "month")) of \(range) \(Plural.word(for: plan.skipped, "is", "are")) "
                    + "complete already and skipped (--refetch fetches them again)")
        }
        let client = NYTClient(
            configuration: configuration, ledger: StoreRequestLedger(store: store),
            isCancelled: { Interruption.isRequested })
        let archiver = Archiver(client: client, store: store, isCancelled: { Interruption.isRequested })
        let progress = ArchiveProgress(reporter: ProgressReporter(errors: shell.errors), dailyLimit: configuration.dailyLimit)
        let before = try? store.lastSequence
        let (result, error) = runBlocking { await archiver.run(plan.months) { progress.report($0) } }
        var summary = result
        summary.sequences = committedSequences(after: before, store: store)
        progress.finish()
        summary.months = plan.months.count + plan.skipped
        summary.skipped = plan.skipped
        printArchiveSummary(summary, shell: shell)
        let failures =
            summary.failed.isEmpty
            ? ""
            : "; \(Plural.count(summary.failed.count, "month")) failed (\(summary.failed.map(\.description).joined(separator: ", "))): "
                + "run the same command again to retry"
        switch error {
        case nil:
            if !summary.failed.isEmpty {
                throw ShellError.failure(
                    "archive: \(Plural.count(summary.failed.count, "month")) of \(range) failed "
                        + "(\(summary.failed.map(\.description).joined(separator: ", "))): run the same command again to retry")
            }
        case .cancelled?:
            Interruption.acknowledge()
            throw invocation.interrupted(
                "interrupted with \(Plural.count(summary.left, "month")) of \(range) left; what was stored stays, "
                    + "and the same command goes on from the month it stopped in" + failures)
        case let error?:
            if case .dailyLimitReached = error {
                throw ShellError.failure(
                    "\(Shell.message(for: error)): \(Plural.count(summary.left, "month")) of \(range) "
                        + "\(Plural.word(for: summary.left, "is", "are")) left; the same command continues tomorrow (UTC)" + failures)
            }
            throw ShellError.failure("archive: \(Shell.message(for: error))" + failures)
        }
    }

    /// `archives [FROM [TO]]`: the months the folder holds.
    public static let archives = Command(
        name: "archives", synopsis: "[FROM [TO]]", summary: "List the Archive API months held: complete, partial, failed",
        discussion: """
            One row per month recorded in archive.json by `archive` (within FROM..TO when given, as
            YYYY-MM): its status, the API's hits, the documents received and stored, and when. In table
            format a calendar instead, a row per year and a cell per month, so the holes show at a glance:
            # complete, 0 complete and empty (no paper that month), + complete with fewer documents than
            hits, ~ partial (stopped in the middle: fetched again next time), x failed, . not fetched.
            """,
        examples: ["archives", "archives 1970-01 1989-12", "archives --format json"],
        arity: 0...2
    ) { invocation, shell in
        try listArchive(range: try archiveRange(invocation, required: false), shell: shell)
    }

    // MARK: Parsing

    /// The months FROM and TO of the positionals (TO defaults to FROM; `now` is this month); nil
    /// when none were given and none are `required`.
    static func archiveRange<Options: CommandOptions>(
        _ invocation: Invocation<Options>, required: Bool
    ) throws -> (ArchiveMonth, ArchiveMonth)? {
        let positionals = invocation.positionals
        guard let fromText = positionals.first else {
            if required { throw invocation.usageError("give the first month, YYYY-MM (archive 2019-01, archive 1851-09 now)") }
            return nil
        }
        let current = ArchiveMonth.current
        func month(_ text: String, _ role: String) throws -> ArchiveMonth {
            if text == "now" { return current }
            guard let month = ArchiveMonth(text) else {
                throw invocation.usageError("\(role) '\(text)' is not a month (expected YYYY-MM, or now)")
            }
            guard month >= ArchiveMonth.first else {
                throw invocation.usageError("\(role) \(month) is before the archive's first month, \(ArchiveMonth.first)")
            }
            guard month <= current else { throw invocation.usageError("\(role) \(month) is after this month, \(current)") }
            return month
        }
        let first = try month(fromText, "FROM")
        let last = positionals.count > 1 ? try month(positionals[1], "TO") : first
        guard first <= last else { throw invocation.usageError("TO \(last) is before FROM \(first)") }
        return (first, last)
    }

    // MARK: Printing

    /// The summary (json, jsonl), or a row per month and a summary line (table; csv has the line
    /// on stderr).
    static func printArchiveSummary(_ summary: ArchiveSummary, shell: Shell) {
        let totals = Record(
            [
                ("months", .int(summary.months)), ("skipped", .int(summary.skipped)), ("fetched", .int(summary.fetched)),
                ("documents", .int(summary.documents)), ("added", .int(summary.added)), ("updated", .int(summary.updated)),
                ("unchanged", .int(summary.unchanged)), ("failed", .array(summary.failed.map { .string($0.description) })),
                ("left", .int(summary.left)),
            ] + sequenceFields(summary.sequences))
        let line =
            "\(Plural.count(summary.months, "month")): \(summary.fetched) fetched, \(summary.skipped) skipped, "
            + "\(summary.failed.count) failed\(summary.left > 0 ? ", \(summary.left) left" : ""); "
            + "\(Plural.count(summary.documents, "document")) stored: \(summary.added) added, \(summary.updated) updated, "
            + "\(summary.unchanged) unchanged" + (summary.sequences.map { "; seq \($0.lowerBound)-\($0.upperBound)" } ?? "")
        switch shell.effectiveFormat {
        case .json, .jsonl:
            shell.renderer.render(single: totals, to: shell.output)
        case .table:
            if !summary.records.isEmpty { shell.renderer.render(list: summary.records.map(archiveRow), to: shell.output) }
            shell.output.line(line)
        case .csv:
            shell.renderer.render(list: summary.records.map(archiveRow), to: shell.output)
            shell.errors.line(line)
        }
    }

    /// One month's row.
    static func archiveRow(_ record: ArchiveRecord) -> Record {
        Record([
            ("month", .string(record.month.description)), ("status", .string(record.status.rawValue)),
            ("hits", record.hits.map { .int($0) } ?? .null), ("received", .int(record.received)),
            ("stored", .int(record.stored)), ("added", .int(record.added)), ("updated", .int(record.updated)),
            ("unchanged", .int(record.unchanged)), ("rejected", .int(record.rejected)),
            ("at", .string(Timestamp(record.at).description)), ("error", record.error.map(JSONValue.string) ?? .null),
        ])
    }

    /// Lists the months held (within `range`): a calendar in table format, else a row per month.
    static func listArchive(range: (ArchiveMonth, ArchiveMonth)?, shell: Shell) throws {
        let store = try shell.store()
        var records = try ArchiveRecords(store: store).all()
        if let (first, last) = range { records = records.filter { $0.month >= first && $0.month <= last } }
        guard shell.effectiveFormat == .table else {
            shell.renderer.render(list: records.map(archiveRow), to: shell.output)
            return
        }
        if records.isEmpty {
            shell.errors.line(
                "no archive months \(range == nil ? "held yet" : "held in that range"): 'archivist archive 2019-01' fetches one")
            return
        }
        for line in ArchiveCalendar(records: records, range: range).lines { shell.output.line(line) }
    }
}
