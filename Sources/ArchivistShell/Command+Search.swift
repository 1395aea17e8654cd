import ArchivistClient
import ArchivistStore
import Dispatch
import Foundation
import Synchronization

extension Command {
    /// Options every command that talks to the API takes.
    static let apiOptions = [
        Option("--api-base", value: "URL", help: "the API's base URL (else NYT_API_BASE, else https://api.nytimes.com)"),
        Option("--pace", value: "SECONDS", help: "least seconds between requests (else ARCHIVIST_PACE, else 12)"),
    ]

    static let apiHelp = """
    The key comes from NYT_API_KEY (https://developer.nytimes.com/get-started) and never appears in
    output, errors or files (URLs show api-key=REDACTED). NYT allows 5 requests a minute and 500 a
    day: requests are spaced --pace seconds apart across every archivist process using the data
    folder, counted per UTC day in api-usage.json (a warning at 450 and 500), and 429s, 5xx answers,
    timeouts and dropped connections are retried with exponential backoff (ARCHIVIST_BACKOFF
    seconds first, doubling, 5 retries); 400, 401 and 403 fail at once.
    """

    /// `search [QUERY...]`: fetch from the API into the store, then show what matched.
    public static let search = Command(
        name: "search", synopsis: "[QUERY...]", summary: "Fetch articles from the NYT Article Search API into the store",
        discussion: """
        Sends QUERY as q (the words of QUERY may be separate arguments), with --fq passed through as
        the Lucene filter, --from/--to (YYYY-MM-DD, inclusive) as begin_date/end_date, and --sort.
        Fetches --pages N pages of 10 (default 1), or with --all every hit (oldest first unless
        --sort is given): a date range with more than 1,000 hits (the API's 100-page cap) is split
        until each part can be paged through. Each page is stored as soon as it arrives, so Ctrl-C
        (or a crash) loses at most the page in flight.

        Prints a summary (fetched, added, updated, unchanged, pages) and then the fetched articles
        from the store, like find (--fields and --limit as in find; csv prints the summary on stderr).
        When the API cannot be reached (refused, DNS, timeout, 5xx after retries) the answer comes
        from the cache instead: a text search for QUERY within the dates, with a note on stderr.
        --save NAME records the search for `refresh` and `searches`.
        """ + "\n\n" + apiHelp,
        examples: ["search election --from 2016-11-01 --to 2016-11-30 --sort newest --pages 3",
                   #"search --fq 'news_desk:("Sports" "Foreign")' --from 2019-01-01 --all --save desks"#,
                   "search climate --all --save climate --pace 12"],
        options: [Option("--from", value: "DATE", help: "first publication day, YYYY-MM-DD (inclusive)"),
                  Option("--to", value: "DATE", help: "last publication day, YYYY-MM-DD (inclusive)"),
                  Option("--sort", value: "ORDER", help: "newest, oldest or relevance (the API's default)"),
                  Option("--fq", value: "FILTER", help: "a Lucene filter query, passed through as fq"),
                  Option("--pages", value: "N", help: "fetch at most N pages of 10 (1 to 101; default 1)"),
                  Option("--all", help: "fetch every hit, splitting the date range past 1,000 hits"),
                  Option("--save", value: "NAME", help: "save the search under NAME for refresh"),
                  Option("--limit", value: "N", help: "show at most N articles"),
                  Option("--fields", value: "a,b.c", help: "the fields to show (dotted paths, comma-separated)")] + apiOptions,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let request = try searchRequest(invocation)
        let limit = try pageLimit(invocation)
        let saveName = invocation.value("--save")
        if let saveName, !SavedSearch.isValidName(saveName) {
            throw ShellError.usage("search: --save takes a name of letters, digits, '.', '_' and '-' (at most 64), not '\(saveName)'", command: "search")
        }
        let shown = try count(invocation.value("--limit"), option: "--limit", command: "search")
        let fields = fieldList(invocation.value("--fields"))
        let configuration = try clientConfiguration(invocation, command: "search")
        let store = try shell.store()
        let saved = SavedSearches(store: store)
        if let saveName {
            let previous = try? saved.search(named: saveName)
            var record = SavedSearch(name: saveName, request: request, savedAt: Date())
            if previous?.request == request { record.newestPublication = previous?.newestPublication }
            try saved.save(record)
        }
        let (summary, error) = harvest(request, limit: limit, configuration: configuration, store: store, shell: shell)
        if let saveName {
            try saved.recordRun(of: saveName, at: Date(), summary: summary, isComplete: error == nil)
        }
        if let error, error.meansOffline {
            shell.errors.line("note: \(Shell.message(for: error)); answering from the cache")
            printSummary(summary, shell: shell)
            try printCachedAnswer(request, limit: shown, fields: fields, store: store, shell: shell)
            return
        }
        if let error, case .cancelled = error {
            Interruption.acknowledge()  // the press stopped the fetching; the fetched are still listed
            printSummary(summary, shell: shell)
            try printFetched(summary.ids, sort: request.sort, limit: shown, fields: fields, store: store, shell: shell)
            throw ShellError.interrupted("search: interrupted after \(summary.pages) page\(summary.pages == 1 ? "" : "s"); the \(summary.fetched) article\(summary.fetched == 1 ? "" : "s") fetched are stored")
        }
        if let error {
            let kept = summary.fetched > 0 ? " (the \(summary.fetched) article\(summary.fetched == 1 ? "" : "s") from earlier pages are stored)" : ""
            throw ShellError.failure(Shell.message(for: error) + kept)
        }
        printSummary(summary, shell: shell)
        try printFetched(summary.ids, sort: request.sort, limit: shown, fields: fields, store: store, shell: shell)
    }

