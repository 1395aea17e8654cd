import ArchivistClient
import ArchivistStore
import Foundation

extension Command {
    /// `refresh`'s options: those of the API.
    enum RefreshOption: APIOptions {
        case apiBase, pace

        var declaration: Option {
            switch self {
            case .apiBase: .apiBase
            case .pace: .pace
            }
        }
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
        options: RefreshOption.self, arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let configuration = try clientConfiguration(invocation, shell: shell)
        let store = try shell.store()
        let saved = SavedSearches(store: store)
        var records: [Record] = []
        var failure: ShellError?
        for search in try chosenSearches(invocation, saved: saved) {
            if Interruption.isRequested {
                failure = invocation.interrupted("interrupted before '\(search.name)'; what was fetched is stored")
                break
            }
            let (record, error) = try refresh(
                search, configuration: configuration, store: store, saved: saved,
                invocation: invocation, shell: shell)
            records.append(record)
            if let error {
                failure = error
                break
            }
        }
        shell.renderer.render(list: records, to: shell.output)
        if let failure { throw failure }
    }

    /// The saved searches `refresh` runs: those named, else all of them, by name.
    static func chosenSearches(_ invocation: Invocation<RefreshOption>, saved: SavedSearches) throws -> [SavedSearch] {
        let all = try saved.all()
        guard !invocation.positionals.isEmpty else {
            if all.isEmpty { throw invocation.failure("no saved searches ('archivist search QUERY --save NAME' saves one)") }
            return all.sorted { $0.name < $1.name }
        }
        return try invocation.positionals.map { name in
            guard let search = all.first(where: { $0.name == name }) else { throw ClientError.unknownSearch(name: name) }
            return search
        }
    }

    /// Fetches what is new for one saved search and records the run: its row, and the error that
    /// stops `refresh` (Ctrl-C, or a failure naming the search), if any.
    static func refresh(
        _ search: SavedSearch, configuration: NYTClient.Configuration, store: DocumentStore,
        saved: SavedSearches, invocation: Invocation<RefreshOption>, shell: Shell
    ) throws -> (Record, ShellError?) {
        let today = CalendarDay.today
        var request = search.request
        request.from = search.newestPublication.map { CalendarDay($0).adding(days: -1) } ?? search.request.from
        request.to = min(search.request.to ?? today, today)
        request.sort = .oldest
        func row(_ summary: HarvestSummary?, _ status: String) -> Record {
            Record(
                [
                    ("name", .string(search.name)),
                    ("from", request.from.map { .string($0.description) } ?? .null),
                    ("to", request.to.map { .string($0.description) } ?? .null),
                ]
                    + summaryFields(summary ?? HarvestSummary()) + [("status", .string(status))])
        }
        if let from = request.from, let to = request.to, to < from {
            return (row(nil, "up to date (its range ends \(to))"), nil)
        }
        let (summary, error) = harvest(request, limit: .all, configuration: configuration, store: store, shell: shell)
        try saved.recordRun(of: search.name, at: Date(), summary: summary, isComplete: error == nil)
        switch error {
        case nil:
            return (row(summary, "done"), nil)
        case .cancelled?:
            return (row(summary, "interrupted"), invocation.interrupted("interrupted during '\(search.name)'; what was fetched is stored"))
        case let error?:
            return (row(summary, "failed"), .failure("\(search.name): \(Shell.message(for: error))"))
        }
    }
}
