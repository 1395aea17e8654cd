import ArchivistStore

/// Where `export` (and `trend --plot`) writes: standard output, or FILE as a `FileDestination` writes it (a regular
/// file whole, by a synced temporary file renamed over it; a device, FIFO or socket in place).
struct ExportDestination {
    /// What the documents are written to.
    let sink: TextSink
    /// FILE, nil for standard output.
    let path: String?
    /// The open FILE, nil for standard output.
    private let writer: FileDestination.Writer?

    /// The shell's output, or FILE opened for writing (a FIFO's reader waited for, until Ctrl-C).
    init<Options: CommandOptions>(path: String?, shell: Shell, for invocation: Invocation<Options>) throws {
        self.path = path
        guard let path else {
            writer = nil
            sink = shell.output
            return
        }
        do {
            let opened = try FileDestination.resolve(path).open(isInterrupted: { Interruption.isRequested })
            writer = opened
            sink = TextSink(descriptor: opened.descriptor)
        } catch {
            if error.isInterruption { throw invocation.interrupted("interrupted; '\(path)' was not written") }
            throw invocation.failure(error.description)
        }
    }

    /// Whether FILE is written in place (a device, a FIFO, a socket, a descriptor): what was
    /// written before a failure or Ctrl-C has gone out.
    var isInPlace: Bool { writer?.destination.isInPlace ?? true }

    /// Puts FILE in place (a replaced file is synced and renamed; one written in place closed).
    /// On failure a replaced FILE is left as it was.
    func commit<Options: CommandOptions>(for invocation: Invocation<Options>) throws {
        guard let writer else { return }
        sink.flush()
        if let failure = sink.failure {
            sink.discard()
            writer.abandon()
            throw invocation.failure("\(writer.destination.path): cannot write: \(failure)")
        }
        do {
            try writer.commit()
        } catch {
            throw invocation.failure(error.description)
        }
    }

    /// Drops what was written to a replaced FILE (Ctrl-C), leaving it as it was; one written in
    /// place gets what was buffered and is closed.
    func abandon() {
        guard let writer else { return }
        if writer.destination.isInPlace { sink.flush() } else { sink.discard() }
        writer.abandon()
    }
}
