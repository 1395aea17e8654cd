import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension Command {
    /// `changes`' options.
    enum ChangesOption: CommandOptions {
        case since, limit, fields, follow

        var declaration: Option {
            switch self {
            case .since: Option("--since", value: "SEQ", help: "only the changes after sequence number SEQ (the last one seen)")
            case .limit: Option("--limit", value: "N", help: "print at most N changes")
            case .fields: .fields
            case .follow: Option("--follow", help: "keep printing changes as any process commits them, until Ctrl-C")
            }
        }
    }

    /// `changes [--since SEQ] [FILTER] [--limit N] [--fields a,b] [--follow]`.
    public static let changes = Command(
        name: "changes", synopsis: "[FILTER]", summary: "List the changes committed to the folder, in order, from a sequence number",
        discussion: """
            Every change (a document added, updated or removed) has a sequence number, strictly increasing
            and never reused. Prints each change after --since SEQ (SEQ itself excluded: pass the last number
            seen), oldest first: {"seq":N,"id":ID,"change":"added|updated|removed","updated_at":TIME} in
            jsonl, plus the --fields asked (projected fields, as the change left them; a removal's as they
            were). Without --since, every change the log keeps: the last change of each document (a removed
            one's removal included), and every change since the last compact; from any --since this folder
            gave out, at least the latest change of every document changed after it (compact, repair and
            index add/drop keep every number and removal). FILTER selects changes by the document as the
            change left it (a removal matches when the document it removed did); it may use projected
            fields and text search. With --follow, changes committed by any process are printed within a
            moment of their commit, until Ctrl-C or until the reader of the output goes away; nothing is
            used while nothing changes. A --since before the feed's start is an error that says where it
            starts; only 'compact --purge-removals' and the rebuild of an unreadable index move the start.
            """,
        examples: [
            "changes --since 1200", "changes --since 1200 section_name = Sports --fields headline.main",
            "changes --follow --format jsonl",
        ],
        options: ChangesOption.self,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let filter = try parseFilter(invocation.positionalWords)
        let since = try invocation.count(.since) ?? 0
        let limit = try invocation.count(.limit)
        let fields = fieldList(invocation.value(.fields)) ?? []
        if let copy = try shell.copy() {
            try followCopyChanges(
                copy, since: since, filter: filter, limit: limit, fields: fields, follow: invocation.isSet(.follow), invocation: invocation,
                shell: shell)
            return
        }
        let store = try shell.store()
        let projection = store.projection
        let unknown = fields.filter { $0 != "_id" && projection.position(of: $0) == nil }
        if !unknown.isEmpty {
            throw invocation.usageError(
                "--fields of changes come from the projected fields, and \(unknown.joined(separator: ", ")) \(Plural.word(for: unknown.count, "is", "are")) not projected ('archivist index add FIELD' adds one)"
            )
        }
        let follow = invocation.isSet(.follow)
        let lines = follow && shell.effectiveFormat == .table
        try followChanges(store: store, since: since, filter: filter, limit: limit, follow: follow, invocation: invocation, shell: shell) {
            changes in
            if lines {
                for change in changes { shell.output.line(fitted(watchLine(change), shell: shell)) }
            } else {
                let records = changes.map { changeRecord($0, fields: fields) }
                shell.renderer.render(list: records, to: shell.output, clippingTo: shell.output.isTerminal ? Renderer.terminalWidth() : nil)
            }
        }
    }

    /// `watch`'s options.
    enum WatchOption: CommandOptions {
        case since

        var declaration: Option {
            switch self {
            case .since: Option("--since", value: "SEQ", help: "start after sequence number SEQ instead of now")
            }
        }
    }

    /// `watch [FILTER]`: `changes --follow` for people.
    public static let watch = Command(
        name: "watch", synopsis: "[FILTER]", summary: "Show changes as they are committed (by any process), until Ctrl-C",
        discussion: """
            A line per change from now on (or after --since SEQ): the time, added, updated or removed, the ID
            and the headline, for example while a 'search --all' or an 'archive' run fills the folder from
            another terminal. FILTER selects changes as in 'changes'. Ctrl-C stops (at the prompt, back to it).
            """,
        examples: ["watch", "watch section_name = Sports", #"watch "climate change""#],
        options: WatchOption.self,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let filter = try parseFilter(invocation.positionalWords)
        let store = try shell.store()
        let since = try invocation.count(.since) ?? store.lastSequence
        if shell.errors.isTerminal {
            shell.errors.line("watching \(shell.dataFolder) after seq \(since) (Ctrl-C to stop)")
            shell.errors.flush()
        }
        try followChanges(store: store, since: since, filter: filter, limit: nil, follow: true, invocation: invocation, shell: shell) {
            changes in
            for change in changes { shell.output.line(fitted(watchLine(change), shell: shell)) }
        }
    }

    /// A line cut to the terminal's width when stdout is one.
    static func fitted(_ line: String, shell: Shell) -> String {
        shell.output.isTerminal ? DisplayWidth.clipped(line, to: Renderer.terminalWidth()) : line
    }

    /// Reads the changes after `since` and hands them to `emit` a page at a time; with `follow`,
    /// waits for more (inotify) until Ctrl-C, the reader of stdout going away, or `limit`.
    static func followChanges<Options: CommandOptions>(
        store: DocumentStore, since: Int, filter: Filter, limit: Int?, follow: Bool, invocation: Invocation<Options>, shell: Shell,
        emit: ([Change]) -> Void
    ) throws {
        // Watching starts before the first read, so that nothing committed in between is missed.
        let watcher = LogWatcher(folder: store.folder)
        if follow {
            // A stream is shown as it comes: output held for the interactive shell's pager is
            // let go (it never ends on its own, so it cannot be paged).
            let held = shell.output.stopHolding()
            shell.output.write(bytes: held)
        }
        var last = since
        var printed = 0
        // JSON Lines and the lines of a follow are printed a page at a time, so that memory
        // follows the page, not the log; a table, csv or a JSON array is made of the whole answer.
        let streams = follow || shell.effectiveFormat == .jsonl
        let pageSize = 1000
        while true {
            let remaining = limit.map { $0 - printed }
            let asked = streams ? min(remaining ?? pageSize, pageSize) : remaining
            let page = try store.changePage(since: last, filter: filter, limit: asked)
            if !page.changes.isEmpty {
                emit(page.changes)
                shell.output.flush()
                printed += page.changes.count
            }
            last = page.through
            if let limit, printed >= limit { return }
            if Interruption.isRequested {
                throw invocation.interrupted(
                    "stopped \(follow ? "following " : "")after seq \(last) (\(Plural.count(printed, "change")) printed)")
            }
            if shell.output.hasFailed { return }
            // A full page: more may follow at once.
            if let asked, page.changes.count == asked { continue }
            guard follow else { return }
            if shell.output.hasFailed { return }
            // A wait ends at a change, or every half second to look at Ctrl-C (whose signal may
            // reach another thread than this one's poll).
            let outcome = watcher.wait(timeout: 0.5, hangUpOf: STDOUT_FILENO)
            if Interruption.isRequested {
                throw invocation.interrupted("stopped following after seq \(last) (\(Plural.count(printed, "change")) printed)")
            }
            if outcome == .hungUp { return }
        }
    }

    /// `changes` of a PostgreSQL copy: its rows and its removals after `since` in the order of
    /// their sequence numbers (each is its document's last change), a page at a time; with
    /// `follow`, the copy is looked at again every half second until Ctrl-C. The copy keeps no
    /// removed document, so a FILTER matches no removal there.
    static func followCopyChanges<Options: CommandOptions>(
        _ copy: PostgresCopy, since: Int, filter: Filter, limit: Int?, fields: [String], follow: Bool, invocation: Invocation<Options>,
        shell: Shell
    ) throws {
        if follow { shell.output.write(bytes: shell.output.stopHolding()) }
        let projection = Projection(paths: fields.filter { $0 != "_id" })
        let needsDocuments = !fields.isEmpty || filter != .all
        var last = since
        var printed = 0
        while true {
            let asked = min(limit.map { $0 - printed } ?? 1000, 1000)
            let page = try copy.changes(since: last, limit: asked, documents: needsDocuments)
            var records: [Record] = []
            for change in page {
                last = change.sequence
                if filter != .all, !(change.document.map { filter.matches($0, textSearch: copy.textSearch) } ?? false) { continue }
                var values: [(String, JSONValue)] = [
                    ("seq", .int(change.sequence)), ("id", .string(change.id)), ("change", .string(change.kind)),
                    ("updated_at", .string(change.updatedAt)),
                ]
                // A removal has no document in the copy: its fields are null.
                let projected = change.document.map { projection.values(of: $0) }
                for field in fields {
                    let position = projection.position(of: field)
                    let fieldValue = projected.flatMap { values in position.flatMap { values[$0] } } ?? .null
                    let value = field == "_id" ? JSONValue.string(change.id) : fieldValue
                    values.append((field, value))
                }
                records.append(Record(values))
            }
            if !records.isEmpty {
                shell.renderer.render(list: records, to: shell.output, clippingTo: shell.output.isTerminal ? Renderer.terminalWidth() : nil)
                shell.output.flush()
                printed += records.count
            }
            if let limit, printed >= limit { return }
            if Interruption.isRequested {
                throw invocation.interrupted(
                    "stopped \(follow ? "following " : "")after seq \(last) (\(Plural.count(printed, "change")) printed)")
            }
            if shell.output.hasFailed { return }
            if page.count == asked { continue }
            guard follow else { return }
            usleep(500_000)
            if Interruption.isRequested {
                throw invocation.interrupted("stopped following after seq \(last) (\(Plural.count(printed, "change")) printed)")
            }
        }
    }

    /// A change as `changes` prints it.
    static func changeRecord(_ change: Change, fields: [String]) -> Record {
        var values: [(String, JSONValue)] = [
            ("seq", .int(change.sequence)), ("id", .string(change.id)), ("change", .string(change.kind.rawValue)),
            ("updated_at", .string(change.time.description)),
        ]
        if !fields.isEmpty {
            let projected = change.fields
            for field in fields {
                values.append((field, field == "_id" ? .string(change.id) : projected[field] ?? .null))
            }
        }
        return Record(values)
    }

    /// A change as `watch` shows it: `2026-12-02 14:03:12  added    ID  headline`.
    static func watchLine(_ change: Change) -> String {
        let time = change.time.description
        let shown = String(time.prefix(10)) + " " + String(time.dropFirst(11).prefix(8))
        let kind = change.kind.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        var line = "\(shown)  \(kind)  #\(change.sequence)  \(change.id)"
        if case .string(let headline)? = change.fields["headline.main"], !headline.isEmpty {
            line += "  " + headline.replacingOccurrences(of: "\n", with: " ")
        }
        return line
    }
}
