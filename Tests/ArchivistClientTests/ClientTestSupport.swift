import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

extension TemporaryFolder {
    /// A store in the data folder, with the NYT schema.
    func store() throws -> DocumentStore {
        try DocumentStore(folder: data, schema: .nyt)
    }
}

/// The bytes of a file, or nil when it cannot be read.
func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// Writes `text` to `path`.
func writeFile(_ path: String, _ text: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Writes `contents` as the side file `name` of a store in a fresh folder, runs `body` with the
/// store and the file's path, then expects the file to be unchanged.
func withSideFile(_ name: String, contents: String, _ body: (DocumentStore, String) throws -> Void) throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let store = try folder.store()
    let path = store.sideFilePath(named: name)
    try writeFile(path, contents)
    let before = try #require(fileBytes(path))
    try body(store, path)
    #expect(fileBytes(path) == before)
}

/// The storage error `body` fails with, whose message must start with `path`; an issue naming
/// `operation` is recorded (and nil returned) when it does not fail, or fails otherwise.
@discardableResult
func expectStorageError(naming path: String, _ operation: String, _ body: () throws -> Void) -> StoreError? {
    do {
        try body()
        Issue.record("\(operation): expected an error")
    } catch {
        guard let error = error as? ClientError, case .storage(let storeError) = error else {
            Issue.record("\(operation): expected .storage, got \(error)")
            return nil
        }
        #expect(error.errorDescription?.hasPrefix(path + ": ") == true, "\(operation): \(error.errorDescription ?? "")")
        return storeError
    }
    return nil
}

/// The `response.docs` array of an API body; a body without one fails the test.
func responseDocs(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSONValue] {
    var docs: [JSONValue]?
    if case .array(let array)? = try JSONParser.parse(body)["response"]?["docs"] { docs = array }
    return try #require(docs, "the body has no response.docs array", sourceLocation: sourceLocation)
}

/// An article read from a document written in a test.
func article(_ text: String) throws -> Article {
    try Article(document: json(text), path: "response.docs[0]")
}

/// The instant of a UTC date and time, for expectations.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
    let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    return calendar.date(from: components) ?? Date(timeIntervalSince1970: .nan)
}
