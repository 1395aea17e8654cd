import ArchivistBase
import ArchivistClient
import ArchivistStore
import Foundation

extension Command {
    /// `searches`' options.
    enum SearchesOption: CommandOptions {
        case drop

        var declaration: Option {
            Option("--drop", value: "NAME", help: "forget the saved search NAME")
        }
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
        options: SearchesOption.self,
        arity: 0...0
    ) { invocation, shell in
        let store = try shell.store()
        let saved = SavedSearches(store: store)
        if let name = invocation.value(.drop) {
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
}
