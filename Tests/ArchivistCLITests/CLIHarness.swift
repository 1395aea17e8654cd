import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// The harness the command-line tests share: it finds the built `archivist` executable, runs it as
// a child process with chosen arguments, environment and standard input, and captures what it
// prints and how it exits. Every test works in a `TemporaryFolder` (ArchivistTestSupport): a fresh
// temporary folder, removed afterwards, holding the data folder and the files the harness captures
// output into.

/// What one run of `archivist` did.
struct CLIResult: Sendable, CustomStringConvertible {
    /// The exit status (for a process killed by a signal: the signal number).
    var status: Int32
    /// Whether the process was ended by a signal rather than by exiting.
    var wasSignaled: Bool
    /// Everything written on standard output.
    var stdout: [UInt8]
    /// Everything written on standard error.
    var stderr: [UInt8]
    /// How long the run took, in seconds.
    var seconds: Double

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    /// Standard output split into lines (without the final empty piece after the last newline).
    var stdoutLines: [String] { CLIResult.lines(stdoutText) }
    /// Standard error split into lines.
    var stderrLines: [String] { CLIResult.lines(stderrText) }

    /// Standard output parsed as one JSON value.
    func json() throws -> JSONValue {
        try JSONParser.parse(stdout)
    }

    /// Standard output parsed as JSON Lines.
    func jsonLines() throws -> [JSONValue] {
        try stdoutLines.map { try JSONParser.parse($0) }
    }

    static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    var description: String {
        "exit \(status)\(wasSignaled ? " (signal)" : ""); stdout: \(stdoutText.prefix(2000)); stderr: \(stderrText.prefix(2000))"
    }
}

/// Locates the `archivist` executable and the test's files.
enum CLI {
    /// The environment of a run against a fake NYT server at `base` with `key`: no pacing, a
    /// short back-off and timeout.
    static func fakeAPIEnvironment(key: String, base: String) -> [String: String] {
        ["NYT_API_KEY": key, "NYT_API_BASE": base, "ARCHIVIST_PACE": "0", "ARCHIVIST_BACKOFF": "0.01", "ARCHIVIST_TIMEOUT": "10"]
    }

    /// The package root, found from this source file's path (`Tests/ArchivistCLITests/CLIHarness.swift`).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The hand-written fixture files.
    static let fixtures: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The path of a fixture file.
    static func fixture(_ name: String) -> String {
        fixtures.appendingPathComponent(name).path
    }

    /// The built `archivist`, or nil when it cannot be found.
    ///
    /// In order: `$ARCHIVIST_BIN`; the folder of the running test executable (SwiftPM puts every
    /// product of a build, `archivist` included, in one folder, whatever the scratch path) and up
    /// to two folders above it (a bundle's inner folders, the `debug` link beside the triple
    /// folder); finally `.build/debug/archivist` under the package root.
    static let binaryPath: String? = locateBinary()

    /// The executable, or a failed expectation naming where it was looked for.
    static func binary() throws -> String {
        try #require(
            binaryPath != nil,
            "archivist executable not found: build it first (swift build --build-tests) or set ARCHIVIST_BIN; looked beside \(startingFolders())"
        )
        return binaryPath!
    }

    static func locateBinary() -> String? {
        let fileManager = FileManager.default
        func isExecutableFile(_ path: String) -> Bool {
            var isFolder: ObjCBool = false
            return fileManager.fileExists(atPath: path, isDirectory: &isFolder) && !isFolder.boolValue
                && fileManager.isExecutableFile(atPath: path)
        }
        if let given = ProcessInfo.processInfo.environment["ARCHIVIST_BIN"], !given.isEmpty {
            return isExecutableFile(given) ? given : nil
        }
        for start in startingFolders() {
            var folder = URL(fileURLWithPath: start)
            for _ in 0..<3 {
                for candidate in [folder.appendingPathComponent("archivist"), folder.appendingPathComponent("debug/archivist")] {
                    if isExecutableFile(candidate.path) { return candidate.resolvingSymlinksInPath().path }
                }
                folder = folder.deletingLastPathComponent()
            }
        }
        let fallback = packageRoot.appendingPathComponent(".build/debug/archivist").path
        return isExecutableFile(fallback) ? fallback : nil
    }

    /// Folders the running test executable lives in.
    static func startingFolders() -> [String] {
        var paths: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            paths.append(executable)
        }
        if let executable = Bundle.main.executableURL?.path { paths.append(executable) }
        paths.append(Bundle.main.bundleURL.appendingPathComponent("placeholder").path)
        if let first = CommandLine.arguments.first, first.contains("/") { paths.append(first) }
        var folders: [String] = []
        for path in paths {
            let folder = URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent().path
            if !folders.contains(folder) { folders.append(folder) }
        }
        return folders
    }
}

