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

    /// How many documents `export` reads ahead at once.
    static let exportWindow = 2048

    /// Writes the documents as JSON Lines until Ctrl-C, reporting those that cannot be read; a
    /// document removed since the query is skipped, and not counted as written. The documents
    /// are read a window at a time, several files at once, and written in order.
    static func write(
        _ ids: [String], to sink: TextSink, store: DocumentStore, invocation: Invocation<ExportOption>,
        shell: Shell
    ) -> (written: Int, failures: Int) {
        var failures = 0
        var written = 0
        var start = 0
        while start < ids.count, !Interruption.isRequested {
            let window = Array(ids[start..<min(start + exportWindow, ids.count)])
            start += window.count
            let lines: [Result<[UInt8]?, StoreError>]
            do {
                lines = try store.compactDocuments(withIDs: window)
            } catch {
                failures += window.count
                shell.reportError(invocation.labelled(Shell.message(for: error)))
                continue
            }
            for line in lines {
                if Interruption.isRequested { break }
                switch line {
                case .success(nil): continue
                case .success(var bytes?):
                    bytes.append(0x0A)
                    sink.write(bytes: bytes)
                    written += 1
                case .failure(let error):
                    failures += 1
                    shell.reportError(invocation.labelled(Shell.message(for: error)))
                }
            }
        }
        return (written, failures)
    }
}
