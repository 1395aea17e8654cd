/// The name of the copy's table, `NAME` or `SCHEMA.NAME`: plain SQL identifiers only, always
/// quoted when written into SQL, so no name can change a statement.
public struct TableName: Sendable, Equatable, CustomStringConvertible {
    /// The schema, or nil for the first of the role's `search_path` (its own schema, then public).
    public let schema: String?
    /// The table's name.
    public let name: String

    /// The name `replicate` uses when none is given.
    public static let standard = try! TableName("articles")

    /// Parses `text`; fails unless each part is a letter or `_` followed by letters, digits and
    /// `_`, at most 40 bytes (the indexes' names add to it, and PostgreSQL keeps 63).
    public init(_ text: String) throws(PostgresError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), parts.allSatisfy(TableName.isPlain) else { throw .invalidTableName(text) }
        schema = parts.count == 2 ? parts[0] : nil
        name = parts.last!
    }

    private static func isPlain(_ part: String) -> Bool {
        guard let first = part.utf8.first, part.utf8.count <= 40 else { return false }
        let letter = { (byte: UInt8) in (byte >= 97 && byte <= 122) || (byte >= 65 && byte <= 90) || byte == 95 }
        return letter(first) && part.utf8.allSatisfy { letter($0) || ($0 >= 48 && $0 <= 57) }
    }

    /// As typed.
    public var description: String { schema.map { "\($0).\(name)" } ?? name }

    /// The quoted, qualified name for SQL.
    public var sql: String { qualified(name) }

    /// Another relation of the same schema (`articles__load`, `articles_pub_date`), quoted.
    func qualified(_ relation: String) -> String {
        schema.map { TableName.quote($0) + "." + TableName.quote(relation) } ?? TableName.quote(relation)
    }

    /// `"name"`, with any `"` doubled.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