/// What runs of `archivist` have been started (numbering the files their output is captured in).
private let runs = Atomic<Int>(0)

/// The command-line tests' temporary folder: `archivist` run on its data folder, and files.
///
/// ```
/// <root>/data/   the data folder tests pass with --data (not created in advance)
/// <root>/io/     files the harness uses for standard input and output (made on first use)
/// ```
extension TemporaryFolder {
    /// Where captured output goes (made on first use).
    var io: String {
        let io = root + "/io"
        mkdir(io, 0o755)
        return io
    }

    /// A path inside the data folder.
    func path(_ relative: String) -> String { data + "/" + relative }

    /// The data-folder-relative path of the document file for `id`.
    func documentFile(_ id: String) -> String { path(FileNames.documentPath(for: id, in: .nyt)) }

    /// Runs `archivist --data <data> ARGUMENTS` (without `--data` when `dataOption` is false) and
    /// waits for it; a run longer than `timeout` seconds is killed and fails the test. `binary`
    /// replaces the built executable (a copy of it elsewhere, say).
    @discardableResult
    func run(
        _ arguments: [String], dataOption: Bool = true, stdin: [UInt8]? = nil, environment: [String: String] = [:],
        currentDirectory: String? = nil, binary: String? = nil, timeout: Double = 120,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        let child = try start(
            arguments, dataOption: dataOption, stdin: stdin, environment: environment,
            currentDirectory: currentDirectory, binary: binary)
        return try child.wait(timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Starts `archivist` (or `binary`) without waiting for it.
    func start(
        _ arguments: [String], dataOption: Bool = true, stdin: [UInt8]? = nil, environment: [String: String] = [:],
        currentDirectory: String? = nil, binary: String? = nil
    ) throws -> RunningCLI {
        let binary = try binary ?? CLI.binary()
        let number = runs.wrappingAdd(1, ordering: .relaxed).newValue
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = (dataOption ? ["--data", data] : []) + arguments
        var childEnvironment = ProcessInfo.processInfo.environment
        for name in [
            "ARCHIVIST_DATA", "ARCHIVIST_LOCK_TIMEOUT", "ARCHIVIST_BIN", "ARCHIVIST_FLUSH_THRESHOLD", "ARCHIVIST_MERGE_FACTOR",
            "ARCHIVIST_MERGES",
        ] {
            childEnvironment[name] = nil
        }
        for (name, value) in environment { childEnvironment[name] = value }
        process.environment = childEnvironment
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }

        let stdinPath: String
        if let stdin {
            stdinPath = io + "/stdin-\(number)"
            try Data(stdin).write(to: URL(fileURLWithPath: stdinPath))
        } else {
            stdinPath = "/dev/null"
        }
        let stdoutPath = io + "/stdout-\(number)"
        let stderrPath = io + "/stderr-\(number)"
        for output in [stdoutPath, stderrPath] {
            try #require(FileManager.default.createFile(atPath: output, contents: nil), "cannot create \(output)")
        }
        let input = try #require(FileHandle(forReadingAtPath: stdinPath))
        let output = try #require(FileHandle(forWritingAtPath: stdoutPath))
        let errors = try #require(FileHandle(forWritingAtPath: stderrPath))
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let started = Date()
        do {
            try process.run()
        } catch {
            try? input.close(); try? output.close(); try? errors.close()
            throw error
        }
        // The child has its own copies now.
        try? input.close(); try? output.close(); try? errors.close()
        return RunningCLI(process: process, started: started, stdoutPath: stdoutPath, stderrPath: stderrPath)
    }

    // MARK: Files

    /// Writes bytes to a path (absolute), creating folders on the way.
    func write(_ bytes: [UInt8], to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Writes text to a path (absolute).
    func write(_ text: String, to path: String) throws {
        try write(Array(text.utf8), to: path)
    }

    /// The bytes of a file, or nil when it does not exist.
    func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { Array($0) }
    }

    /// Whether a file or folder exists.
    func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }
}

