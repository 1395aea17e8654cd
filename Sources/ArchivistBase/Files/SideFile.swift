/// A small JSON file of the data folder read as one object (`archivist.json`, and the side files
/// of the store's users), with errors in one style that name the file and the key path:
/// `data/searches.json: searches.jury.from: '2020-13-01' is not a YYYY-MM-DD date`.
public struct SideFile: Sendable {
    /// The file's path, as messages show it.
    public let path: String
    /// The members of the file's top-level object.
    public let root: JSONValue

    /// Parses a file's bytes; refuses anything but a JSON object.
    public init(_ bytes: [UInt8], path: String) throws(StoreError) {
        self.path = path
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw .invalidJSON(path: path, error: error)
        }
        guard root.isObject else { throw .invalidFile(path: path, reason: "expected a JSON object, found \(root.typeName)") }
    }

    /// The value at a top-level key, or nil.
    public subscript(key: String) -> JSONValue? { root[key] }

    /// The error for a bad value at `keyPath` (dotted, from the top: `searches.jury.from`).
    public func invalid(_ keyPath: String, _ reason: String) -> StoreError {
        .invalidFile(path: path, reason: keyPath.isEmpty ? reason : "\(keyPath): \(reason)")
    }
}
