import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The network stack (FoundationNetworking, libcurl) lives in `libArchivistNetwork.so` next to the
/// `archivist` binary, which loads it only when a command sends a request: the binary does not
/// link it, a copy of the binary without the library still runs every command that does not
/// fetch, and one that fetches fails with one line naming the library and the folder.
@Suite("libArchivistNetwork.so: loaded only to fetch")
struct NetworkLibraryTests {
    static let key = "lone-K3Y-5b7e"
    static let library = "libArchivistNetwork.so"
    /// scripts/sanitize links the Swift runtime and Foundation as shared libraries (Package.swift), so
    /// only there are they expected among the loaded libraries; the network stack never is.
    static let linksStaticRuntime = ProcessInfo.processInfo.environment["ARCHIVIST_SHARED_RUNTIME"] != "1"
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// The environment of a run against `server`.
    func environment(_ server: FakeNYTServer) -> [String: String] {
        CLI.fakeAPIEnvironment(key: Self.key, base: server.baseURL)
    }

    /// Copies the built `archivist` (and the library when `withLibrary`) alone into a new folder of
    /// the sandbox; returns the copy's path and the folder as the kernel resolves it.
    func copyBinary(withLibrary: Bool = false) throws -> (binary: String, folder: String) {
        let built = try CLI.binary()
        let folder = sandbox.root + "/bin"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.copyExecutable(built, to: folder + "/archivist")
        // A process another test forked while the copy was open still holds it until it execs.
        let runnable = Self.eventually(10) { (try? sandbox.run(["--version"], dataOption: false, binary: folder + "/archivist")) != nil }
        try #require(runnable, "\(folder)/archivist could not be run within 10 s (text file busy)")
        if withLibrary {
            let library = (built as NSString).deletingLastPathComponent + "/" + Self.library
            try #require(FileManager.default.fileExists(atPath: library), "\(library) was not built next to \(built)")
            try FileManager.default.copyItem(atPath: library, toPath: folder + "/" + Self.library)
        }
        let resolved = try #require(realpath(folder, nil), "realpath \(folder): errno \(errno)")
        defer { free(resolved) }
        return (folder + "/archivist", String(cString: resolved))
    }