/// A started `archivist` process.
struct RunningCLI: @unchecked Sendable {
    let process: Process
    let started: Date
    let stdoutPath: String
    let stderrPath: String

    var pid: Int32 { process.processIdentifier }

    /// Sends a signal.
    func signal(_ number: Int32) {
        _ = kill(process.processIdentifier, number)
    }

    /// Waits for the process to end (killing it after `timeout` seconds) and collects its output.
    func wait(timeout: Double = 120, sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIResult {
        var timedOut = false
        while process.isRunning {
            if Date().timeIntervalSince(started) > timeout {
                timedOut = true
                _ = kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(1_000)
        }
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        let result = CLIResult(
            status: process.terminationStatus, wasSignaled: process.terminationReason == .uncaughtSignal,
            stdout: FileManager.default.contents(atPath: stdoutPath).map { Array($0) } ?? [],
            stderr: FileManager.default.contents(atPath: stderrPath).map { Array($0) } ?? [],
            seconds: seconds)
        if timedOut {
            Issue.record(
                "archivist \(process.arguments ?? []) did not finish within \(timeout) s and was killed: \(result)",
                sourceLocation: sourceLocation)
        }
        return result
    }
}

// MARK: - Helpers

/// The stat(2) facts the tests look at.
struct FileFacts: Equatable, Sendable {
    var inode: UInt64
    var size: Int
    var modifiedNanoseconds: Int64
}

/// The stat facts of a path, or nil when it does not exist.
func fileFacts(_ path: String) -> FileFacts? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return FileFacts(
        inode: UInt64(info.st_ino), size: Int(info.st_size),
        modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
}

/// Every file and folder under `root`, as paths relative to it (folders end in `/`), sorted.
func tree(_ root: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var paths: [String] = []
    while let relative = enumerator.nextObject() as? String {
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder)
        paths.append(isFolder.boolValue ? relative + "/" : relative)
    }
    return paths.sorted()
}

/// Each file under `root` with its bytes and stat facts, to prove a folder was left untouched.
func snapshot(_ root: String) -> [String: ([UInt8], FileFacts?)] {
    var result: [String: ([UInt8], FileFacts?)] = [:]
    for relative in tree(root) {
        let path = root + "/" + relative
        if relative.hasSuffix("/") {
            result[relative] = ([], nil)
        } else {
            result[relative] = (FileManager.default.contents(atPath: path).map { Array($0) } ?? [], fileFacts(path))
        }
    }
    return result
}

/// Whether two snapshots hold the same files with the same bytes and times.
func sameSnapshot(_ a: [String: ([UInt8], FileFacts?)], _ b: [String: ([UInt8], FileFacts?)]) -> Bool {
    guard a.keys.sorted() == b.keys.sorted() else { return false }
    for (key, value) in a {
        guard let other = b[key], other.0 == value.0, other.1 == value.1 else { return false }
    }
    return true
}

/// The documents of an import source, as `import` should store them: the docs of an API
/// response that have an `_id`, the elements of an array, or each line of JSON Lines that parses.
func importableDocuments(of bytes: [UInt8]) -> [JSONValue] {
    if let value = try? JSONParser.parse(bytes) {
        if case .array(let elements) = value { return elements }
        if let response = value["response"] {
            guard case .array(let docs)? = response["docs"] else { return [] }
            return docs.filter { $0["_id"] != nil }
        }
        if value["fault"] != nil { return [] }
        return [value]
    }
    return CLIResult.lines(String(decoding: bytes, as: UTF8.self)).compactMap { try? JSONParser.parse($0) }
}

/// Documents keyed by their `_id`.
func byID(_ documents: [JSONValue]) -> [String: JSONValue] {
    var result: [String: JSONValue] = [:]
    for document in documents {
        if case .string(let id)? = document["_id"] { result[id] = document }
    }
    return result
}

/// Holds the data folder's write lock from the test process itself, as a writer would: flock(2)
/// on `archivist.lock`, with this process's pid written into the file.
final class HeldLock: @unchecked Sendable {
    private var fd: Int32

    init(_ path: String) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0, "cannot open \(path): errno \(errno)")
        try #require(flock(fd, LOCK_EX) == 0, "cannot lock \(path): errno \(errno)")
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, pid.count, 0) }
    }

    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}
