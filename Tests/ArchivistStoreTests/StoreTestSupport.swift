import ArchivistBase
import Foundation
import Testing

@testable import ArchivistStore

/// A fresh folder under the system temp folder, removed when the test ends.
final class TemporaryFolder {
    let path: String

    init() {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("archivist-store-tests-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var data: String { path + "/data" }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Requires the store's index and documents to agree (as bbolt's test helper checks a database).
func expectConsistent(_ store: DocumentStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let problems = try store.check()
    #expect(problems.isEmpty, "check found: \(problems.map(\.description))", sourceLocation: sourceLocation)
}

/// Parses JSON text in a test.
func json(_ text: String) throws -> JSONValue {
    try JSONParser.parse(text)
}

/// Every file below a folder, relative to it.
func filesBelow(_ folder: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
    var files: [String] = []
    while let item = enumerator.nextObject() as? String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder + "/" + item, isDirectory: &isFolder), !isFolder.boolValue {
            files.append(item)
        }
    }
    return files.sorted()
}

/// The path of a fixture file.
func fixture(_ name: String) -> String {
    Bundle.module.resourceURL!.appendingPathComponent("Fixtures/" + name).path
}
