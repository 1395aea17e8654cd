import ArchivistBase

/// A filter applied to changes: it reads the projected fields an index line holds (the document
/// after the change, or before a removal), so a removal matches when the document it removed did.
/// Only projected paths, `_id` and full-text search (whose fields are projected) can be used.
struct ChangeFilter {
    let filter: Filter
    let textSearch: TextSearch

    /// A filter for changes; fails naming the paths the projection lacks.
    init(_ filter: Filter, projection: Projection, textSearch: TextSearch) throws(StoreError) {
        var needed = Set(filter.paths.filter { $0 != "_id" })
        if filter.hasTextSearch { needed.formUnion(textSearch.paths) }
        let missing = needed.filter { projection.position(of: $0) == nil }.sorted()
        if !missing.isEmpty {
            throw .invalidFilter(
                "changes are matched on the projected fields, and \(missing.map { "'\($0)'" }.joined(separator: ", ")) \(missing.count == 1 ? "is" : "are") not projected (index add \(missing.joined(separator: " ")))"
            )
        }
        self.filter = filter
        self.textSearch = textSearch
    }

    /// Whether a change matches.
    func matches(_ change: Change) -> Bool {
        if case .all = filter { return true }
        let fields = change.fields
        return filter.matches(
            resolve: { path in
                path == "_id" ? [.string(change.id)] : Projection.resolvedValues(fields[path])
            },
            textMatches: { terms in
                var words = Set<String>()
                for field in textSearch.fields {
                    for value in Projection.resolvedValues(fields[field.path]) {
                        for text in TextSearch.strings(in: value) { words.formUnion(TextFolding.tokens(text)) }
                    }
                }
                return terms.allSatisfy { words.contains($0) }
            })
    }
}
