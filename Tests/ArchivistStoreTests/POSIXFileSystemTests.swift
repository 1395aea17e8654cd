import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The real file system's own calls.
@Suite struct POSIXFileSystemTests {
    @Test("a folder's listing gives every name, of every length up to 255 bytes, and no more")
    func listingGivesEveryNameOfEveryLength() throws {
        let folder = try TemporaryFolder()
        var expected: Set<String> = []
        for length in 1...255 {
            let name = String(repeating: "n", count: length - 1) + String(length % 10)
            #expect(FileManager.default.createFile(atPath: folder.root + "/" + name, contents: nil))
            expected.insert(name)
        }
        let listed = try #require(try POSIXFileSystem().entries(ofFolder: folder.root))
        #expect(listed.count == expected.count)
        #expect(Set(listed) == expected)
        #expect(Set(listed) == Set(try FileManager.default.contentsOfDirectory(atPath: folder.root)))
        #expect(try POSIXFileSystem().entries(ofFolder: folder.root + "/none") == nil)
    }
}
