import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Faults of the machine with the real binary on real mounts: a read-only data folder (a
/// read-only bind mount), a full disk (a tmpfs of a few hundred KiB, filled) during an import, a
/// put, a compact and a search's page, and a folder owned by another user (`setpriv`). They need root (CI runs as
/// root) and `mount`; elsewhere they are skipped, saying why.
@Suite("the machine's faults: a read-only folder and a full disk", .serialized, .enabled(if: Mounts.available, "needs root and mount"))
struct MachineFaultTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    static func article(_ n: Int, padding: Int = 0) -> String {
        #"{"_id":"doc-\#(n)","section_name":"Sports","headline":{"main":"Headline \#(n)"},"body":"\#(String(repeating: "x", count: padding))"}"#
    }

    @Test("on a read-only mount reads work, and each write fails with one line naming the folder, changing nothing")
    func readOnlyMount() throws {
        let source = sandbox.root + "/source"
        let script = (0..<20).map { "put doc-\($0) '\(Self.article($0))'" }.joined(separator: "\n") + "\nremove doc-3\n"
        let filled = try sandbox.run(["--data", source + "/data"], dataOption: false, stdin: Array(script.utf8))
        try #require(filled.status == 0, "\(filled)")
        let mountPoint = sandbox.root + "/ro"
        try Mounts.bindReadOnly(source, at: mountPoint)
        defer { Mounts.unmount(mountPoint) }
        let data = mountPoint + "/data"
        let before = snapshot(source + "/data")

        for reading in [
            ["count"], ["get", "doc-1"], ["find", "section_name", "=", "Sports", "--limit", "3"], ["changes", "--since", "18"], ["stats"],
            ["check"], ["facet", "section_name"],
        ] {
            let result = try sandbox.run(["--data", data] + reading, dataOption: false)
            #expect(result.status == 0, "\(reading): \(result)")
        }
        let count = try sandbox.run(["--data", data, "count"], dataOption: false)
        #expect(count.stdoutText == "19\n")
        for writing in [["put", "new", "{}"], ["remove", "doc-1"], ["compact"], ["repair"], ["index", "add", "body"]] {
            let result = try sandbox.run(["--data", data] + writing, dataOption: false)
            #expect(result.status == 1, "\(writing): \(result)")
            #expect(
                result.stderrLines.count == 1 && result.stderrText.contains(data) && result.stderrText.contains("read-only"),
                "\(writing): \(result)")
        }
        let importFile = sandbox.root + "/more.jsonl"
        try sandbox.write(Self.article(99) + "\n", to: importFile)
        let imported = try sandbox.run(["--data", data, "import", importFile], dataOption: false)
        #expect(imported.status == 1 && imported.stderrText.contains("read-only"), "\(imported)")
        #expect(sameSnapshot(before, snapshot(source + "/data")), "a write on the read-only mount changed the folder")
    }

    @Test("a format-2 folder on a read-only mount is read as it is, without the migration it cannot write")
    func readOnlyOlderFormat() throws {
        let source = sandbox.root + "/source"
        let formatTwo = CLI.packageRoot.appendingPathComponent("Tests/ArchivistStoreTests/Fixtures/format-2").path
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: formatTwo, toPath: source + "/data")
        let mountPoint = sandbox.root + "/ro"
        try Mounts.bindReadOnly(source, at: mountPoint)
        defer { Mounts.unmount(mountPoint) }
        let before = snapshot(source + "/data")
        let count = try sandbox.run(["--data", mountPoint + "/data", "count"], dataOption: false)
        #expect(count.status == 0 && count.stdoutText == "41\n" && count.stderr.isEmpty, "\(count)")
        let changes = try sandbox.run(["--data", mountPoint + "/data", "changes", "--since", "42"], dataOption: false)
        #expect(changes.stdoutLines.count == 2, "\(changes)")
        #expect(sameSnapshot(before, snapshot(source + "/data")))
    }

    @Test(
        "a full disk fails an import and a put with one line, keeps what was committed check-clean, and the next command after space is freed works"
    )
    func fullDisk() throws {
        let mountPoint = sandbox.root + "/small"
        try Mounts.tmpfs(at: mountPoint, kilobytes: 600)
        defer { Mounts.unmount(mountPoint) }
        let data = mountPoint + "/data"
        let first = sandbox.root + "/first.jsonl"
        try sandbox.write((0..<50).map { Self.article($0) }.joined(separator: "\n") + "\n", to: first)
        let stored = try sandbox.run(["--data", data, "import", first], dataOption: false)
        try #require(stored.status == 0, "\(stored)")
        let big = sandbox.root + "/big.jsonl"
        try sandbox.write((50..<450).map { Self.article($0, padding: 2000) }.joined(separator: "\n") + "\n", to: big)

        let full = try sandbox.run(["--data", data, "import", big], dataOption: false)
        #expect(full.status == 1, "\(full)")
        #expect(
            full.stderrLines.count == 1 && full.stderrText.contains(data) && full.stderrText.contains("no space left on device"), "\(full)")
        let put = try sandbox.run(
            ["--data", data], dataOption: false, stdin: Array("put doc-999 '\(Self.article(999, padding: 700_000))'\n".utf8))
        #expect(put.status == 1 && put.stderrText.contains("no space left on device"), "\(put)")
        let check = try sandbox.run(["--data", data, "check"], dataOption: false)
        #expect(check.status == 0, "\(check)")
        let count = try sandbox.run(["--data", data, "count"], dataOption: false)
        #expect(count.stdoutText == "50\n", "everything committed before the full disk is there: \(count)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: data + "/tmp"))?.isEmpty ?? true, "temporary files left")

        try Mounts.resize(mountPoint, kilobytes: 8192)
        let again = try sandbox.run(["--data", data, "import", big], dataOption: false)
        #expect(again.status == 0, "\(again)")
        let total = try sandbox.run(["--data", data, "count"], dataOption: false)
        #expect(total.stdoutText == "450\n")
        let after = try sandbox.run(["--data", data, "check"], dataOption: false)
        #expect(after.status == 0, "\(after)")
    }

    /// Fills what is left of the file system at `mountPoint` with one file, and gives its path.
    func fill(_ mountPoint: String) -> String {
        let path = mountPoint + "/filler"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        for size in [1 << 16, 4096, 1] {
            let chunk = [UInt8](repeating: 0x61, count: size)
            while write(descriptor, chunk, size) == size {}
        }
        close(descriptor)
        return path
    }

    /// Expects `result` to be the one-line failure of a full disk in `data`.
    func expectFullDisk(_ result: CLIResult, in data: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
        #expect(
            result.stderrLines.count == 1 && result.stderrText.contains(data) && result.stderrText.contains("no space left on device"),
            "\(result)", sourceLocation: sourceLocation)
    }

    @Test(
        "a full disk fails compact (the tail flushed into a segment, the index rewritten) with one line; the answers stay; after space is freed it works"
    )
    func fullDiskDuringCompact() throws {
        let mountPoint = sandbox.root + "/small"
        try Mounts.tmpfs(at: mountPoint, kilobytes: 2048)
        defer { Mounts.unmount(mountPoint) }
        let data = mountPoint + "/data"
        let input = sandbox.root + "/input.jsonl"
        try sandbox.write((0..<200).map { Self.article($0, padding: 300) }.joined(separator: "\n") + "\n", to: input)
        try #require(try sandbox.run(["--data", data, "import", input], dataOption: false).status == 0)
        let removals = (0..<100).map { "remove doc-\($0 * 2)" }.joined(separator: "\n") + "\n"
        try #require(try sandbox.run(["--data", data], dataOption: false, stdin: Array(removals.utf8)).status == 0)
        let query = ["--data", data, "--format", "jsonl", "find", "section_name = Sports", "--fields", "_id", "--sort", "_id"]
        let before = try sandbox.run(query, dataOption: false)
        try #require(before.stdoutLines.count == 100)
        let indexBefore = sandbox.contents(data + "/index.jsonl")

        let filler = fill(mountPoint)
        let compact = try sandbox.run(["--data", data, "compact"], dataOption: false)
        expectFullDisk(compact, in: data)
        #expect(sandbox.contents(data + "/index.jsonl") == indexBefore, "the index changed")
        #expect(try sandbox.run(query, dataOption: false).stdoutText == before.stdoutText)
        #expect(try sandbox.run(["--data", data, "check"], dataOption: false).status == 0)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: data + "/tmp"))?.isEmpty ?? true, "temporary files left")

        unlink(filler)
        let again = try sandbox.run(["--data", data, "compact"], dataOption: false)
        #expect(again.status == 0, "\(again)")
        #expect(try sandbox.run(query, dataOption: false).stdoutText == before.stdoutText)
        #expect(try sandbox.run(["--data", data, "check"], dataOption: false).status == 0)
    }

    @Test(
        "a full disk fails a search's page with one line; the pages stored before stay check-clean; after space is freed the search completes"
    )
    func fullDiskDuringASearchPage() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 40, seed: 5, from: "2020-01-01", to: "2020-12-31"), apiKey: "fault-key")
        let mountPoint = sandbox.root + "/small"
        try Mounts.tmpfs(at: mountPoint, kilobytes: 1024)
        defer { Mounts.unmount(mountPoint) }
        let data = mountPoint + "/data"
        let environment = CLI.fakeAPIEnvironment(key: "fault-key", base: server.baseURL)
        let search = ["--data", data, "--format", "jsonl", "search", "--sort", "oldest"]
        let first = try sandbox.run(search + ["--pages", "1"], dataOption: false, environment: environment)
        try #require(first.status == 0, "\(first)")

        let filler = fill(mountPoint)
        let full = try sandbox.run(search + ["--pages", "4"], dataOption: false, environment: environment)
        expectFullDisk(full, in: data)
        #expect(try sandbox.run(["--data", data, "count"], dataOption: false).stdoutText == "10\n")
        #expect(try sandbox.run(["--data", data, "check"], dataOption: false).status == 0)

        unlink(filler)
        let again = try sandbox.run(search + ["--pages", "4"], dataOption: false, environment: environment)
        #expect(again.status == 0, "\(again)")
        #expect(try sandbox.run(["--data", data, "count"], dataOption: false).stdoutText == "40\n")
        #expect(try sandbox.run(["--data", data, "check"], dataOption: false).status == 0)
    }

    @Test("a folder owned by another user is read by this one, and each write fails with one line naming it, changing nothing")
    func folderOwnedBySomeoneElse() throws {
        let input = sandbox.root + "/input.jsonl"
        try sandbox.write((0..<3).map { Self.article($0) }.joined(separator: "\n") + "\n", to: input)
        try #require(try sandbox.run(["import", input]).status == 0)
        chmod(sandbox.root, 0o755)
        let before = snapshot(sandbox.data)
        let archivist = try CLI.binary()
        func asNobody(_ arguments: [String], stdin: [UInt8]? = nil) throws -> CLIResult {
            try sandbox.run(
                ["--reuid=65534", "--regid=65534", "--clear-groups", archivist, "--data", sandbox.data] + arguments,
                dataOption: false, stdin: stdin, binary: "/usr/bin/setpriv")
        }
        let count = try asNobody(["count"])
        #expect(count.status == 0 && count.stdoutText == "3\n", "\(count)")
        #expect(try asNobody(["get", "doc-1"]).status == 0)
        #expect(try asNobody(["check"]).status == 0)
        for write in [["put", "doc-9", "{}"], ["remove", "doc-1"], ["compact"], ["import", input]] {
            let result = try asNobody(write)
            #expect(result.status == 1, "\(write): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderrText.contains(sandbox.data), "\(write): \(result)")
        }
        #expect(sameSnapshot(before, snapshot(sandbox.data)), "a write by another user changed the folder")
    }
}

/// Mounting for the fault tests (root only).
enum Mounts {
    /// Whether this process can mount (root, with `mount` at hand): probed once with a tmpfs.
    static let available: Bool = {
        guard getuid() == 0, let probe = try? TemporaryFolder() else { return false }
        defer { probe.remove() }
        guard (try? tmpfs(at: probe.root, kilobytes: 64)) != nil else { return false }
        unmount(probe.root)
        return true
    }()

    /// Runs a command and fails with its output when it exits non-zero.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(arguments.joined(separator: " ")): \(output)"])
        }
        return output
    }

    static func tmpfs(at path: String, kilobytes: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try run(["mount", "-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
    }

    static func resize(_ path: String, kilobytes: Int) throws {
        try run(["mount", "-o", "remount,size=\(kilobytes)k", path])
    }

    static func bindReadOnly(_ source: String, at path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try run(["mount", "--bind", source, path])
        try run(["mount", "-o", "remount,ro,bind", path])
    }

    static func unmount(_ path: String) {
        _ = try? run(["umount", path])
    }
}
