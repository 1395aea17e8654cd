import ArchivistBase
import ArchivistStore

/// Stores the documents of one `import` in durable batches, reporting each document that cannot
/// be stored as it goes and counting what became of the others; Ctrl-C stops it between batches,
/// so every batch before is committed and none is half-written.
final class Importer {
    private let source: ImportSource
    private let invocation: Invocation<NoOptions>
    private let shell: Shell
    private var counts: [String: Int] = ["added": 0, "updated": 0, "unchanged": 0, "failed": 0]
    private var wasInterrupted = false

    /// An importer of `source` into the shell's store.
    init(source: ImportSource, invocation: Invocation<NoOptions>, shell: Shell) {
        self.source = source
        self.invocation = invocation
        self.shell = shell
    }

    /// Reads the source and stores its documents. JSON Lines are streamed a batch at a time;
    /// anything else (an array, a response, a pretty-printed document) is read whole.
    func storeDocuments() throws {
        let prefix = try source.read(upTo: 1 << 20, for: invocation)
        if ImportReader.isJSONLines(prefix) {
            return try storeLines(JSONLinesReader(descriptor: source.descriptor, prefix: prefix))
        }
        let bytes = prefix + (try source.read(upTo: Int.max, for: invocation))
        let reader: ImportReader
        do throws(ImportReader.ImportFailure) {
            reader = try ImportReader(bytes: bytes)
        } catch {
            throw invocation.failure("\(source.name): \(error.message); nothing was stored")
        }
        if reader.shape == .jsonLines { return try storeLines(JSONLinesReader(bytes: bytes)) }
        var start = 0
        try storeBatches {
            guard start < reader.count else { return nil }
            let end = min(start + Command.importBatchSize, reader.count)
            defer { start = end }
            return reader.items(start..<end)
        }
    }

    /// Prints the counts; throws when Ctrl-C stopped the import or a document failed.
    func report() throws {
        let record = Record(["added", "updated", "unchanged", "failed"].map { ($0, .int(counts[$0]!)) })
        shell.renderer.render(single: record, to: shell.output)
        if wasInterrupted {
            let stored = counts["added"]! + counts["updated"]! + counts["unchanged"]!
            throw invocation.interrupted(
                "\(source.name): interrupted; the \(Plural.count(stored, "document")) of the batches before "
                    + "\(Plural.word(for: stored, "is", "are")) stored")
        }
        if counts["failed"]! > 0 { throw ShellError.reported }
    }

    /// Stores JSON Lines a batch at a time.
    private func storeLines(_ reader: JSONLinesReader) throws {
        try storeBatches { reader.nextItems(maxCount: Command.importBatchSize) }
        if let error = reader.readError { throw invocation.failure("\(source.name): cannot read: \(error)") }
    }

    /// A batch read and encoded, ready to commit: the documents' encodings and where each came
    /// from, and the items that could not be parsed.
    private struct ReadBatch {
        var prepared: PreparedBatch
        var locations: [String]
        var failures: [(location: String, message: String)]
    }

    /// Stores batches until `nextItems` returns nil or Ctrl-C is pressed, each in one durable
    /// upsert. The next batch is read and encoded on another thread while one commits
    /// (`Prefetch`), so at most two batches are in memory, and only one job at a time calls
    /// `nextItems`.
    private func storeBatches(_ nextItems: @escaping () -> [ImportReader.Item]?) throws {
        let store = try shell.store()
        func readAhead() -> Prefetch<ReadBatch?> {
            Prefetch {
                guard let items = nextItems() else { return nil }
                var locations: [String] = []
                var failures: [(location: String, message: String)] = []
                var documents: [JSONValue] = []
                documents.reserveCapacity(items.count)
                for item in items {
                    switch item.document {
                    case .success(let document):
                        documents.append(document)
                        locations.append(item.location)
                    case .failure(let failure):
                        failures.append((item.location, failure.message))
                    }
                }
                return ReadBatch(prepared: store.prepareUpsert(documents), locations: locations, failures: failures)
            }
        }
        var next: Prefetch<ReadBatch?>? = Interruption.isRequested ? nil : readAhead()
        // However the loop ends, the job reading ahead finishes before the reader is left.
        defer { _ = next?.value() }
        while let ahead = next {
            next = nil
            guard let batch = ahead.value() else { break }
            if Interruption.isRequested {
                wasInterrupted = true
                break
            }
            next = readAhead()
            try commit(batch, to: store)
        }
    }

    /// Commits one batch and counts what became of each document, in the order they were read.
    private func commit(_ batch: ReadBatch, to store: DocumentStore) throws {
        for failure in batch.failures { fail(at: failure.location, failure.message) }
        let results = try store.upsert(batch.prepared)
        for (result, location) in zip(results, batch.locations) {
            switch result.outcome {
            case .success(let outcome): counts[outcome.rawValue, default: 0] += 1
            case .failure(let error): fail(at: location, error.errorDescription ?? "refused")
            }
        }
        // A long import starts a merger as soon as its flushes leave a merge due: the merges run
        // beside the batches that follow, not all after the last.
        shell.startMergesIfDue()
    }

    /// Counts a document that could not be stored and reports it: `import: FILE: line 3: ...`.
    private func fail(at location: String, _ message: String) {
        counts["failed", default: 0] += 1
        shell.reportError(invocation.labelled("\(source.name): \(location): \(message)"))
    }
}