    /// `searches`: the saved searches and their last runs.
    public static let searches = Command(
        name: "searches", synopsis: "", summary: "List the saved searches and their last runs",
        discussion: """
        One row per search saved with `search --save NAME`: its query, filter, dates and sort, when
        it last ran and what that run fetched, and the newest publication date a complete run has
        seen (where `refresh` starts, less a day). --drop NAME forgets a saved search (its articles
        stay in the store). The searches live in searches.json in the data folder.
        """,
        examples: ["searches", "searches --format json", "searches --drop climate"],
        options: [Option("--drop", value: "NAME", help: "forget the saved search NAME")],
        arity: 0...0
    ) { invocation, shell in
        let store = try shell.store()
        let saved = SavedSearches(store: store)
        if let name = invocation.value("--drop") {
            try saved.remove(named: name)
            shell.renderer.render(single: Record([("dropped", .string(name))]), to: shell.output)
            return
        }
        let records = try saved.all().sorted { $0.name < $1.name }.map { search -> Record in
            func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
            return Record([
                ("name", .string(search.name)),
                ("q", text(search.request.query)),
                ("fq", text(search.request.filterQuery)),
                ("from", text(search.request.from?.description)),
                ("to", text(search.request.to?.description)),
                ("sort", text(search.request.sort?.rawValue)),
                ("last_run_at", text(search.lastRunAt.map { Timestamp($0).description })),
                ("fetched", search.lastRun.map { .int($0.fetched) } ?? .null),
                ("added", search.lastRun.map { .int($0.added) } ?? .null),
                ("newest_pub_date", text(search.newestPublication.map { Timestamp($0).description })),
            ])
        }
        if records.isEmpty, shell.effectiveFormat == .table {
            shell.errors.line("no saved searches yet: 'archivist search QUERY --save NAME' saves one")
            return
        }
        shell.renderer.render(list: records, to: shell.output, clippingTo: shell.output.isTerminal ? Renderer.terminalWidth() : nil)
    }

    /// `refresh [NAME...]`: fetch what is new for saved searches.
    public static let refresh = Command(
        name: "refresh", synopsis: "[NAME...]", summary: "Fetch only what is new for saved searches (all when no NAME)",
        discussion: """
        For each saved search (all of them without NAME): fetches every hit from the newest
        publication date a complete run has stored, less a day of overlap, up to today (or the saved
        --to), oldest first, and upserts them. A search never run to completion starts from its
        saved --from. A refresh that finds nothing new costs one request per search. Prints a row per
        search: the range fetched and what changed.
        """ + "\n\n" + apiHelp,
        examples: ["refresh", "refresh climate desks", "refresh climate --pace 12"],
        options: apiOptions, arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let configuration = try clientConfiguration(invocation, command: "refresh")
        let store = try shell.store()
        let saved = SavedSearches(store: store)
        let all = try saved.all()
        var chosen: [SavedSearch] = []
        if invocation.positionals.isEmpty {
            chosen = all.sorted { $0.name < $1.name }
            if chosen.isEmpty { throw ShellError.failure("refresh: no saved searches ('archivist search QUERY --save NAME' saves one)") }
        } else {
            for name in invocation.positionals {
                guard let search = all.first(where: { $0.name == name }) else { throw ClientError.unknownSearch(name: name) }
                chosen.append(search)
            }
        }
        var records: [Record] = []
        var failure: ShellError?
        for search in chosen {
            if Interruption.isRequested {
                failure = .interrupted("refresh: interrupted before \(search.name); what was fetched is stored")
                break
            }
            let today = CalendarDay.today
            var request = search.request
            request.from = search.newestPublication.map { CalendarDay($0).adding(days: -1) } ?? search.request.from
            request.to = min(search.request.to ?? today, today)
            request.sort = .oldest
            func row(_ summary: HarvestSummary?, _ status: String) -> Record {
                Record([("name", .string(search.name)),
                        ("from", request.from.map { .string($0.description) } ?? .null),
                        ("to", request.to.map { .string($0.description) } ?? .null)]
                       + summaryFields(summary ?? HarvestSummary()) + [("status", .string(status))])
            }
            if let from = request.from, let to = request.to, to < from {
                records.append(row(nil, "up to date (its range ends \(to))"))
                continue
            }
            let (summary, error) = harvest(request, limit: .all, configuration: configuration, store: store, shell: shell)
            try saved.recordRun(of: search.name, at: Date(), summary: summary, isComplete: error == nil)
            guard let error else {
                records.append(row(summary, "done"))
                continue
            }
            if case .cancelled = error {
                records.append(row(summary, "interrupted"))
                failure = .interrupted("refresh: interrupted during \(search.name); what was fetched is stored")
            } else {
                records.append(row(summary, "failed"))
                failure = .failure("\(search.name): \(Shell.message(for: error))")
            }
            break
        }
        shell.renderer.render(list: records, to: shell.output)
        if let failure { throw failure }
    }

