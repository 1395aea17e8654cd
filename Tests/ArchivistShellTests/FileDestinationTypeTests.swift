import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `FileDestination` itself, for the shell's other outputs (the history file), in process: system
/// paths told apart, and special files made in a temporary folder. `FileDestinationTests` (with the
/// tests of the binary) writes through it with `export --to`.
@Suite struct FileDestinationTypeTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    @Test(
        "resolve tells each kind of path apart without changing anything",
        arguments: [
            ("/dev/stdout", FileDestination.Route.descriptor(1)),
            ("/dev/stderr", .descriptor(2)),
            ("/dev/fd/1", .descriptor(1)),
            ("/proc/self/fd/2", .descriptor(2)),
            ("/dev/null", .inPlace(path: "/dev/null", kind: .characterDevice)),
        ])
    func resolvesSystemPaths(path: String, route: FileDestination.Route) throws {
        #expect(try FileDestination.resolve(path).route == route)
    }

    @Test("a history file behind a link is saved through it, and one that is a FIFO is never written")
    func historyThroughLinks() throws {
        let target = sandbox.root + "/history.real"
        let link = sandbox.root + "/history"
        #expect(symlink("history.real", link) == 0)
        #expect(HistoryFile.save(["count", "find x"], to: link))
        #expect(fileKind(link) == S_IFLNK)
        #expect(HistoryFile.load(link) == .entries(["count", "find x"]))
        var status = stat()
        #expect(stat(target, &status) == 0 && status.st_mode & 0o7777 == 0o600)

        let fifo = sandbox.root + "/history.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(!HistoryFile.save(["count"], to: fifo))
        #expect(fileKind(fifo) == S_IFIFO)
    }
}
