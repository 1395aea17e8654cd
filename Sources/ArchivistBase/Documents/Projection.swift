/// The fields copied from each document into the index, by dotted key path.
///
/// A path that crosses an array (`keywords.value`) projects the array of every value found; a path
/// that finds nothing is left out.
public struct Projection: Sendable, Equatable {
    /// The dotted paths, sorted.
    public let paths: [String]
    /// The paths written last in an index line (long text or lists), so reading a short field
    /// stops early in each line. Not a part of the folder's record: the schema supplies it.
    public let longPaths: Set<String>
    let components: [[String]]

    /// A projection of these paths (sorted and deduplicated), the `longPaths` among them last.
    public init(paths: [String], longPaths: Set<String> = []) {
        let unique = Array(Set(paths)).sorted { JSONValue.keyPrecedes($0, $1) }
        self.paths = unique
        self.longPaths = longPaths
        self.components = unique.map(FieldPath.components)
    }

    /// The same paths with other long paths.
    package func withLongPaths(_ longPaths: Set<String>) -> Projection {
        Projection(paths: paths, longPaths: longPaths)
    }

    /// The position of a path in `paths`.
    public func position(of path: String) -> Int? {
        paths.firstIndex(of: path)
    }

    /// The projected values of a document, aligned with `paths`: MongoDB's resolution of each
    /// path, kept as the one value found when there is one value that is not an array, and
    /// otherwise as the array of every value found (`keywords.value` gives `["A", "B"]`; a field
    /// that is itself an array `[x]` gives `[[x]]`); nil when nothing is found.
    public func values(of document: JSONValue) -> [JSONValue?] {
        components.map { Projection.project(document, path: $0) }
    }

    /// The values a projected value stands for (the inverse of the rule above).
    @inlinable
    public static func resolvedValues(_ projected: JSONValue?) -> [JSONValue] {
        switch projected {
        case nil: return []
        case .array(let values)?: return values
        case let value?: return [value]
        }
    }

    /// The compact JSON of a document's projected fields, as kept in the index: short fields
    /// first, then the long ones, each group by path.
    public func fieldsJSON(of document: JSONValue) -> [UInt8] {
        let values = self.values(of: document)
        var short: [JSONMember] = []
        var long: [JSONMember] = []
        for (path, value) in zip(paths, values) {
            guard let value else { continue }
            if longPaths.contains(path) {
                long.append(JSONMember(key: path, value: value))
            } else {
                short.append(JSONMember(key: path, value: value))
            }
        }
        return JSONWriter.compactBytes(.object(short + long))
    }

    static func project(_ document: JSONValue, path: [String]) -> JSONValue? {
        let found = document.values(atPath: path)
        if found.isEmpty { return nil }
        if found.count == 1, !(found[0].isArray) { return found[0] }
        return .array(found)
    }
}
