/// A sort key: a dotted path, ascending unless descending.
public struct SortKey: Sendable, Equatable {
    /// The dotted path.
    public var path: String
    /// Whether larger values come first.
    public var isDescending: Bool

    /// Creates a sort key.
    public init(_ path: String, descending: Bool = false) {
        self.path = path
        self.isDescending = descending
    }

    /// Parses `FIELD` or `FIELD:desc` / `FIELD:asc`.
    public init?(parsing text: String) {
        var path = text
        var descending = false
        if let colon = text.lastIndex(of: ":") {
            let order = text[text.index(after: colon)...].lowercased()
            guard order == "desc" || order == "asc" else { return nil }
            descending = order == "desc"
            path = String(text[..<colon])
        }
        guard !path.isEmpty else { return nil }
        self.init(path, descending: descending)
    }
}
