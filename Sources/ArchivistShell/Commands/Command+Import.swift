extension Command {
    /// How many documents `import` stores per durable batch.
    static let importBatchSize = 2000

    /// `import FILE|-`: upsert documents from a file or standard input.
    public static let `import` = Command(
        name: "import", synopsis: "FILE|-", summary: "Add or update documents from JSON Lines, a JSON array or a saved NYT API response",
        discussion: """
            Reads FILE (or standard input for -): JSON Lines (one document per line), a JSON array of
            documents, one document, or a saved NYT Article Search response (documents at response.docs).
            Documents are upserted by _id in durable batches; one without _id gets a new UUID, except in
            an API response, where it is refused. A bad line is reported with its line number and skipped;
            the good ones are stored. Prints {"added":N,"updated":N,"unchanged":N,"failed":N}; exits 1 if
            any document failed.
            """,
        examples: ["import articles.jsonl", "import saved-response.json", "export | archivist --data copy import -"],
        arity: 1...1, isInterruptible: true
    ) { invocation, shell in
        try runImport(invocation, shell: shell)
    }

    /// `import`'s work, in its three phases: open the source, store its documents batch by batch,
    /// report the counts. Ctrl-C stops it between batches (it is interruptible).
    static func runImport(_ invocation: Invocation<NoOptions>, shell: Shell) throws {
        let source = try ImportSource(opening: invocation.positionals[0], for: invocation, shell: shell)
        defer { source.close() }
        let importer = Importer(source: source, invocation: invocation, shell: shell)
        // One snapshot at the end rather than one every few batches: a bulk load merges once.
        let store = try shell.store()
        store.defersMerges = true
        defer {
            // However the import ends, a flush built beside its batches is installed (or dropped).
            store.defersMerges = false
            try? store.finishBackgroundFlush()
        }
        try importer.storeDocuments()
        store.defersMerges = false
        // The snapshot is derived data: when it cannot be written, the import still stands.
        try? store.merge(ifDue: true)
        try importer.report()
    }
}
