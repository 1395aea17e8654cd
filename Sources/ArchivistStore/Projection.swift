/// The fields copied from each document into the index, by dotted key path.
///
/// A path that crosses an array (`keywords.value`) projects the array of every value found; a path
/// that finds nothing is left out.
public struct Projection: Sendable, Equatable {
    /// The dotted paths, sorted.
    public let paths: [String]
    let components: [[String]]

    /// A projection of these paths (sorted and deduplicated).
    public init(paths: [String]) {
        let unique = Array(Set(paths)).sorted { JSONValue.keyPrecedes($0, $1) }
        self.paths = unique
        self.components = unique.map { $0.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The fields queries on NYT articles use, and the text full-text search reads.
    public static let nytDefault = Projection(paths: [
        "pub_date", "section_name", "news_desk", "document_type", "type_of_material",
        "headline.main", "byline.original", "word_count", "web_url", "keywords.value",
        "abstract", "snippet", "lead_paragraph",
    ])

    /// The position of a path in `paths`.
    public func position(of path: String) -> Int? {
        paths.firstIndex(of: path)
    }

    /// The projected values of a document, aligned with `paths`.
    public func values(of document: JSONValue) -> [JSONValue?] {
        components.map { Projection.project(document, path: $0[...]) }
    }

    /// The projected values as an object keyed by path (missing ones left out).
    public func object(from values: [JSONValue?]) -> JSONValue {
        var members: [JSONMember] = []
        for (path, value) in zip(paths, values) {
            if let value { members.append(JSONMember(key: path, value: value)) }
        }
        return .object(members)
    }

    /// The compact JSON of a document's projected fields, as kept in the index.
    public func fieldsJSON(of document: JSONValue) -> [UInt8] {
        JSONWriter.compactBytes(object(from: values(of: document)))
    }

    static func project(_ value: JSONValue, path: ArraySlice<String>) -> JSONValue? {
        guard let key = path.first else { return value }
        switch value {
        case .object:
            guard let child = value[key] else { return nil }
            return project(child, path: path.dropFirst())
        case .array(let elements):
            var found: [JSONValue] = []
            for element in elements {
                guard case .object = element, let child = element[key],
                      let projected = project(child, path: path.dropFirst()) else { continue }
                if case .array(let inner) = projected, path.count > 1 {
                    found.append(contentsOf: inner)
                } else {
                    found.append(projected)
                }
            }
            return found.isEmpty ? nil : .array(found)
        default:
            return nil
        }
    }
}
