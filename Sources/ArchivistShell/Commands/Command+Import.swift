#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ArchivistStore
import Foundation

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

    /// `import`'s work; Ctrl-C stops it between batches (it is interruptible).
    static func runImport(_ invocation: Invocation<NoOptions>, shell: Shell) throws {
        let source = invocation.positionals[0]
        if source == "-" && shell.readsCommandsFromStandardInput {
            throw invocation.usageError("'-' cannot be read: standard input holds the commands; give a file")
        }
        let name = source == "-" ? "stdin" : source
        var descriptor: Int32 = STDIN_FILENO
        if source != "-" {
            descriptor = open(source, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw invocation.failure("\(source): cannot open: \(systemErrorMessage())")
            }
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var counts: [String: Int] = ["added": 0, "updated": 0, "unchanged": 0, "failed": 0]
        var wasInterrupted = false
        func store(_ items: [ImportReader.Item]) throws {
            // Ctrl-C stops between batches: every batch before is committed, none is half-written.
            if Interruption.isRequested {
                wasInterrupted = true
                return
            }
            var documents: [JSONValue] = []
            var locations: [String] = []
            for item in items {
                switch item.document {
                case .success(let document):
                    documents.append(document)
                    locations.append(item.location)
                case .failure(let failure):
                    counts["failed", default: 0] += 1
                    shell.reportError(invocation.labelled("\(name): \(item.location): \(failure.message)"))
                }
            }
            let results = try shell.store().upsert(documents)
            for (result, location) in zip(results, locations) {
                switch result.outcome {
                case .success(let outcome):
                    counts[outcome.rawValue, default: 0] += 1
                case .failure(let error):
                    counts["failed", default: 0] += 1
                    shell.reportError(invocation.labelled("\(name): \(location): \(error.errorDescription ?? "refused")"))
                }
            }
        }

        // JSON Lines are streamed a batch at a time; anything else (an array, a response, a
        // pretty-printed document) is read whole.
        func storeLines(_ reader: JSONLinesReader) throws {
            while !wasInterrupted, let items = reader.nextItems(maxCount: importBatchSize) {
                try store(items)
            }
            if let error = reader.readError { throw invocation.failure("\(name): cannot read: \(error)") }
        }
        let prefix = try readPrefix(of: descriptor, upTo: 1 << 20, name: name, invocation: invocation)
        if isJSONLines(prefix) {
            try storeLines(JSONLinesReader(descriptor: descriptor, prefix: prefix))
        } else {
            var bytes = prefix
            bytes.append(contentsOf: try readPrefix(of: descriptor, upTo: Int.max, name: name, invocation: invocation))
            let reader: ImportReader
            do throws(ImportReader.ImportFailure) {
                reader = try ImportReader(bytes: bytes)
            } catch {
                throw invocation.failure("\(name): \(error.message); nothing was stored")
            }
            if reader.shape == .jsonLines {
                try storeLines(JSONLinesReader(bytes: bytes))
            } else {
                var start = 0
                while start < reader.count && !wasInterrupted {
                    let end = min(start + importBatchSize, reader.count)
                    try store(reader.items(start..<end))
                    start = end
                }
            }
        }
        shell.renderer.render(single: Record(["added", "updated", "unchanged", "failed"].map { ($0, .int(counts[$0]!)) }), to: shell.output)
        if wasInterrupted {
            let stored = counts["added"]! + counts["updated"]! + counts["unchanged"]!
            throw invocation.interrupted("\(name): interrupted; the \(Plural.count(stored, "document")) of the batches before "
                                         + "\(Plural.word(for: stored, "is", "are")) stored")
        }
        if counts["failed"]! > 0 { throw ShellError.reported }
    }

    /// Reads up to `limit` bytes (fewer at the end of input).
    /// A read error (a folder given as FILE, an I/O error) is a one-line failure naming the input.
    static func readPrefix(of descriptor: Int32, upTo limit: Int, name: String, invocation: Invocation<NoOptions>) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let chunk = 1 << 20
        while bytes.count < limit {
            let count = JSONLinesReader.read(descriptor, upTo: min(chunk, limit - bytes.count), appendingTo: &bytes)
            if count < 0 {
                throw invocation.failure("\(name): cannot read: \(systemErrorMessage()); nothing was stored")
            }
            if count == 0 { break }
        }
        return bytes
    }

    /// Whether input starting with `prefix` is JSON Lines: its first line is a whole JSON value and
    /// more follows it. (A single line holding one document is read whole, as one document.)
    static func isJSONLines(_ prefix: [UInt8]) -> Bool {
        let start = ImportReader.valueStart(in: prefix)
        guard start < prefix.count else { return false }
        guard prefix[start] == UInt8(ascii: "{") || prefix[start] == UInt8(ascii: "[") else { return true }
        guard let newline = prefix[start...].firstIndex(of: 0x0A) else { return false }
        if (try? JSONParser.parse(Array(prefix[start..<newline]))) != nil {
            return prefix[(newline + 1)...].contains { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        }
        // A broken first line: still JSON Lines when one of the next lines is a whole object
        // (no line of a pretty-printed document or array is).
        let following = prefix[(newline + 1)...].split(separator: 0x0A, maxSplits: 3).prefix(2)
        return following.contains { line in
            if case .object? = try? JSONParser.parse(Array(line)) { return true }
            return false
        }
    }

}
