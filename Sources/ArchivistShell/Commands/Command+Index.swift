import ArchivistBase
import ArchivistStore

extension Command {
    /// `index list|add FIELD...|drop FIELD...`: the projected fields.
    public static let index = Command(
        name: "index", synopsis: "list | add FIELD... | drop FIELD...", summary: "List, add or drop the fields projected into the index",
        discussion: """
            Queries are answered from the projected fields held in the index. Adding or dropping a field
            rewrites the index from the documents (reading each one), each document keeping its sequence
            number in the changes feed; a query on a field outside the projection still works by reading
            the documents, and says so.
            """,
        examples: ["index list", "index add subsection_name", "index drop web_url"],
        arity: 1...Int.max
    ) { invocation, shell in
        let store = try shell.store()
        let action = invocation.positionals[0]
        let fields = Array(invocation.positionals.dropFirst())
        var paths = store.projection.paths
        switch action {
        case "list":
            guard fields.isEmpty else { throw invocation.usageError("list takes no fields") }
        case "add", "drop":
            guard !fields.isEmpty else { throw invocation.usageError("\(action) needs at least one FIELD") }
            for field in fields where FieldPath.components(field).contains(where: \.isEmpty) {
                throw invocation.usageError("'\(field)' is not a dotted field path")
            }
            if action == "add" {
                paths.append(contentsOf: fields)
            } else {
                for field in fields where !paths.contains(field) {
                    throw invocation.failure("'\(field)' is not in the projection (see 'archivist index list')")
                }
                paths.removeAll { fields.contains($0) }
            }
            try store.changeProjection(to: Projection(paths: paths))
        default:
            throw invocation.usageError("expected list, add or drop, not '\(action)'")
        }
        shell.renderer.render(list: store.projection.paths.map { Record([("field", .string($0))]) }, to: shell.output)
    }
}
