import Foundation

/// Where a copy that `replicate` maintains lives: a libpq URI naming the server and database, and
/// the copy's table (`postgresql://host/db?table=NAME`; `articles` without `table`).
public struct CopyAddress: Sendable, Equatable {
    /// The URI handed to libpq: the address without its `table` parameter.
    public let connection: String
    /// The copy's table.
    public let table: TableName

    /// Whether `text` names a PostgreSQL copy rather than a data folder.
    public static func isAddress(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// Parses `postgresql://...[?table=NAME]`; other parameters are libpq's (`sslmode`, `host`
    /// for a socket folder, ...).
    public init(_ text: String) throws(PostgresError) {
        guard CopyAddress.isAddress(text) else {
            throw .invalidConnectionString(reason: "expected postgresql://HOST/DATABASE[?table=NAME]")
        }
        var table = TableName.standard
        guard let question = text.firstIndex(of: "?") else {
            connection = text
            self.table = table
            return
        }
        var kept: [Substring] = []
        for parameter in text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true) {
            if parameter.hasPrefix("table=") {
                let name = String(parameter.dropFirst("table=".count))
                table = try TableName(name.removingPercentEncoding ?? name)
            } else {
                kept.append(parameter)
            }
        }
        connection = String(text[..<question]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
        self.table = table
    }
}
