import ArchivistBase
import Foundation
import Testing

@testable import ArchivistStore

/// Requires the store's index and documents to agree (as bbolt's test helper checks a database).
func expectConsistent(_ store: DocumentStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let problems = try store.check()
    #expect(problems.isEmpty, "check found: \(problems.map(\.description))", sourceLocation: sourceLocation)
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
