import ArchivistBase
import ArchivistClient
import Testing

@testable import ArchivistStore

@Suite struct FileNamesTests {
    @Test(arguments: [
        ("nyt://article/5c1b4ea2-7c9d-5c0b-9b2d-7f0d1d1b7a9e", "article~5c1b4ea2-7c9d-5c0b-9b2d-7f0d1d1b7a9e"),
        ("4fd2a0b78eb7c8105d88fd8e", "4fd2a0b78eb7c8105d88fd8e"),
        ("../../etc/passwd", "%2e.%2f..%2fetc%2fpasswd"),
        ("a/b", "a%2fb"),
        ("with space", "with%20space"),
        ("ABC", "%41%42%43"),
        ("abc", "abc"),
        ("ünï", "%c3%bcn%c3%af"),
        (".hidden", "%2ehidden"),
        ("nyt://interactive/x.y", "interactive~x.y"),
        ("nyt://Article/x", "nyt%3a%2f%2f%41rticle%2fx"),
        ("a~b+c%d", "a%7eb%2bc%25d"),
    ])
    func namesAreReadableAndReversible(id: String, stem: String) {
        #expect(FileNames.stem(for: id, in: .nyt) == stem)
        #expect(FileNames.id(forStem: stem, in: .nyt) == id)
    }

    @Test(arguments: [
        "x", "../..", "a/b", "..", ".", "ABC", String(repeating: "é", count: 300), "nyt://article/../../x", "\u{1F600}", "a\\b",
    ])
    func everyDocumentPathStaysInsideItsBucket(id: String) {
        let path = FileNames.documentPath(for: id, in: .nyt)
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(parts[0] == "docs")
        #expect(parts[1].count == 2)
        #expect(!parts[2].hasPrefix("."))
        #expect(parts[2].utf8.count <= 255)
        #expect(parts[2].hasSuffix(".json"))
    }

    @Test func longIDsGetAShortenedNameEndingInAHash() {
        let long = String(repeating: "x", count: 300)
        let other = String(repeating: "x", count: 299) + "y"
        let stem = FileNames.stem(for: long, in: .nyt)
        #expect(stem.utf8.count <= FileNames.maximumStemLength)
        #expect(stem.contains("+"))
        #expect(stem != FileNames.stem(for: other, in: .nyt))
        #expect(FileNames.id(forStem: stem, in: .nyt) == nil)
    }

    @Test func idsDifferingOnlyInCaseGetDifferentFiles() {
        #expect(FileNames.documentPath(for: "Abc", in: .nyt).lowercased() != FileNames.documentPath(for: "abc", in: .nyt).lowercased())
    }

    @Test func foreignNamesAreNotMistakenForDocuments() {
        #expect(FileNames.id(forStem: "README", in: .nyt) == nil)
        #expect(FileNames.id(forStem: ".DS_Store", in: .nyt) == nil)
        #expect(FileNames.id(forStem: "a%2Fb", in: .nyt) == nil)  // not the canonical (lowercase hex) spelling
    }

    @Test func bucketsSpreadIDsEvenly() {
        var counts: [String: Int] = [:]
        for i in 0..<25_600 { counts[FileNames.bucket(for: "doc-\(i)"), default: 0] += 1 }
        #expect(counts.count == 256)
        #expect(counts.values.max()! < 200)  // 100 expected per bucket
    }

    @Test(arguments: [
        "4fd2a0b78eb7c8105d88fd8e", "nyt://article/0c5bb1a5-0000-4000-8000-000000000001", "A/b c", String(repeating: "é", count: 300),
    ])
    func theBucketReadFromADocumentPathIsTheIDsBucket(id: String) {
        #expect(FileNames.bucket(ofDocumentPath: FileNames.documentPath(for: id, in: .nyt)) == FileNames.bucket(for: id))
    }

    @Test func theIDPrefixLeftOutOfFileNamesIsTheSchemas() {
        let notes = StoreSchema(projection: Projection(paths: []), idPrefix: "notes:")
        #expect(FileNames.stem(for: "notes:memo/a.b", in: notes) == "memo~a.b")
        #expect(FileNames.id(forStem: "memo~a.b", in: notes) == "notes:memo/a.b")
        #expect(FileNames.stem(for: "nyt://article/x", in: notes) == "nyt%3a%2f%2farticle%2fx")
        // Without a prefix every ID is escaped whole, and no name with `~` is a document's.
        #expect(FileNames.stem(for: "nyt://article/x", in: .plain) == "nyt%3a%2f%2farticle%2fx")
        #expect(FileNames.stem(for: "article/x", in: .plain) == "article%2fx")
        #expect(FileNames.id(forStem: "article~x", in: .plain) == nil)
    }
}