    // MARK: Parsing

    /// The request `search`'s arguments describe.
    static func searchRequest(_ invocation: Invocation) throws -> SearchRequest {
        func day(_ option: String) throws -> CalendarDay? {
            guard let text = invocation.value(option) else { return nil }
            guard text.utf8.count == 10, let day = CalendarDay(text) else {
                throw ShellError.usage("search: \(option): '\(text)' is not a date (expected YYYY-MM-DD)", command: "search")
            }
            return day
        }
        var sort: SearchRequest.Sort?
        if let text = invocation.value("--sort") {
            guard let parsed = SearchRequest.Sort(rawValue: text) else {
                throw ShellError.usage("search: --sort takes newest, oldest or relevance, not '\(text)'", command: "search")
            }
            sort = parsed
        }
        let query = invocation.positionals.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        let request = SearchRequest(query: query.isEmpty ? nil : query, filterQuery: invocation.value("--fq"),
                                    from: try day("--from"), to: try day("--to"), sort: sort)
        do {
            try request.validate()
        } catch {
            throw ShellError.usage("search: \(Shell.message(for: error))", command: "search")
        }
        return request
    }

    /// `--pages N` or `--all`.
    static func pageLimit(_ invocation: Invocation) throws -> PageLimit {
        let pages = invocation.value("--pages")
        if invocation.isSet("--all") {
            if pages != nil { throw ShellError.usage("search: give --pages or --all, not both", command: "search") }
            return .all
        }
        guard let pages else { return .pages(1) }
        guard let count = Int(pages), (1...SearchRequest.lastPage + 1).contains(count) else {
            throw ShellError.usage("search: --pages takes a number from 1 to \(SearchRequest.lastPage + 1), not '\(pages)'", command: "search")
        }
        return .pages(count)
    }

