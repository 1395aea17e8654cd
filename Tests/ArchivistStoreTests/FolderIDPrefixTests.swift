import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

/// The ID prefix a folder's file names leave out is the folder's (`archivist.json`), not the
/// schema's of whoever opens it: every schema finds the same files.
@Suite("a folder's ID prefix")
struct FolderIDPrefixTests {
    static let id = "nyt://article/0a1b2c3d-4e5f-6789-abcd-ef0123456789"

    static func schema(prefix: String) -> StoreSchema {
        var schema = StoreSchema.testArticles
        schema.idPrefix = prefix
        return schema
    }

    static func metadata(_ folder: TemporaryFolder) throws -> JSONValue {
        try json(String(decoding: try Data(contentsOf: URL(fileURLWithPath: folder.data + "/archivist.json")), as: UTF8.self))
    }

    @Test("a folder made with one prefix is read by a schema with another, and check finds nothing wrong", arguments: ["", "nyt://"])
    func prefixIsTheFolders(made: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let writer = try DocumentStore(folder: folder.data, schema: Self.schema(prefix: made))
        for result in try writer.upsert([.object([JSONMember(key: "_id", value: .string(Self.id))])]) { _ = try result.outcome.get() }
        let file = FileNames.documentPath(for: Self.id, in: writer.schema)
        #expect(FileManager.default.fileExists(atPath: folder.data + "/" + file))
        #expect(
            file.hasSuffix(
                made.isEmpty
                    ? "/nyt%3a%2f%2farticle%2f0a1b2c3d-4e5f-6789-abcd-ef0123456789.json"
                    : "/article~0a1b2c3d-4e5f-6789-abcd-ef0123456789.json"))
        // Only a prefix other than the one every earlier folder had is written down.
        #expect(try Self.metadata(folder)["id_prefix"] == (made.isEmpty ? .string("") : nil))
        let other = made.isEmpty ? "nyt://" : ""
        let reader = try DocumentStore(folder: folder.data, schema: Self.schema(prefix: other))
        #expect(reader.schema.idPrefix == made)
        #expect(try reader.document(withID: Self.id)?["_id"] == .string(Self.id))
        #expect(try reader.check().isEmpty)
    }

    @Test(
        "an id_prefix that is not a short string is one line naming the file and the member",
        arguments: [#"{"format": 4, "id_prefix": 7}"#, #"{"format": 4, "id_prefix": "\#(String(repeating: "x", count: 65))"}"#])
    func badPrefixRefused(text: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.data + "/archivist.json"))
        #expect {
            _ = try DocumentStore(folder: folder.data, schema: .testArticles)
        } throws: { error in
            let message = "\(error)"
            return message.contains("archivist.json") && message.contains("id_prefix") && !message.contains("\n")
        }
        #expect(try String(contentsOfFile: folder.data + "/archivist.json", encoding: .utf8) == text, "the file is left as it was")
    }
}
