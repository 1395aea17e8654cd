import ArchivistBase
import ArchivistClient
import ArchivistStore
import Dispatch
import Foundation
import Synchronization

extension Command {
    /// `search`'s options.
    enum SearchOption: APIOptions {
        case from, to, sort, fq, pages, all, save, limit, fields, apiBase, pace

        var declaration: Option {
            switch self {
            case .from: Option("--from", value: "DATE", help: "first publication day, YYYY-MM-DD (inclusive)")
            case .to: Option("--to", value: "DATE", help: "last publication day, YYYY-MM-DD (inclusive)")
            case .sort: Option("--sort", value: "ORDER", help: "newest, oldest or relevance (the API's default)")
            case .fq: Option("--fq", value: "FILTER", help: "a Lucene filter query, passed through as fq")
            case .pages: Option("--pages", value: "N", help: "fetch at most N pages of 10 (1 to 101; default 1)")
            case .all: Option("--all", help: "fetch every hit, splitting the date range past 1,000 hits")
            case .save: Option("--save", value: "NAME", help: "save the search under NAME for refresh")
            case .limit: Option("--limit", value: "N", help: "show at most N articles")
            case .fields: .fields
            case .apiBase: .apiBase
            case .pace: .pace
            }
        }
    }

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
        examples: [
            "search election --from 2016-11-01 --to 2016-11-30 --sort newest --pages 3",
            #"search --fq 'news_desk:("Sports" "Foreign")' --from 2019-01-01 --all --save desks"#,
            "search climate --all --save climate --pace 12",
        ],
        options: SearchOption.self,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let request = try searchRequest(invocation)
        let limit = try pageLimit(invocation)
        let saveName = try savedSearchName(invocation)
        let shown = try invocation.count(.limit)
        let fields = fieldList(invocation.value(.fields))
        let configuration = try clientConfiguration(invocation, shell: shell)
        let store = try shell.store()
        let saved = SavedSearches(store: store)
        if let saveName { try save(request, as: saveName, in: saved) }
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
            throw invocation.interrupted(
                "interrupted after \(Plural.count(summary.pages, "page")); the "
                    + "\(Plural.count(summary.fetched, "article")) fetched \(Plural.word(for: summary.fetched, "is", "are")) stored")
        }
        if let error {
            let kept =
                summary.fetched > 0
                ? " (the \(Plural.count(summary.fetched, "article")) from earlier pages \(Plural.word(for: summary.fetched, "is", "are")) stored)"
                : ""
            throw ShellError.failure(Shell.message(for: error) + kept)
        }
        printSummary(summary, shell: shell)
        try printFetched(summary.ids, sort: request.sort, limit: shown, fields: fields, store: store, shell: shell)
    }

    // MARK: Parsing

    /// The request `search`'s arguments describe.
    static func searchRequest(_ invocation: Invocation<SearchOption>) throws -> SearchRequest {
        func day(_ option: SearchOption) throws -> CalendarDay? {
            guard let text = invocation.value(option) else { return nil }
            guard text.utf8.count == 10, let day = CalendarDay(text) else {
                throw invocation.usageError("\(option.name): '\(text)' is not a date (expected YYYY-MM-DD)")
            }
            return day
        }
        var sort: SearchRequest.Sort?
        if let text = invocation.value(.sort) {
            guard let parsed = SearchRequest.Sort(rawValue: text) else {
                throw invocation.usageError("\(SearchOption.sort.name) takes newest, oldest or relevance, not '\(text)'")
            }
            sort = parsed
        }
        let query = invocation.positionals.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        let request = SearchRequest(
            query: query.isEmpty ? nil : query, filterQuery: invocation.value(.fq),
            from: try day(.from), to: try day(.to), sort: sort)
        do {
            try request.validate()
        } catch {
            throw invocation.usageError(Shell.message(for: error))
        }
        return request
    }

    /// The name of `--save NAME`, nil without it.
    static func savedSearchName(_ invocation: Invocation<SearchOption>) throws -> String? {
        guard let name = invocation.value(.save) else { return nil }
        guard SavedSearch.isValidName(name) else {
            throw invocation.usageError(
                "\(SearchOption.save.name) takes a name of letters, digits, '.', '_' and '-' (at most 64), not '\(name)'")
        }
        return name
    }

    /// Saves the search under `name`, keeping where `refresh` starts when the request is the same.
    static func save(_ request: SearchRequest, as name: String, in saved: SavedSearches) throws {
        let previous = try? saved.search(named: name)
        var record = SavedSearch(name: name, request: request, savedAt: Date())
        if previous?.request == request { record.newestPublication = previous?.newestPublication }
        try saved.save(record)
    }

    /// `--pages N` or `--all`.
    static func pageLimit(_ invocation: Invocation<SearchOption>) throws -> PageLimit {
        let pages = invocation.value(.pages)
        if invocation.isSet(.all) {
            if pages != nil { throw invocation.usageError("give \(SearchOption.pages.name) or \(SearchOption.all.name), not both") }
            return .all
        }
        guard let pages else { return .pages(1) }
        guard let count = Int(pages), (1...SearchRequest.lastPage + 1).contains(count) else {
            throw invocation.usageError("\(SearchOption.pages.name) takes a number from 1 to \(SearchRequest.lastPage + 1), not '\(pages)'")
        }
        return .pages(count)
    }

    // MARK: Printing

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
            shell.errors.line(
                "warning: \(Plural.count(summary.unreachableHits, "hit")) could not be fetched: a single day had more than 1,000 (narrow the search with --fq)"
            )
        }
    }

    static func summaryLine(_ summary: HarvestSummary) -> String {
        "fetched \(Plural.count(summary.fetched, "article")) in \(Plural.count(summary.pages, "page")): "
            + "\(summary.added) added, \(summary.updated) updated, \(summary.unchanged) unchanged"
            + (summary.sequences.map { "; seq \($0.lowerBound)-\($0.upperBound)" } ?? "")
    }

    /// Prints the fetched articles from the store: newest or oldest first when so sorted, else
    /// in the order the API gave them.
    static func printFetched(
        _ ids: [String], sort: SearchRequest.Sort?, limit: Int?, fields: [String]?,
        store: DocumentStore, shell: Shell
    ) throws {
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
    static func printCachedAnswer(
        _ request: SearchRequest, limit: Int?, fields: [String]?,
        store: DocumentStore, shell: Shell
    ) throws {
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
