import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Runs commands from the command table against a data folder and prints their results.
///
/// One shell serves one `archivist` process: a single command from the command line now, and a
/// script or an interactive session later. It opens the store once and keeps it; each command
/// sees what other processes committed before it started.
public final class Shell: @unchecked Sendable {
    /// The version printed by `--version`.
    public static let version = "0.1.0"

    /// The data folder: `--data`, else `ARCHIVIST_DATA`, else the one the shell was created with.
    public internal(set) var dataFolder: String
    /// The output format chosen with `--format` (nil: table on a terminal, else jsonl).
    public var format: OutputFormat?
    /// Where results go.
    public let output: TextSink
    /// Where errors go.
    public let errors: TextSink
    /// The commands this shell knows.
    public let commands: CommandTable
    var openedStore: DocumentStore?
    /// The PostgreSQL copy when the data folder is a `postgresql://` address, opened on first use.
    var openedCopy: PostgresCopy?
    /// Whether each command's wall time is printed on stderr (`.timer on`).
    public var showsTimer = false
    /// Whether the interactive shell shows output taller than the terminal through a pager
    /// (`.pager on|off`).
    public var usesPager = true
    /// Whether the commands themselves come from standard input (a script or the shell), so
    /// `import -` has nothing of its own to read.
    public internal(set) var readsCommandsFromStandardInput = false
    /// The environment the `ARCHIVIST_*` variables are read from.
    public let environment: Environment
    /// The `archivist` executable that runs merges in the background (`merge --background`),
    /// set by the executable; nil (a shell inside another program): writes merge inline.
    public var mergerExecutable: String?
    /// Mergers this shell started and has not reaped yet.
    var startedMergers: [pid_t] = []

    /// Creates a shell over a data folder, reading its variables from `environment`.
    public init(
        dataFolder: String, format: OutputFormat? = nil, output: TextSink, errors: TextSink,
        commands: CommandTable = .standard,
        environment: Environment = .process
    ) {
        self.dataFolder = dataFolder
        self.environment = environment
        self.format = format
        self.output = output
        self.errors = errors
        self.commands = commands
    }

    /// The format in force.
    public var effectiveFormat: OutputFormat {
        format ?? (output.isTerminal ? .table : .jsonl)
    }

    /// A renderer for the format in force.
    public var renderer: Renderer { Renderer(format: effectiveFormat) }

    /// The store, opened on first use.
    public func store() throws -> DocumentStore {
        if isCopy { throw try readOnlyError(command: nil) }
        if let openedStore {
            try openedStore.refresh()
            return openedStore
        }
        let store = try openStore(in: dataFolder)
        openedStore = store
        return store
    }

    /// The store `merge` works on: the open one, or else one that reads no tail
    /// (`DocumentStore.Options.readsTail`), opened for this command only, so that a merger's
    /// memory is that of its merges, not of the changes an import has appended meanwhile.
    func storeForMerging() throws -> DocumentStore {
        if isCopy { throw try readOnlyError(command: nil) }
        if let openedStore {
            try openedStore.refresh()
            return openedStore
        }
        return try openStore(in: dataFolder, readsTail: false)
    }

    /// Switches to another data folder, once its store opens (else nothing changes).
    public func open(dataFolder: String) throws {
        if CopyAddress.isAddress(dataFolder) {
            let copy = try openCopy(dataFolder)
            self.dataFolder = dataFolder
            openedCopy?.close()
            openedCopy = copy
            openedStore = nil
            return
        }
        let store = try openStore(in: dataFolder)
        openedCopy?.close()
        openedCopy = nil
        self.dataFolder = dataFolder
        openedStore = store
    }

    /// Opens the store of a data folder, with the lock timeout of `ARCHIVIST_LOCK_TIMEOUT` (else 10 s),
    /// the flush threshold and merge factor of `ARCHIVIST_FLUSH_THRESHOLD` and
    /// `ARCHIVIST_MERGE_FACTOR`, and merges in the background unless `ARCHIVIST_MERGES=inline`
    /// (or the shell has no `mergerExecutable`), a bulk import's flushes too unless it is
    /// `inline`; a migration of the folder's format is noted on stderr. `readsTail` false opens
    /// it for merges only (`DocumentStore.Options.readsTail`).
    func openStore(in folder: String, readsTail: Bool = true) throws -> DocumentStore {
        let lockTimeout = try EnvironmentVariable.lockTimeout.seconds(in: environment) ?? 10
        var options = DocumentStore.Options(lockTimeout: lockTimeout)
        if let threshold = try EnvironmentVariable.flushThreshold.count(in: environment, minimum: 1) {
            options = DocumentStore.Options(
                lockTimeout: lockTimeout, flushThreshold: threshold, bulkFlushThreshold: max(threshold, threshold * 8))
        }
        if let factor = try EnvironmentVariable.mergeFactor.count(in: environment, minimum: 2) { options.mergeFactor = factor }
        let merges = try EnvironmentVariable.merges.choice(in: environment, of: ["background", "inline"]) ?? "background"
        options.mergesInBackground = mergerExecutable != nil && merges == "background"
        options.flushesInBackground = merges == "background"
        options.readsTail = readsTail
        let store = try DocumentStore(folder: folder, schema: .nyt, options: options)
        // Said by the one process that migrated the folder: every later open finds the new format.
        if let migration = store.migration { errors.line("note: \(folder): \(migration)") }
        if let start = store.renumberedFeedStart {
            errors.line("note: \(folder): \(Command.renumberedNote(feedStart: start))")
        }
        return store
    }

