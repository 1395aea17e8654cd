import ArchivistStore
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Faults of the machine with the real binary on real mounts: a read-only data folder (a
/// read-only bind mount) and a full disk (a tmpfs of a few hundred KiB). They need root (CI runs as
/// root) and `mount`; elsewhere they are skipped, saying why.
@Suite("the machine's faults: a read-only folder and a full disk", .serialized, .enabled(if: Mounts.available, "needs root and mount"))
struct MachineFaultTests {
    let sandbox: Sandbox

    init() throws {
        sandbox = try Sandbox()
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
}

/// Mounting for the fault tests (root only).
enum Mounts {
    /// Whether this process can mount (root, with `mount` at hand): probed once with a tmpfs.
    static let available: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("archivist-mount-probe-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? tmpfs(at: probe, kilobytes: 64)) != nil else { return false }
        unmount(probe)
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
