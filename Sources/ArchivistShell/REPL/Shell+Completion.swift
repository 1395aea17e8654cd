import ArchivistClient
import ArchivistStore

extension Shell {
    /// The words that may come next after `text`: command names (and the shell's own) first,
    /// then the command's options, document IDs after `get`, `remove` and `put`, saved search
    /// names after `refresh`, `searches --drop` and `search --save`, and field names.
    public func completions(for text: String) -> [String] {
        let words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard words.count > 1 else {
            return commands.names + DotCommand.completionNames
        }
        let current = words.last ?? ""
        // The shell's own: the words its argument takes (.mode's formats, .timer's on and off).
        if let dotCommand = DotCommand.named(words[0]) { return words.count == 2 ? dotCommand.arguments.completions : [] }
        guard let command = commands.command(named: words[0]) else { return [] }
        if current.hasPrefix("-") { return command.options.map(\.name) }
        if command.name == "help" { return commands.names }
        if command.name == "index" && words.count == 2 { return ["list", "add", "drop"] }
        if ["get", "remove", "put"].contains(command.name), words.count == 2 {
            // Those the typed start fits, at most 10,000 (capped after filtering, so any ID can be reached).
            return (try? store().ids(startingWith: current, limit: 10_000)) ?? []
        }
        let previous = words.count >= 3 ? words[words.count - 2] : ""
        if command.name == "refresh" || (command.name == "searches" && previous == Command.SearchesOption.drop.name)
            || (command.name == "search" && previous == Command.SearchOption.save.name)
        {
            return savedSearchNames()
        }
        if command.name == "search" && previous == Command.SearchOption.sort.name {
            return SearchRequest.Sort.allCases.map(\.rawValue)
        }
        if command.name == "search" { return [] }
        let fields = (try? store().projection.paths) ?? []
        return ["_id"] + fields
    }

    /// The names of the saved searches, for completion (none when the folder cannot be read).
    func savedSearchNames() -> [String] {
        guard let store = try? store(), let searches = try? SavedSearches(store: store).all() else { return [] }
        return searches.map(\.name)
    }
}
