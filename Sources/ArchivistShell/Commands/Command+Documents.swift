import ArchivistBase
import ArchivistStore

extension Command {
    /// `put ID JSON`: store a document under an ID.
    public static let put = Command(
        name: "put", synopsis: "ID JSON", summary: "Add or replace the document with this ID",
        discussion: """
            The JSON must be an object. Its _id, when present, must equal ID; when absent it is set to ID.
            Prints added, updated or unchanged (unchanged writes nothing).
            """,
        examples: [#"put nyt://article/0b1c0a4e-2b43-5d0e-9f47-2a8b7b31f7c9 '{"headline":{"main":"Hello"}}'"#],
        arity: 2...2
    ) { invocation, shell in
        let id = invocation.positionals[0]
        let document = try parseArgument(invocation.positionals[1], of: invocation)
        let outcome = try shell.store().put(document, id: id)
        shell.renderer.render(single: Record([("id", .string(id)), ("outcome", .string(outcome.rawValue))]), to: shell.output)
    }

    /// `add JSON`: store a document under its `_id` or a new UUID.
    public static let add = Command(
        name: "add", synopsis: "JSON", summary: "Add a document under its _id, or under a new UUID when it has none",
        discussion: "Prints the document's ID and added, updated or unchanged.",
        examples: [#"add '{"_id":"4fd2a0b78eb7c8105d88fd8e","headline":{"main":"Hello"}}'"#, #"add '{"note":"gets a UUID"}'"#],
        arity: 1...1
    ) { invocation, shell in
        let document = try parseArgument(invocation.positionals[0], of: invocation)
        let (id, outcome) = try shell.store().add(document)
        shell.renderer.render(single: Record([("id", .string(id)), ("outcome", .string(outcome.rawValue))]), to: shell.output)
    }

    /// `get ID`: print a stored document.
    public static let get = Command(
        name: "get", synopsis: "ID", summary: "Print the document with this ID",
        discussion: """
            Prints the document as stored (pretty JSON) in table and json formats, on one line in jsonl,
            and its top-level fields as columns in csv. On a terminal, in table format, keys and values
            have colours, as jq shows them; NO_COLOR (set to anything) or --format json turns them off,
            and a pipe gets plain JSON.
            """,
        examples: ["get 4fd2a0b78eb7c8105d88fd8e", "--format jsonl get nyt://article/0b1c0a4e-2b43-5d0e-9f47-2a8b7b31f7c9"],
        arity: 1...1
    ) { invocation, shell in
        let id = invocation.positionals[0]
        if let copy = try shell.copy() {
            guard let document = try copy.document(withID: id) else { throw StoreError.notFound(id: id) }
            try printDocument(document, shell: shell)
            return
        }
        let store = try shell.store()
        guard let bytes = try store.documentBytes(withID: id) else { throw StoreError.notFound(id: id) }
        switch shell.effectiveFormat {
        case .table where shell.output.isTerminal && shell.environment["NO_COLOR"].map(\.isEmpty) ?? true:
            shell.output.write(bytes: JSONColors.colored(bytes))
        case .table, .json:
            shell.output.write(bytes: bytes)
        case .jsonl:
            shell.output.write(bytes: try store.compactDocument(bytes, id: id) + [0x0A])
        case .csv:
            if case .object(let members) = try store.parsedDocument(bytes, id: id) {
                shell.renderer.render(list: [Record(members.map { ($0.key, $0.value) })], to: shell.output)
            }
        }
    }

    /// Prints a document read from a copy as `get` prints a folder's (pretty JSON in table and
    /// json, a line in jsonl, its top-level fields in csv).
    static func printDocument(_ document: JSONValue, shell: Shell) throws {
        switch shell.effectiveFormat {
        case .table where shell.output.isTerminal && shell.environment["NO_COLOR"].map(\.isEmpty) ?? true:
            shell.output.write(bytes: JSONColors.colored(JSONWriter.prettyBytes(document)))
        case .table, .json:
            shell.output.write(bytes: JSONWriter.prettyBytes(document))
        case .jsonl:
            shell.output.write(bytes: JSONWriter.compactBytes(document) + [0x0A])
        case .csv:
            if case .object(let members) = document {
                shell.renderer.render(list: [Record(members.map { ($0.key, $0.value) })], to: shell.output)
            }
        }
    }

    /// `remove`'s options.
    enum RemoveOption: CommandOptions {
        case `where`

        var declaration: Option {
            Option("--where", value: "FILTER", help: "remove every document matching FILTER")
        }
    }

    /// `remove ID...`: remove documents.
    public static let remove = Command(
        name: "remove", synopsis: "ID... | --where FILTER", summary: "Remove the documents with these IDs, or those matching a filter",
        discussion: """
            All the documents are removed in one durable batch. An ID with no document is an error; the
            others are still removed. With --where, FILTER is as for find (its words may follow as
            separate arguments), and no match is not an error.
            """,
        examples: ["remove 4fd2a0b78eb7c8105d88fd8e", "remove id-1 id-2 id-3", "remove --where 'pub_date < 2001-01-01'"],
        options: RemoveOption.self,
        arity: 0...Int.max
    ) { invocation, shell in
        var ids = invocation.positionals
        if let filterWord = invocation.valueWord(.where) {
            let store = try shell.store()
            let result = try store.find(Query(filter: try parseFilter([filterWord] + invocation.positionalWords)))
            noteScan(result.scannedPaths, shell: shell)
            ids = result.ids
            let removed = try store.remove(ids)
            shell.renderer.render(single: Record([("removed", .int(removed.filter { $0 }.count)), ("missing", .int(0))]), to: shell.output)
            return
        }
        let filterOption = RemoveOption.where.declaration.label
        guard !ids.isEmpty else {
            throw invocation.usageError("give IDs or \(filterOption); usage: archivist \(invocation.command) ID... | \(filterOption)")
        }
        let removed = try shell.store().remove(ids)
        for (id, wasRemoved) in zip(ids, removed) where !wasRemoved {
            shell.reportError(StoreError.notFound(id: id).errorDescription ?? id)
        }
        let count = removed.filter { $0 }.count
        shell.renderer.render(single: Record([("removed", .int(count)), ("missing", .int(ids.count - count))]), to: shell.output)
        if count < ids.count { throw ShellError.reported }
    }

    /// Parses a JSON command-line argument, naming the command in the error.
    static func parseArgument<Options>(_ text: String, of invocation: Invocation<Options>) throws -> JSONValue {
        do throws(JSONSyntaxError) {
            return try JSONParser.parse(text)
        } catch {
            throw invocation.failure("JSON argument: \(error.description)")
        }
    }
}
