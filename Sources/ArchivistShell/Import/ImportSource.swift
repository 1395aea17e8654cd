#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where `import` reads: the file it was given, opened for reading, or standard input for `-`.
struct ImportSource {
    /// The source as messages name it: the file's path, or `stdin`.
    let name: String
    /// The descriptor read from.
    let descriptor: Int32

    /// Opens `path`, or takes standard input for `-` (a usage error when standard input holds the
    /// commands themselves).
    init(opening path: String, for invocation: Invocation<NoOptions>, shell: Shell) throws {
        if path == "-" {
            if shell.readsCommandsFromStandardInput {
                throw invocation.usageError("'-' cannot be read: standard input holds the commands; give a file")
            }
            name = "stdin"
            descriptor = STDIN_FILENO
            return
        }
        name = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw invocation.failure("\(path): cannot open: \(systemErrorMessage())")
        }
    }

    /// Closes the file (standard input stays open).
    func close() {
        if descriptor != STDIN_FILENO { _ = Glibc.close(descriptor) }
    }

    /// Reads up to `limit` bytes (fewer at the end of input). A read error (a folder given as
    /// FILE, an I/O error) is a one-line failure naming the source.
    func read(upTo limit: Int, for invocation: Invocation<NoOptions>) throws -> [UInt8] {
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
}
