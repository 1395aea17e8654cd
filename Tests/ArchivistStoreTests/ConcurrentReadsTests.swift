import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistStore

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Reading many files at once (`ConcurrentReads`) and in the order the disk holds them
/// (`inodeEntries`): what `check`, `export` and `repair` read documents with.
@Suite("concurrent reads: results in order, several reads in flight, folders listed with inodes")
struct ConcurrentReadsTests {
    @Test("map returns each body's result in the order of its index", arguments: [0, 1, 2, 17, 1_000])
    func resultsInOrder(count: Int) {
        let results = ConcurrentReads(width: 4).map(count) { $0 * 3 }
        #expect(results == (0..<count).map { $0 * 3 })
    }

    @Test("bodies that wait overlap: eight 50 ms waits on eight lanes take far less than 400 ms")
    func waitsOverlap() {
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let start = Date()
        _ = ConcurrentReads(width: 8).map(8) { _ in
            let now = running.add(1, ordering: .relaxed).newValue
            var seen = most.load(ordering: .relaxed)
            while now > seen, !most.compareExchange(expected: seen, desired: now, ordering: .relaxed).exchanged {
                seen = most.load(ordering: .relaxed)
            }
            usleep(50_000)
            running.subtract(1, ordering: .relaxed)
        }
        #expect(Date().timeIntervalSince(start) < 0.3)
        #expect(most.load(ordering: .relaxed) > 1)
    }

    @Test("a pool's threads serve one map after another, and maps from two threads at once")
    func poolIsReused() {
        let pool = ConcurrentReads(width: 3)
        for round in 0..<20 { #expect(pool.map(50) { $0 + round } == (0..<50).map { $0 + round }) }
        let results = Mutex<[[Int]]>([])
        let group = DispatchGroup()
        for lane in 0..<2 {
            DispatchQueue.global().async(group: group) {
                let mapped = pool.map(200) { $0 * lane }
                results.withLock { $0.append(mapped) }
            }
        }
        group.wait()
        #expect(results.withLock { $0.count } == 2)
        #expect(results.withLock { $0.allSatisfy { $0.count == 200 } })
    }

    @Test("inodeEntries lists every name with the inode stat gives it")
    func inodesMatchStat() throws {
        let temporary = try TemporaryFolder()
        defer { temporary.remove() }
        let folder = temporary.root
        for index in 0..<40 { try Data("\(index)".utf8).write(to: URL(fileURLWithPath: folder + "/f\(index).json")) }
        let listed = try #require(try POSIXFileSystem().inodeEntries(ofFolder: folder))
        #expect(listed.count == 40)
        for (name, inode) in listed {
            var status = stat()
            #expect(stat(folder + "/" + name, &status) == 0)
            #expect(UInt64(status.st_ino) == inode, "\(name)")
        }
        #expect(try POSIXFileSystem().inodeEntries(ofFolder: folder + "/missing") == nil)
    }
}
