import ArchivistBase
import ArchivistStore
import Foundation

extension PostgresCopy {
    /// A row of the copy as `changes` lists it: the change that left the row as it is.
    public struct RowChange: Sendable, Equatable {
        /// Its sequence number in the folder.
        public var sequence: Int
        /// The document's ID.
        public var id: String
        /// `added` when the folder stored the document then (it was first stored by that change),
        /// `removed` for a removal, else `updated`.
        public var kind: String
        /// When the folder committed it.
        public var updatedAt: String
        /// The document.
        public var document: JSONValue?
    }

    /// The document with this ID (as the copy holds it: `jsonb` keeps the folder's values, with
    /// numbers in its own spelling), nil when there is none.
    public func document(withID id: String) throws -> JSONValue? {
        try documents(withIDs: [id])[id]
    }

    /// The documents with these IDs, read at once.
    public func documents(withIDs ids: [String]) throws -> [String: JSONValue] {
        guard !ids.isEmpty else { return [:] }
        return try snapshot { connection in
            let rows = try connection.execute(
                "SELECT id, doc::text FROM \(table.sql) WHERE id = ANY($1::text[])", [ReplicaColumn.arrayLiteral(ids)],
                doing: "reading documents of \(table)")
            var documents: [String: JSONValue] = [:]
            for row in rows.values {
                guard let id = row[0], let text = row[1] else { continue }
                documents[id] = try JSONParser.parse(Array(text.utf8))
            }
            return documents
        }
    }

    /// The changes after sequence number `since`, oldest first, at most `limit`: each row's last
    /// change, and each removal the copy keeps (`TABLE_removed`), with their documents when
    /// `documents` (a removal has none), as the folder's `changes` lists them.
    public func changes(since: Int, limit: Int, documents: Bool = false) throws -> [RowChange] {
        try snapshot { connection in
            let removed = table.schema.map { TableName.quote($0) + "." } ?? ""
            let removals = removed + TableName.quote(table.name + "_removed")
            let kept = try connection.execute("SELECT to_regclass($1) IS NOT NULL", [removals], doing: "reading the changes of \(table)")
            let time = #"to_char(%@ AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#
            var sql = """
                SELECT seq, id, CASE WHEN stored_at = updated_at THEN 'added' ELSE 'updated' END,
                       \(time.replacingOccurrences(of: "%@", with: "updated_at"))\(documents ? ", doc::text" : "")
                FROM \(table.sql) WHERE seq > $1::bigint
                """
            if kept.scalar == "t" {
                sql += """

                    UNION ALL
                    SELECT seq, id, 'removed', \(time.replacingOccurrences(of: "%@", with: "removed_at"))\(documents ? ", NULL" : "")
                    FROM \(removals) WHERE seq > $1::bigint
                    """
            }
            sql += "\nORDER BY 1 LIMIT $2::bigint"
            let rows = try connection.execute(sql, [String(since), String(limit)], doing: "reading the changes of \(table)")
            return try rows.values.map { row in
                RowChange(
                    sequence: Int(row[0] ?? "") ?? 0, id: row[1] ?? "", kind: row[2] ?? "", updatedAt: row[3] ?? "",
                    document: try row.count > 4 ? row[4].map { try JSONParser.parse(Array($0.utf8)) } : nil)
            }
        }
    }

    /// The IDs of every row after `after` in ID order (byte order), at most `limit`: a page of
    /// a listing of the whole copy (`export`).
    public func ids(after: String?, limit: Int) throws -> [String] {
        try snapshot { connection in
            let rows = try connection.execute(
                "SELECT id FROM \(table.sql) WHERE $1::text IS NULL OR id COLLATE \"C\" > $1::text ORDER BY id COLLATE \"C\" LIMIT $2::bigint",
                [after, String(limit)], doing: "listing \(table)")
            return rows.values.compactMap { $0[0] }
        }
    }

    /// The rows of the copy, counted now, and the checkpoint.
    public func statistics() throws -> (rows: Int, checkpoint: Checkpoint) {
        try snapshot { connection in
            let counted = try connection.execute("SELECT count(*) FROM \(table.sql)", doing: "counting the rows of \(table)")
            return (Int(counted.scalar ?? "") ?? 0, checkpoint)
        }
    }
}
