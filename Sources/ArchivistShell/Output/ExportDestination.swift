import ArchivistStore

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where `export` writes: standard output, or FILE by way of a temporary file beside it that is
/// synced and then renamed over FILE, so FILE is never half-written.
struct ExportDestination {
    /// What the documents are written to.
    let sink: TextSink
    /// FILE, nil for standard output.
    let path: String?
    private let temporary: String
    private let descriptor: Int32

    /// The shell's output, or a new temporary file for `path`.
    init(path: String?, shell: Shell, for invocation: Invocation<Command.ExportOption>) throws {
        self.path = path
        temporary = path.map { $0 + ".tmp-\(getpid())" } ?? ""
        guard path != nil else {
            descriptor = -1
            sink = shell.output
            return
        }
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw invocation.failure("\(temporary): cannot create: \(systemErrorMessage())")
        }
        sink = TextSink(descriptor: descriptor)
    }

    /// Puts FILE in place: syncs the temporary file and renames it to FILE (nothing to do for
    /// standard output). On failure the temporary file is removed and FILE left as it was.
    func commit(for invocation: Invocation<Command.ExportOption>) throws {
        guard let path else { return }
        sink.flush()
        let synced = fsync(descriptor) == 0 && !sink.hasFailed
        close(descriptor)
        let fileSystem = POSIXFileSystem()
        do {
            guard synced else { throw invocation.failure("\(path): cannot write: \(systemErrorMessage())") }
            try fileSystem.rename(temporary, to: path)
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error is ShellError ? error : invocation.failure(Shell.message(for: error))
        }
    }

    /// Drops the temporary file (Ctrl-C): FILE is left as it was.
    func abandon() {
        guard path != nil else { return }
        close(descriptor)
        _ = try? POSIXFileSystem().removeFile(temporary)
    }
}
