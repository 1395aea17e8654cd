import ArchivistBase
import ArchivistPostgres
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
        if let copy = try shell.copy() {
            try exportCopy(copy, invocation: invocation, shell: shell)
            return
        }
        let store = try shell.store()
        // FILE first: a folder or a missing folder fails before any work, and a FIFO's reader is
        // waited for before the documents are read.
        let destination = try ExportDestination(path: invocation.value(.to), shell: shell, for: invocation)
        let source: ExportedIDs
        do {
            source = try ExportedIDs(invocation, store: store, shell: shell)
        } catch {
            destination.abandon()
            throw error
        }
        let (written, failures) = write(source, to: destination.sink, store: store, invocation: invocation, shell: shell)
        if Interruption.isRequested {
            if let path = destination.path, !destination.isInPlace {
                destination.abandon()
                throw invocation.interrupted("interrupted; '\(path)' was not written")
            }
            destination.abandon()
            throw invocation.interrupted("interrupted after \(written) of \(Plural.count(source.total, "document"))")
        }
        try destination.commit(for: invocation)
        if failures > 0 { throw ShellError.reported }
    }

    /// The IDs `export` writes, in ID order, a page at a time: every document's (read from the
    /// store a page at a time, so a whole store is never listed in memory), or those FILTER matches.
    final class ExportedIDs {
        /// How many documents there are to write (as of the start).
        let total: Int
        private let store: DocumentStore
        private let matches: [String]?
        private var start = 0
        private var last: String?
        private var done = false

        init(_ invocation: Invocation<ExportOption>, store: DocumentStore, shell: Shell) throws {
            self.store = store
            if invocation.positionals.isEmpty {
                matches = nil
                total = try store.count
            } else {
                let result = try store.find(Query(filter: try parseFilter(invocation.positionalWords)))
                noteScan(result.scannedPaths, shell: shell)
                matches = result.ids
                total = result.ids.count
            }
        }

        /// The next page of IDs (empty at the end).
        func next(_ size: Int) throws -> [String] {
            if let matches {
                let page = Array(matches[min(start, matches.count)..<min(start + size, matches.count)])
                start += page.count
                return page
            }
            guard !done else { return [] }
            let page = try store.entries(after: last, limit: size).map(\.id)
            last = page.last ?? last
            done = page.count < size
            return page
        }
    }

    /// `export` of a PostgreSQL copy: the documents (all, or those FILTER matches) as JSON Lines
    /// in ID order, read a window at a time.
    static func exportCopy(_ copy: PostgresCopy, invocation: Invocation<ExportOption>, shell: Shell) throws {
        let destination = try ExportDestination(path: invocation.value(.to), shell: shell, for: invocation)
        var written = 0
        do {
            let matches =
                invocation.positionals.isEmpty ? nil : try copy.find(Query(filter: try parseFilter(invocation.positionalWords))).ids
            var last: String?
            var start = 0
            while !Interruption.isRequested {
                let window: [String]
                if let matches {
                    window = Array(matches[min(start, matches.count)..<min(start + exportWindow, matches.count)])
                    start += window.count
                } else {
                    window = try copy.ids(after: last, limit: exportWindow)
                    last = window.last ?? last
                }
                if window.isEmpty { break }
                let documents = try copy.documents(withIDs: window)
                for id in window {
                    guard let document = documents[id] else { continue }
                    destination.sink.write(bytes: JSONWriter.compactBytes(document) + [0x0A])
                    written += 1
                }
                if matches == nil && window.count < exportWindow { break }
            }
        } catch {
            destination.abandon()
            throw error
        }
        if Interruption.isRequested {
            destination.abandon()
            throw invocation.interrupted("interrupted after \(Plural.count(written, "document"))")
        }
        try destination.commit(for: invocation)
    }

    /// How many documents `export` reads ahead at once.
    static let exportWindow = 2048

    /// Writes the documents as JSON Lines until Ctrl-C, reporting those that cannot be read; a
    /// document removed since the query is skipped, and not counted as written. The documents
    /// are read a window at a time, several files at once, and written in order.
    static func write(
        _ source: ExportedIDs, to sink: TextSink, store: DocumentStore, invocation: Invocation<ExportOption>,
        shell: Shell
    ) -> (written: Int, failures: Int) {
        var failures = 0
        var written = 0
        while !Interruption.isRequested {
            let window: [String]
            let lines: [Result<[UInt8]?, StoreError>]
            do {
                window = try source.next(exportWindow)
                if window.isEmpty { break }
                lines = try store.compactDocuments(withIDs: window)
            } catch {
                failures += 1
                shell.reportError(invocation.labelled(Shell.message(for: error)))
                break
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
