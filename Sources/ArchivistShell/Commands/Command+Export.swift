#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ArchivistStore
import Foundation

extension Command {
    /// `export`'s options.
    enum ExportOption: CommandOptions {
        case to

        var declaration: Option {
            switch self {
            case .to: Option("--to", value: "FILE", help: "write to FILE instead of standard output")
            }
        }
    }

    /// `export [--to FILE]`: write every document as JSON Lines.
    public static let export = Command(
        name: "export", synopsis: "[FILTER]", summary: "Write every document (or those matching FILTER) as JSON Lines, sorted by ID",
        discussion: """
        One document per line, compact, keys sorted, in ID order, on standard output or, with --to,
        into FILE (written to a temporary file, synced, then renamed, so FILE is never half-written).
        FILTER is as for find.
        """,
        examples: ["export > backup.jsonl", "export --to backup.jsonl", "export section_name = Sports --to sports.jsonl"],
        options: ExportOption.self,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let store = try shell.store()
        var ids: [String]
        if invocation.positionals.isEmpty {
            ids = try store.entries().map(\.id)
        } else {
            let result = try store.find(Query(filter: try parseFilter(invocation.positionals)))
            noteScan(result.scannedPaths, shell: shell)
            ids = result.ids
        }
        let destination = invocation.value(.to)
        let temporary = destination.map { $0 + ".tmp-\(getpid())" }
        var sink = shell.output
        var descriptor: Int32 = -1
        if let temporary {
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw invocation.failure("\(temporary): cannot create: \(systemErrorMessage())")
            }
            sink = TextSink(descriptor: descriptor)
        }
        var failures = 0
        var written = 0
        for id in ids {
            if Interruption.isRequested { break }
            do {
                // A document removed since the query is skipped, and not counted as written.
                guard let document = try store.document(withID: id) else { continue }
                var line = JSONWriter.compactBytes(document)
                line.append(0x0A)
                sink.write(bytes: line)
                written += 1
            } catch {
                failures += 1
                shell.reportError(invocation.labelled(Shell.message(for: error)))
            }
        }
        if Interruption.isRequested {
            sink.flush()
            if let destination, let temporary {
                close(descriptor)
                _ = try? POSIXFileSystem().removeFile(temporary)
                throw invocation.interrupted("interrupted; '\(destination)' was not written")
            }
            throw invocation.interrupted("interrupted after \(written) of \(Plural.count(ids.count, "document"))")
        }
        if let destination, let temporary {
            sink.flush()
            let synced = fsync(descriptor) == 0 && !sink.hasFailed
            close(descriptor)
            let fileSystem = POSIXFileSystem()
            do {
                guard synced else { throw invocation.failure("\(destination): cannot write: \(systemErrorMessage())") }
                try fileSystem.rename(temporary, to: destination)
            } catch {
                _ = try? fileSystem.removeFile(temporary)
                throw error is ShellError ? error : invocation.failure(Shell.message(for: error))
            }
        }
        if failures > 0 { throw ShellError.reported }
    }
}