    /// Copies an executable through a descriptor closed on exec (the caller then waits until it
    /// can be run).
    /// A descriptor open for writing makes exec fail with ETXTBSY ("text file busy"); one
    /// without close-on-exec (FileManager's copy) is inherited by every process the other tests
    /// start meanwhile, such as a PostgreSQL server that lives for the whole run. Close-on-exec
    /// leaves only the moment between a concurrent fork and its exec.
    static func copyExecutable(_ source: String, to destination: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let fd = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        try #require(fd >= 0, "open \(destination): errno \(errno)")
        let written = bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let count = write(fd, raw.baseAddress! + done, raw.count - done)
                if count <= 0 { break }
                done += count
            }
            return done
        }
        close(fd)
        try #require(written == bytes.count, "wrote \(written) of \(bytes.count) bytes to \(destination)")
    }

    /// The paths of the files mapped into process `pid`.
    static func mappedFiles(_ pid: Int32) -> Set<String> {
        // Read to the end with read(2): a /proc file has no size, and one read gives a page.
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let maps = String(decoding: bytes, as: UTF8.self)
        var files: Set<String> = []
        for line in maps.split(separator: "\n") {
            if let slash = line.firstIndex(of: "/") { files.insert(String(line[slash...])) }
        }
        return files
    }

    /// What the open descriptors of process `pid` point to.
    static func openFiles(_ pid: Int32) -> [String] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0) }
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    static func networkStack(in files: Set<String>) -> [String] {
        files.filter { $0.contains("libcurl") || $0.contains("libFoundationNetworking") || $0.contains(library) }.sorted()
    }

    // MARK: Without the library

    @Test func aLoneCopyOfTheBinaryRunsEveryCommandThatDoesNotFetch() throws {
        let (binary, _) = try copyBinary()
        let help = try sandbox.run(["help"], binary: binary)
        #expect(help.status == 0, "\(help)")
        #expect(help.stdoutText.contains("search"), "\(help)")
        let searchHelp = try sandbox.run(["help", "search"], binary: binary)
        #expect(searchHelp.status == 0, "\(searchHelp)")
        let empty = try sandbox.run(["count"], binary: binary)
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.stdoutText == "0\n", "\(empty)")
        #expect(try sandbox.run(["put", "a", #"{"n":1}"#], binary: binary).status == 0)
        let count = try sandbox.run(["count"], binary: binary)
        #expect(count.stdoutText == "1\n", "\(count)")
        let stats = try sandbox.run(["--format", "json", "stats"], binary: binary)
        #expect(stats.status == 0, "\(stats)")
        #expect(try stats.json()["documents"] == .number("1"), "\(stats)")
        let searches = try sandbox.run(["searches"], binary: binary)
        #expect(searches.status == 0, "\(searches)")
        for result in [help, searchHelp, empty, count, stats, searches] {
            #expect(result.stderr.isEmpty, "\(result)")
        }
    }

    @Test func aLoneCopyOfTheBinaryFailsToFetchWithOneLineNamingTheLibraryAndItsFolder() throws {
        let (binary, folder) = try copyBinary()
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 12, seed: 31, from: "2021-05-01", to: "2021-05-31"), apiKey: Self.key)
        let expected = "error: network library \(Self.library) not found next to \(folder)"

        let search = try sandbox.run(["--format", "jsonl", "search", "vote"], environment: environment(server), binary: binary)
        #expect(search.status == 1, "\(search)")
        #expect(search.stdout.isEmpty, "\(search)")
        #expect(search.stderrLines == [expected], "\(search)")
        #expect(server.requests.isEmpty, "a request reached the server")
        #expect(search.seconds < 30, "took \(search.seconds) s: retried?")

        // A saved search: search fails the same way, refresh names the search.
        let saved = try sandbox.run(["--format", "jsonl", "search", "--save", "s"], environment: environment(server), binary: binary)
        #expect(saved.status == 1, "\(saved)")
        #expect(saved.stderrLines == [expected], "\(saved)")
        let refresh = try sandbox.run(["--format", "jsonl", "refresh"], environment: environment(server), binary: binary)
        #expect(refresh.status == 1, "\(refresh)")
        #expect(refresh.stderrLines == ["error: s: network library \(Self.library) not found next to \(folder)"], "\(refresh)")
        #expect(server.requests.isEmpty, "a request reached the server")

        for result in [search, saved, refresh] {
            #expect(!result.stdoutText.contains(Self.key) && !result.stderrText.contains(Self.key), "the key leaked: \(result)")
        }
        // No request was sent, so none is counted.
        if let usage = sandbox.contents(sandbox.path("api-usage.json")) {
            guard case .object(let days)? = try JSONParser.parse(usage)["requests_per_day"] else {
                Issue.record("api-usage.json: \(String(decoding: usage, as: UTF8.self))")
                return
            }
            #expect(days.isEmpty, "requests were counted: \(String(decoding: usage, as: UTF8.self))")
        }
        #expect(try DocumentStore(folder: sandbox.data, schema: .nyt).count == 0)
    }

    @Test func aCopyOfTheBinaryWithTheLibraryBesideItFetches() throws {
        let (binary, _) = try copyBinary(withLibrary: true)
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 12, seed: 32, from: "2021-05-01", to: "2021-05-31"), apiKey: Self.key)
        let result = try sandbox.run(
            ["--format", "jsonl", "search", "--pages", "2", "--fields", "_id"], environment: environment(server), binary: binary)
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdoutLines.first == #"{"fetched":12,"added":12,"updated":0,"unchanged":0,"pages":2,"first_seq":1,"last_seq":12}"#,
            "\(result)")
        #expect(result.stdoutLines.count == 13, "\(result)")
        #expect(server.requests.count == 2)
    }

    // MARK: What a process maps

    @Test func archivistDoesNotLinkTheNetworkStack() throws {
        let binary = try CLI.binary()
        let ldd = "/usr/bin/ldd"
        try #require(FileManager.default.isExecutableFile(atPath: ldd), "no \(ldd)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ldd)
        process.arguments = [binary]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        // The Swift runtime and Foundation are linked in (Package.swift): only C libraries are loaded.
        #expect(output.contains("libc.so"), "\(output)")
        if Self.linksStaticRuntime {
            #expect(!output.contains("libswiftCore.so") && !output.contains("libFoundation"), "\(output)")
        }
        let network = output.split(separator: "\n").filter {
            $0.contains("libcurl") || $0.contains("libFoundationNetworking") || $0.contains(Self.library)
        }
        #expect(network.isEmpty, "archivist links the network stack: \(network)")
    }

    @Test func aRunningCommandThatDoesNotFetchHasNoNetworkLibraryMapped() throws {
        #expect(try sandbox.run(["stats"]).status == 0)  // the data folder
        let lock = try HeldLock(sandbox.path(FileNames.lock))
        defer { lock.release() }
        // `put` waits for the lock (polling), well inside main, past every library the loader maps.
        let child = try sandbox.start(["put", "a", #"{"n":1}"#], environment: ["ARCHIVIST_LOCK_TIMEOUT": "60"])
        let waiting = Self.eventually(30) { Self.openFiles(child.pid).contains { $0.hasSuffix("/data/" + FileNames.lock) } }
        let files = Self.mappedFiles(child.pid)
        lock.release()
        let result = try child.wait()
        try #require(waiting, "put never opened the lock file: \(result)")
        #expect(files.contains { $0.contains("/libc.so") }, "\(files.sorted())")
        if Self.linksStaticRuntime {
            #expect(!files.contains { $0.hasSuffix("/libswiftCore.so") }, "\(files.sorted())")
        }
        #expect(Self.networkStack(in: files).isEmpty, "mapped: \(Self.networkStack(in: files))")
        #expect(result.status == 0, "\(result)")
    }

    @Test func aRunningSearchHasTheNetworkLibraryMapped() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 5, seed: 33, from: "2021-05-01", to: "2021-05-31"), apiKey: Self.key)
        server.enqueue([.slow(seconds: 2)])
        let child = try sandbox.start(["--format", "jsonl", "search", "--pages", "1"], environment: environment(server))
        let sent = Self.eventually(60) { !server.requests.isEmpty }
        let files = Self.mappedFiles(child.pid)
        let result = try child.wait()
        try #require(sent, "no request arrived: \(result)")
        let network = Self.networkStack(in: files)
        #expect(network.contains { $0.hasSuffix("/" + Self.library) }, "\(network)")
        #expect(network.contains { $0.contains("libFoundationNetworking") }, "\(network)")
        #expect(network.contains { $0.contains("libcurl") }, "\(network)")
        #expect(result.status == 0, "\(result)")
    }
}
