import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Letting a mapping's pages go (`FileBytes.dropResidentPages`), which `check` and the merges
/// rely on to keep what they read out of their memory. Other tests map files in the same process
/// at the same time, so the mapping's own pages are read from `/proc/self/smaps`.
@Suite("resident pages of a mapping")
struct FileBytesTests {
    #if os(Linux)
    /// The resident bytes of the mapping that starts at `address` (`/proc/self/smaps`).
    static func residentBytes(ofMappingAt address: UInt) throws -> Int {
        // Read to the end (the file's size is 0, which a read of its stated size would trust).
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try #require(try handle.readToEnd()), as: UTF8.self)
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            let first = line.prefix { $0 != " " }
            if let dash = first.firstIndex(of: "-"), let start = UInt(first[..<dash], radix: 16) {
                inMapping = start == address
            } else if inMapping, line.hasPrefix("Rss:") {
                return (Int(line.split(separator: " ")[1]) ?? 0) * 1_024
            }
        }
        throw CocoaError(.fileReadUnknown)
    }

    @Test("reading a mapped file makes its pages resident, and letting them go takes them off")
    func mappingPagesComeAndGo() throws {
        let folder = try TemporaryFolder()
        let path = folder.root + "/mapped"
        let size = 32 << 20
        try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: path))
        let mapping = try #require(try POSIXFileSystem().mappedContentsForRandomReads(of: path))
        #expect(mapping.isMapped)
        let address = UInt(bitPattern: try #require(mapping.buffer.baseAddress))
        var sum = 0
        for offset in stride(from: 0, to: size, by: 4_096) { sum &+= Int(mapping.buffer[offset]) }
        #expect(sum == 7 * size / 4_096)
        let read = try Self.residentBytes(ofMappingAt: address)
        #expect(read == size, "after reading every page: \(read) of \(size) bytes resident")
        mapping.dropResidentPages()
        #expect(try Self.residentBytes(ofMappingAt: address) == 0)
    }
    #endif
}
