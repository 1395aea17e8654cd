import ArchivistStore
import Foundation

extension Command {
    /// `export`'s options.
    enum ExportOption: CommandOptions {
        case to

        var declaration: Option {
            Option("--to", value: "FILE", help: "write to FILE instead of standard output")
        }
    }

    /// `export [--to FILE]`: write every document as JSON Lines.
    public static let export = Command(
        name: "export", synopsis: "[FILTER]", summary: "Write every document (or those matching FILTER) as JSON Lines, sorted by ID",
        discussion: """
            One document per line, compact, keys sorted, in ID order, on standard output or, with --to,
            into FILE: a regular file is written to a temporary file beside it, synced, then renamed
            over it (keeping its mode), so it is never half-written; a device, FIFO or socket
            (/dev/null, /dev/stdout) is written in place, never replaced, and a FIFO waits for its
            reader; a symbolic link is followed, and stays a link. FILTER is as for find.
            """,
        examples: ["export > backup.jsonl", "export --to backup.jsonl", "export section_name = Sports --to sports.jsonl"],
        options: ExportOption.self,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let store = try shell.store()
        // FILE first: a folder or a missing folder fails before any work, and a FIFO's reader is
        // waited for before the documents are read.
        let destination = try ExportDestination(path: invocation.value(.to), shell: shell, for: invocation)
        let ids: [String]
        do {
            ids = try exportedIDs(invocation, store: store, shell: shell)
        } catch {
            destination.abandon()
            throw error
        }
        let (written, failures) = write(ids, to: destination.sink, store: store, invocation: invocation, shell: shell)
        if Interruption.isRequested {
            if let path = destination.path, !destination.isInPlace {
                destination.abandon()
                throw invocation.interrupted("interrupted; '\(path)' was not written")
            }
            destination.abandon()
            throw invocation.interrupted("interrupted after \(written) of \(Plural.count(ids.count, "document"))")
        }
        try destination.commit(for: invocation)
        if failures > 0 { throw ShellError.reported }
    }

    /// The IDs `export` writes, in ID order: every document's, or those FILTER matches.
    static func exportedIDs(_ invocation: Invocation<ExportOption>, store: DocumentStore, shell: Shell) throws -> [String] {
        if invocation.positionals.isEmpty { return try store.entries().map(\.id) }
        let result = try store.find(Query(filter: try parseFilter(invocation.positionalWords)))
        noteScan(result.scannedPaths, shell: shell)
        return result.ids
    }

    /// Writes the documents as JSON Lines until Ctrl-C, reporting those that cannot be read; a
    /// document removed since the query is skipped, and not counted as written.
    static func write(
        _ ids: [String], to sink: TextSink, store: DocumentStore, invocation: Invocation<ExportOption>,
        shell: Shell
    ) -> (written: Int, failures: Int) {
        var failures = 0
        var written = 0
        for id in ids {
            if Interruption.isRequested { break }
            do {
                guard var line = try store.compactDocument(withID: id) else { continue }
                line.append(0x0A)
                sink.write(bytes: line)
                written += 1
            } catch {
                failures += 1
                shell.reportError(invocation.labelled(Shell.message(for: error)))
            }
        }
        return (written, failures)
    }
}
