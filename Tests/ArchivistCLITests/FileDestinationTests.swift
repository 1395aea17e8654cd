import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `export --to` and every other path a user names for output (`FileDestination`): a regular file
/// is replaced whole, a device, FIFO or socket is written in place and stays what it is, a
/// symbolic link is followed and stays a link. The real binary, on real special files made in a
/// temporary folder (a device node needs root: `mknod`).
@Suite("output destinations: devices, FIFOs, sockets and links are written through, never replaced")
struct FileDestinationTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
        for (id, n) in [("a", 1), ("b", 2), ("c", 3)] {
            let put = try sandbox.run(["put", id, #"{"n": \#(n)}"#])
            try #require(put.status == 0, "\(put)")
        }
    }

    /// What `export` writes on standard output.
    static let exported = #"{"_id":"a","n":1}"# + "\n" + #"{"_id":"b","n":2}"# + "\n" + #"{"_id":"c","n":3}"# + "\n"

    /// glibc's makedev(3) for small numbers (a macro Swift does not import): /dev/null is 1, 3.
    static func device(major: UInt, minor: UInt) -> dev_t {
        dev_t((major & 0xfff) << 8 | (minor & 0xff))
    }

    @Test(
        "a device node made with mknod gets the bytes and stays a device",
        .enabled(if: getuid() == 0, "mknod needs root"))
    func deviceStaysADevice() throws {
        let device = sandbox.root + "/null"
        try #require(mknod(device, S_IFCHR | 0o666, Self.device(major: 1, minor: 3)) == 0, "mknod: errno \(errno)")
        let result = try sandbox.run(["export", "--to", device])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty)
        var status = stat()
        #expect(lstat(device, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFCHR)
        #expect(status.st_rdev == Self.device(major: 1, minor: 3))
        #expect(tree(sandbox.root).filter { $0.contains(".tmp") }.isEmpty, "a temporary file was left")
    }

    @Test("a FIFO's reader gets the bytes and the FIFO stays a FIFO")
    func fifoGetsTheBytes() throws {
        let fifo = sandbox.root + "/fifo"
        try #require(mkfifo(fifo, 0o644) == 0)
        let received = Mutex<[UInt8]>([])
        let reader = Thread {
            let descriptor = open(fifo, O_RDONLY)
            guard descriptor >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { break }
                received.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
            close(descriptor)
        }
        reader.start()
        let result = try sandbox.run(["export", "--to", fifo], timeout: 30)
        #expect(result.status == 0, "\(result)")
        let deadline = Date().addingTimeInterval(10)
        while received.withLock({ $0.count }) < Self.exported.utf8.count, Date() < deadline { usleep(1_000) }
        #expect(String(decoding: received.withLock { $0 }, as: UTF8.self) == Self.exported)
        #expect(fileKind(fifo) == S_IFIFO)
    }

    @Test("a FIFO without a reader is waited for, as cat waits, and Ctrl-C stops the wait with 130")
    func fifoWithoutReaderStopsAtControlC() throws {
        let fifo = sandbox.root + "/fifo"
        try #require(mkfifo(fifo, 0o644) == 0)
        let running = try sandbox.start(["export", "--to", fifo])
        usleep(500_000)
        #expect(running.process.isRunning, "export did not wait for the FIFO's reader")
        running.signal(SIGINT)
        let result = try running.wait(timeout: 10)
        #expect(result.status == 130, "\(result)")
        #expect(result.stderrLines == ["error: export: interrupted; '\(fifo)' was not written"])
        #expect(fileKind(fifo) == S_IFIFO)
    }

    @Test("a symbolic link's target is replaced with its mode kept, and the link stays a link")
    func linkTargetIsReplaced() throws {
        let target = sandbox.root + "/real.jsonl"
        let link = sandbox.root + "/link.jsonl"
        try sandbox.write("old\n", to: target)
        #expect(chmod(target, 0o640) == 0)
        #expect(symlink("real.jsonl", link) == 0)
        let result = try sandbox.run(["export", "--to", link])
        #expect(result.status == 0, "\(result)")
        #expect(fileKind(link) == S_IFLNK)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == "real.jsonl")
        #expect(String(decoding: sandbox.contents(target) ?? [], as: UTF8.self) == Self.exported)
        var status = stat()
        #expect(stat(target, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o640)
        #expect(tree(sandbox.root).filter { $0.contains(".tmp") }.isEmpty, "a temporary file was left")
    }

    @Test("a chain of links to a FIFO writes the FIFO, and a dangling link creates its target")
    func linkChains() throws {
        let fifo = sandbox.root + "/fifo"
        try #require(mkfifo(fifo, 0o644) == 0)
        try FileManager.default.createDirectory(atPath: sandbox.root + "/sub", withIntermediateDirectories: true)
        #expect(symlink("../fifo", sandbox.root + "/sub/one") == 0)
        #expect(symlink("sub/one", sandbox.root + "/two") == 0)
        let received = Mutex<[UInt8]>([])
        let reader = Thread {
            let descriptor = open(fifo, O_RDONLY)
            guard descriptor >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { break }
                received.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
            close(descriptor)
        }
        reader.start()
        #expect(try sandbox.run(["export", "--to", sandbox.root + "/two"], timeout: 30).status == 0)
        let deadline = Date().addingTimeInterval(10)
        while received.withLock({ $0.count }) < Self.exported.utf8.count, Date() < deadline { usleep(1_000) }
        #expect(String(decoding: received.withLock { $0 }, as: UTF8.self) == Self.exported)
        #expect(fileKind(fifo) == S_IFIFO)
        #expect(fileKind(sandbox.root + "/two") == S_IFLNK)

        let dangling = sandbox.root + "/dangling"
        #expect(symlink("created.jsonl", dangling) == 0)
        #expect(try sandbox.run(["export", "--to", dangling]).status == 0)
        #expect(fileKind(dangling) == S_IFLNK)
        #expect(String(decoding: sandbox.contents(sandbox.root + "/created.jsonl") ?? [], as: UTF8.self) == Self.exported)
    }

    @Test("/dev/stdout is standard output as the caller opened it: a pipe, or a file opened to append")
    func standardOutput() throws {
        let piped = try sandbox.run(["export", "--to", "/dev/stdout"])
        #expect(piped.status == 0, "\(piped)")
        #expect(piped.stdoutText == Self.exported)
        // The harness's stdout file, appended to by a shell: the earlier text stays.
        let log = sandbox.root + "/log"
        try sandbox.write("earlier\n", to: log)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec \"$0\" --data \"$1\" export --to /dev/stdout >> \"$2\"", try CLI.binary(), sandbox.data, log]
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        #expect(String(decoding: sandbox.contents(log) ?? [], as: UTF8.self) == "earlier\n" + Self.exported)
        #expect(fileKind(log) == S_IFREG)
    }

    @Test("a Unix socket is connected to and gets the bytes")
    func socketGetsTheBytes() throws {
        let path = sandbox.root + "/sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 1) == 0, "bind: errno \(errno)")
        let received = Mutex<[UInt8]>([])
        let reader = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(connection, &buffer, buffer.count)
                if count <= 0 { break }
                received.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
            close(connection)
        }
        reader.start()
        let result = try sandbox.run(["export", "--to", path], timeout: 30)
        #expect(result.status == 0, "\(result)")
        let deadline = Date().addingTimeInterval(10)
        while received.withLock({ $0.count }) < Self.exported.utf8.count, Date() < deadline { usleep(1_000) }
        #expect(String(decoding: received.withLock { $0 }, as: UTF8.self) == Self.exported)
        #expect(fileKind(path) == S_IFSOCK)
    }

    @Test(
        "a folder, a missing folder or a file in a folder's place is a one-line error that writes nothing",
        arguments: [
            ("", "is a folder, not a file"),
            ("/missing/out.jsonl", "folder {root}/missing does not exist"),
            ("/plain/out.jsonl", "{root}/plain is not a folder"),
            ("/loop", "too many levels of symbolic links"),
        ])
    func refusedDestinations(suffix: String, message: String) throws {
        try sandbox.write("x", to: sandbox.root + "/plain")
        #expect(symlink("loop", sandbox.root + "/loop") == 0)
        let before = tree(sandbox.root).filter { !$0.hasPrefix("io/") && !$0.hasPrefix("data/") }
        let destination = sandbox.root + suffix
        let result = try sandbox.run(["export", "--to", destination])
        #expect(result.status == 1)
        let expected = "error: export: \(destination): " + message.replacingOccurrences(of: "{root}", with: sandbox.root)
        #expect(result.stderrLines == [expected])
        #expect(tree(sandbox.root).filter { !$0.hasPrefix("io/") && !$0.hasPrefix("data/") } == before)
    }

    @Test("a regular file is replaced whole: its mode kept, no temporary file left, and a new one made with 0644")
    func regularFileIsReplaced() throws {
        let target = sandbox.root + "/out.jsonl"
        try sandbox.write("old contents\n", to: target)
        #expect(chmod(target, 0o600) == 0)
        let inode = fileFacts(target)?.inode
        #expect(try sandbox.run(["export", "--to", target]).status == 0)
        #expect(String(decoding: sandbox.contents(target) ?? [], as: UTF8.self) == Self.exported)
        #expect(fileFacts(target)?.inode != inode, "the file was written in place, not replaced")
        var status = stat()
        #expect(stat(target, &status) == 0 && status.st_mode & 0o7777 == 0o600)

        let fresh = sandbox.root + "/fresh.jsonl"
        let previousMask = umask(0o022)
        defer { umask(previousMask) }
        #expect(try sandbox.run(["export", "--to", fresh]).status == 0)
        #expect(stat(fresh, &status) == 0 && status.st_mode & 0o7777 == 0o644)
        #expect(tree(sandbox.root).filter { $0.contains(".tmp") }.isEmpty)
    }
}