    /// Runs `archivist ARGS...`: global options anywhere, then a command and its arguments.
    /// Returns the exit status; errors are printed on the error sink.
    public func run(arguments: [String]) -> Int32 {
        defer {
            output.flush()
            errors.flush()
        }
        let global: GlobalArguments
        do throws(ShellError) {
            global = try Self.parseGlobalOptions(arguments)
        } catch {
            return report(error)
        }
        if global.printsVersion {
            output.line("archivist \(Self.version)")
            return ExitStatus.success
        }
        do {
            if let folder = try global.dataFolder ?? EnvironmentVariable.data.path(in: environment) {
                dataFolder = folder  // opened on first use, so `help` creates nothing
            }
        } catch {
            return report(error)
        }
        if let format = global.format { self.format = format }
        guard let name = global.words.first else { return readCommands(bail: global.bail, mode: global.mode) }
        return execute(command: name, arguments: Array(global.words.dropFirst()))
    }

    /// With no command: reads commands from standard input. A script (not a terminal, or
    /// `--batch`) runs line by line; the interactive shell needs a terminal.
    func readCommands(bail: Bool, mode: InputMode?) -> Int32 {
        let interactive = mode.map { $0 == .interactive } ?? (isatty(STDIN_FILENO) == 1)
        readsCommandsFromStandardInput = true
        if !interactive {
            let lines = ScriptLineReader()
            return runScript(bail: bail, nextLine: lines.next)
        }
        let historyPath: String?
        do throws(ShellError) {
            historyPath = try EditLineReader.defaultHistoryPath(environment: environment)
        } catch {
            return report(error)
        }
        // libedit needs a terminal; without one, prompts are printed and lines read plainly.
        guard isatty(STDIN_FILENO) == 1 else { return runInteractive(reader: PlainLineReader(output: output, errors: errors)) }
        return runInteractive(reader: EditLineReader(historyPath: historyPath))
    }

    /// Whether commands come from a person at a terminal or from a script.
    enum InputMode {
        case interactive
        case batch
    }

    /// Runs one command with its arguments; returns the exit status.
    public func execute(command name: String, arguments: [String]) -> Int32 {
        execute(command: name, words: arguments.map { ShellWord($0, quoting: .unknown) })
    }

    /// Runs one command with words that remember their quotes (a line typed or read from a script).
    public func execute(command name: String, words arguments: [ShellWord]) -> Int32 {
        guard let command = commands.command(named: name) else {
            return report(ShellError.usage("unknown command '\(name)'; run 'archivist help' for the list", command: nil))
        }
        do {
            if isCopy, !Self.copyCommands.contains(name) { throw try readOnlyError(command: name) }
            let invocation = try command.parse(words: arguments)
            defer { startMergesIfDue() }
            if command.isInterruptible {
                try Interruption.catching { try command.run(invocation, self) }
            } else {
                try command.run(invocation, self)
            }
            return ExitStatus.success
        } catch {
            return report(error)
        }
    }

    /// Prints an error as one line on the error sink and returns its exit status.
    @discardableResult
    public func report(_ error: any Error) -> Int32 {
        if let shellError = error as? ShellError {
            if let message = shellError.errorDescription { reportError(message) }
            return shellError.exitStatus
        }
        reportError(Self.message(for: error))
        return ExitStatus.failure
    }

    /// The script line being run, named in error messages (`error: line 3: ...`).
    public var lineNumber: Int?

    /// Prints one `error:` line (naming the script line, in a script).
    public func reportError(_ message: String) {
        errors.line("error: " + (lineNumber.map { "line \($0): " } ?? "") + Self.oneLine(message))
    }

    /// A one-line message for any error: line breaks and tabs become spaces, and any other
    /// control character (an escape sequence in a hostile ID or file name) is shown as `\u{1B}`.
    public static func message(for error: any Error) -> String {
        var text = (error as? LocalizedError)?.errorDescription ?? String(describing: error)
        if let hint = hint(for: error) { text += "; " + hint }
        return oneLine(text)
    }

    /// `text` without line breaks or control characters (see ``message(for:)``).
    static func oneLine(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A, 0x0D, 0x09: result.unicodeScalars.append(" ")
            case 0..<0x20, 0x7F, 0x80..<0xA0: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// What the user can do about an error, in the command line's words (the library's errors
    /// only say what went wrong and where).
    static func hint(for error: any Error) -> String? {
        switch error as? StoreError {
        case .staleIndex?, .unreadableIndex?, .damagedSnapshot?: return "run 'archivist repair'"
        case .newerFormat?: return "upgrade archivist"
        default: return nil
        }
    }
}
