import ArchivistStore
import Foundation

extension Command {
    /// The columns `find` shows in table and csv formats without `--fields`.
    static let defaultColumns = ["_id", "pub_date", "section_name", "headline.main"]

    static let filterHelp = """
    FILTER is either a MongoDB filter document ('{"section_name": "Sports", "pub_date": {"$gte": "2015-07-01"}}')
    or the infix language: section_name = Sports and pub_date >= 2015-07-01 and not headline.main ~ preview.
    Operators: = != < <= > >= ~ (substring, any case and accents), in (a, b), not in (a, b), exists,
    missing; and, or, not, parentheses. A quoted phrase alone is a full-text search over headline,
    abstract, snippet, lead paragraph and keywords ('"climate change"'). Dates compare as instants in
    any ISO-8601 spelling, and a date alone means its whole UTC day. The words of FILTER may be given
    as separate arguments.
    """

    /// `find [FILTER] [--sort FIELD[:desc]]... [--skip N] [--limit N] [--fields a,b.c]`.
    public static let find = Command(
        name: "find", synopsis: "[FILTER]", summary: "List the documents matching a filter",
        discussion: filterHelp + """


        Sorted by --sort keys (several allowed, ties by ID), else by relevance for a text search, else
        by ID. Table format shows ID, date, section and headline (or --fields); jsonl prints each
        whole document (or the --fields) on a line; json an array; csv a header and a row per document.
        Answered from the in-memory index; a filter on a field outside it reads the documents and says
        so on stderr ('archivist index add FIELD' adds it).
        """,
        examples: ["find section_name = Sports and pub_date >= 2015-07-01 --sort pub_date:desc --limit 10",
                   #"find '"climate change"' --fields _id,headline.main"#,
                   #"find '{"news_desk": {"$in": ["Sports", "Foreign"]}}' --format csv"#],
        options: [Option("--sort", value: "FIELD[:desc]", help: "order by FIELD (repeatable; :desc for largest first)"),
                  Option("--skip", value: "N", help: "pass over the first N matches"),
                  Option("--limit", value: "N", help: "return at most N documents"),
                  Option("--fields", value: "a,b.c", help: "the fields to show (dotted paths, comma-separated)")],
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let filter = try parseFilter(invocation.positionals)
        var sort: [SortKey] = []
        for text in invocation.options["--sort"] ?? [] {
            guard let key = SortKey(parsing: text) else {
                throw ShellError.usage("find: --sort takes FIELD or FIELD:desc, not '\(text)'", command: "find")
            }
            sort.append(key)
        }
        let skip = try count(invocation.value("--skip"), option: "--skip", command: "find") ?? 0
        let limit = try count(invocation.value("--limit"), option: "--limit", command: "find")
        let fields = fieldList(invocation.value("--fields"))
        let store = try shell.store()
        let result = try store.find(Query(filter: filter, sort: sort, skip: skip, limit: limit))
        noteScan(result.scannedPaths, shell: shell)
        try printDocuments(result.ids, fields: fields, store: store, shell: shell)
    }

    /// `count [FILTER]`: a bare integer.
    public static let count = Command(
        name: "count", synopsis: "[FILTER]", summary: "Count the documents matching a filter (a bare integer)",
        discussion: filterHelp, examples: ["count", "count section_name = Sports", #"count '"jury"'"#],
        arity: 0...Int.max
    ) { invocation, shell in
        let filter = try parseFilter(invocation.positionals)
        let (count, scanned) = try shell.store().count(matching: filter)
        noteScan(scanned, shell: shell)
        shell.output.line(String(count))
    }

    /// `facet FIELD [FILTER] [--limit N]`: documents per value.
    public static let facet = Command(
        name: "facet", synopsis: "FIELD [FILTER]", summary: "Count documents per value of a field, most frequent first",
        discussion: "An array field counts each distinct element once per document. In table format each value gets a bar.\n\n" + filterHelp,
        examples: ["facet section_name", "facet keywords.value pub_date >= 2019-01-01 --limit 20"],
        options: [Option("--limit", value: "N", help: "show at most N values")],
        arity: 1...Int.max
    ) { invocation, shell in
        let path = invocation.positionals[0]
        let filter = try parseFilter(Array(invocation.positionals.dropFirst()))
        let limit = try count(invocation.value("--limit"), option: "--limit", command: "facet")
        let (values, scanned) = try shell.store().facet(path, matching: filter, limit: limit)
        noteScan(scanned, shell: shell)
        if shell.effectiveFormat == .table {
            let labels = values.map { Renderer.plainText($0.value) }
            let labelWidth = min(40, labels.map(DisplayWidth.of).max() ?? 0)
            let countWidth = values.map { String($0.count).count }.max() ?? 1
            let most = values.first?.count ?? 1
            let barWidth = max(10, Renderer.terminalWidth() - labelWidth - countWidth - 4)
            for (label, item) in zip(labels, values) {
                let clipped = DisplayWidth.clipped(label, to: labelWidth)
                let bar = String(repeating: "█", count: max(1, item.count * barWidth / max(most, 1)))
                shell.output.line(DisplayWidth.padded(clipped, to: labelWidth) + "  "
                                  + String(repeating: " ", count: countWidth - String(item.count).count) + String(item.count) + "  " + bar)
            }
            return
        }
        shell.renderer.render(list: values.map { Record([("value", $0.value), ("count", .int($0.count))]) }, to: shell.output)
    }

    /// `index list|add FIELD...|drop FIELD...`: the projected fields.
    public static let index = Command(
        name: "index", synopsis: "list | add FIELD... | drop FIELD...", summary: "List, add or drop the fields projected into the index",
        discussion: """
        Queries are answered from the projected fields held in the index. Adding or dropping a field
        rewrites the index from the documents (reading each one); a query on a field outside the
        projection still works by reading the documents, and says so.
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
            guard fields.isEmpty else { throw ShellError.usage("index: list takes no fields", command: "index") }
        case "add", "drop":
            guard !fields.isEmpty else { throw ShellError.usage("index: \(action) needs at least one FIELD", command: "index") }
            for field in fields where field.isEmpty || field.hasPrefix(".") || field.hasSuffix(".") || field.contains("..") {
                throw ShellError.usage("index: '\(field)' is not a dotted field path", command: "index")
            }
            if action == "add" {
                paths.append(contentsOf: fields)
            } else {
                for field in fields where !paths.contains(field) {
                    throw ShellError.failure("index: '\(field)' is not in the projection (see 'archivist index list')")
                }
                paths.removeAll { fields.contains($0) }
            }
            try store.changeProjection(to: Projection(paths: paths))
        default:
            throw ShellError.usage("index: expected list, add or drop, not '\(action)'", command: "index")
        }
        shell.renderer.render(list: store.projection.paths.map { Record([("field", .string($0))]) }, to: shell.output)
    }

    /// Reads the filter words of a command line (joined with spaces) in either syntax.
    static func parseFilter(_ words: [String]) throws -> Filter {
        try FilterParser.parseAny(words.joined(separator: " "))
    }

    /// Reads a non-negative count option.
    static func count(_ text: String?, option: String, command: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw ShellError.usage("\(command): \(option) takes a whole number, not '\(text)'", command: command)
        }
        return value
    }

    /// The paths of a `--fields a,b.c` option (blanks around a comma ignored), nil without it.
    static func fieldList(_ text: String?) -> [String]? {
        text.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }

    /// Says on stderr that a query read documents from disk.
    static func noteScan(_ paths: [String], shell: Shell) {
        guard !paths.isEmpty else { return }
        shell.errors.line("note: \(paths.joined(separator: ", ")) \(paths.count == 1 ? "is" : "are") not in the index projection, so the documents were read from disk ('archivist index add FIELD' adds a field)")
    }

    /// Throws `.interrupted` when Ctrl-C was pressed during a long listing.
    static func stopIfInterrupted(printed: Int, of total: Int) throws {
        guard Interruption.isRequested else { return }
        throw ShellError.interrupted("interrupted after \(printed) of \(total) documents")
    }

    /// Prints documents: whole ones in jsonl and json without `--fields`, else the fields asked
    /// (or the default columns) as records.
    static func printDocuments(_ ids: [String], fields: [String]?, store: DocumentStore, shell: Shell) throws {
        let format = shell.effectiveFormat
        if fields == nil && (format == .jsonl || format == .json) {
            var documents: [JSONValue] = []
            for (printed, id) in ids.enumerated() {
                try stopIfInterrupted(printed: printed, of: ids.count)
                guard let document = try store.document(withID: id) else { continue }
                if format == .jsonl {
                    shell.output.write(bytes: JSONWriter.compactBytes(document) + [0x0A])
                } else {
                    documents.append(document)
                }
            }
            if format == .json { shell.output.write(bytes: JSONWriter.prettyBytes(.array(documents))) }
            return
        }
        let columns = fields ?? defaultColumns
        let index = try store.queryIndex(loading: Set(columns))
        var records: [Record] = []
        for (read, id) in ids.enumerated() {
            try stopIfInterrupted(printed: read, of: ids.count)
            var document: JSONValue?
            var values: [(String, JSONValue)] = []
            for column in columns {
                if let ordinal = index.ordinal(of: id), index.isProjected(column) {
                    values.append((column, index.value(column, at: ordinal) ?? .null))
                    continue
                }
                if document == nil { document = try store.document(withID: id) }
                let found = document?.values(atPath: column) ?? []
                values.append((column, found.count == 1 ? found[0] : (found.isEmpty ? .null : .array(found))))
            }
            records.append(Record(values))
        }
        shell.renderer.render(list: records, to: shell.output, clippingTo: shell.output.isTerminal ? Renderer.terminalWidth() : nil)
    }
}