    /// The client's settings from options and the environment; the key from `NYT_API_KEY`.
    static func clientConfiguration(_ invocation: Invocation, command: String) throws -> NYTClient.Configuration {
        let environment = ProcessInfo.processInfo.environment
        func seconds(_ text: String?, _ name: String) throws -> Double? {
            guard let text else { return nil }
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw ShellError.usage("\(command): \(name) takes a number of seconds, not '\(text)'", command: command)
            }
            return value
        }
        let base = invocation.value("--api-base") ?? environment["NYT_API_BASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? NYTClient.Configuration.defaultBaseURL
        guard SearchRequest().url(base: base, apiKey: nil) != nil else {
            throw ShellError.usage("\(command): --api-base: '\(base)' is not an http(s) URL", command: command)
        }
        let pace = try seconds(invocation.value("--pace"), "--pace") ?? seconds(environment["ARCHIVIST_PACE"], "ARCHIVIST_PACE")
        guard let key = environment["NYT_API_KEY"], !key.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ClientError.missingAPIKey
        }
        var configuration = NYTClient.Configuration(baseURL: base, apiKey: key.trimmingCharacters(in: .whitespaces))
        if let pace { configuration.pace = pace }
        if let backoff = try seconds(environment["ARCHIVIST_BACKOFF"], "ARCHIVIST_BACKOFF") { configuration.backoff = backoff }
        if let timeout = try seconds(environment["ARCHIVIST_TIMEOUT"], "ARCHIVIST_TIMEOUT") { configuration.timeout = max(1, timeout) }
        return configuration
    }

    // MARK: Running

    /// Runs a harvest to its end, Ctrl-C (`.cancelled`), or an error, showing progress on a terminal.
    static func harvest(_ request: SearchRequest, limit: PageLimit, configuration: NYTClient.Configuration,
                        store: DocumentStore, shell: Shell) -> (HarvestSummary, ClientError?) {
        let client = NYTClient(configuration: configuration, ledger: StoreRequestLedger(store: store),
                               isCancelled: { Interruption.isRequested })
        let harvester = Harvester(client: client, store: store)
        let progress = ProgressReporter(errors: shell.errors)
        let result = runBlocking { await harvester.run(request, limit: limit) { progress.report($0) } }
        progress.finish()
        return result
    }

    /// Waits for an async operation from synchronous code (the commands are synchronous; only the
    /// client is async).
    static func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        Task.detached {
            let value = await operation()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    // MARK: Printing

    /// The counts of a run, as `search` and `refresh` print them.
    static func summaryFields(_ summary: HarvestSummary) -> [(String, JSONValue)] {
        [("fetched", .int(summary.fetched)), ("added", .int(summary.added)), ("updated", .int(summary.updated)),
         ("unchanged", .int(summary.unchanged)), ("pages", .int(summary.pages))]
    }

    static func printSummary(_ summary: HarvestSummary, shell: Shell) {
        let record = Record(summaryFields(summary))
        switch shell.effectiveFormat {
        case .json, .jsonl:
            shell.renderer.render(single: record, to: shell.output)
        case .table:
            shell.output.line(summaryLine(summary))
        case .csv:
            shell.errors.line(summaryLine(summary))
        }
        if summary.unreachableHits > 0 {
            shell.errors.line("warning: \(summary.unreachableHits) hits could not be fetched: a single day had more than 1,000 (narrow the search with --fq)")
        }
    }

    static func summaryLine(_ summary: HarvestSummary) -> String {
        "fetched \(summary.fetched) article\(summary.fetched == 1 ? "" : "s") in \(summary.pages) page\(summary.pages == 1 ? "" : "s"): "
            + "\(summary.added) added, \(summary.updated) updated, \(summary.unchanged) unchanged"
    }

    /// Prints the fetched articles from the store: newest or oldest first when so sorted, else
    /// in the order the API gave them.
    static func printFetched(_ ids: [String], sort: SearchRequest.Sort?, limit: Int?, fields: [String]?,
                             store: DocumentStore, shell: Shell) throws {
        var ordered = ids
        if let keys = publicationOrder(sort), !ids.isEmpty {
            ordered = try store.find(Query(filter: .field("_id", [.in(ids.map(JSONValue.string))]), sort: keys)).ids
        }
        if let limit { ordered = Array(ordered.prefix(limit)) }
        try printDocuments(ordered, fields: fields, store: store, shell: shell)
    }

    /// The store's sort for the API's `newest` or `oldest` (by `pub_date`); nil for relevance or none.
    static func publicationOrder(_ sort: SearchRequest.Sort?) -> [SortKey]? {
        switch sort {
        case .newest?: [SortKey("pub_date", descending: true)]
        case .oldest?: [SortKey("pub_date")]
        case .relevance?, nil: nil
        }
    }

    /// Answers from the store what the API could not: a text search for q within the dates.
    static func printCachedAnswer(_ request: SearchRequest, limit: Int?, fields: [String]?,
                                  store: DocumentStore, shell: Shell) throws {
        var clauses: [Filter] = []
        if let query = request.query, !query.isEmpty { clauses.append(.text(query)) }
        var dates: [Condition] = []
        if let from = request.from { dates.append(.gte(.string(from.description))) }
        if let to = request.to { dates.append(.lte(.string(to.description))) }
        if !dates.isEmpty { clauses.append(.field("pub_date", dates)) }
        if let filterQuery = request.filterQuery {
            if let translated = FilterQueryTranslation.filter(for: filterQuery) {
                clauses.append(translated)
            } else {
                shell.errors.line("note: --fq '\(filterQuery)' cannot be applied to the cache, so it was left out")
            }
        }
        // By relevance means by the text search's ranking; without a query, newest first.
        let sort = publicationOrder(request.sort) ?? (request.query == nil ? publicationOrder(.newest) ?? [] : [])
        let filter: Filter = clauses.isEmpty ? .all : (clauses.count == 1 ? clauses[0] : .and(clauses))
        let result = try store.find(Query(filter: filter, sort: sort, limit: limit))
        noteScan(result.scannedPaths, shell: shell)
        try printDocuments(result.ids, fields: fields, store: store, shell: shell)
    }
}
