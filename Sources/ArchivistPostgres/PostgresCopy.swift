import ArchivistBase
import ArchivistStore
import Foundation

/// The copy of a data folder that `archivist replicate` keeps in PostgreSQL, read as the folder
/// is read: `count`, `find` (sorts, skip, limit), `facet`, timelines, documents by ID, the
/// changes and the checkpoint, with the answers the folder gives (`docs/REPLICATION.md`, "Reading
/// the copy"). Read-only: the session is `default_transaction_read_only`, and every statement
/// takes its values as parameters.
///
/// A filter compiles to SQL (`SQLFilter`) over the typed columns and `doc`; what SQL cannot decide
/// as Archivist does is decided by `Filter.matches` on the rows read back. Each answer is read in
/// one snapshot (a repeatable-read transaction), the checkpoint with it.
///
/// Not thread-safe (one connection): one owner at a time. A connection that broke is made again
/// by the next call, which is tried once more when the connection broke under it.
public final class PostgresCopy {
    /// The checkpoint row of the copy, read with each answer.
    public struct Checkpoint: Sendable, Equatable {
        /// The folder the copy is made from (its path on the machine that replicates).
        public var folder: String
        /// The folder's feed start when the copy was made.
        public var feedStart: Int
        /// The last change applied.
        public var lastSequence: Int
        /// The table's rows.
        public var rows: Int
        /// The typed columns.
        public var columns: [ReplicaColumn]
        /// When the checkpoint last moved (ISO 8601, UTC).
        public var updatedAt: String
        /// Seconds since it moved, by the server's clock.
        public var age: Double
    }

    /// Where the copy is.
    public let address: CopyAddress
    /// The server.
    public let info: ConnectionInfo
    /// The fields a full-text search reads, with their weights (the folder's schema).
    public let textSearch: TextSearch
    /// The checkpoint as last read.
    public private(set) var checkpoint: Checkpoint
    private var connection: PostgresConnection?

    /// The table.
    public var table: TableName { address.table }
    /// The copy as messages show it: the server without password, and the table.
    public var display: String { "\(info.display) table \(table)" }

    /// Connects to the copy at `address` and reads its checkpoint; fails with one line when the
    /// server cannot be reached or the table is not a copy `replicate` made.
    public init(address: CopyAddress, textSearch: TextSearch) throws(PostgresError) {
        self.address = address
        self.info = try ConnectionInfo(address.connection)
        self.textSearch = textSearch
        self.checkpoint = Checkpoint(folder: "", feedStart: 0, lastSequence: 0, rows: 0, columns: [], updatedAt: "", age: 0)
        let connection = try connect()
        checkpoint = try Self.readCheckpoint(connection, table: address.table)
    }

    deinit { connection?.close() }

    /// Closes the connection (the next call makes another).
    public func close() {
        connection?.close()
        connection = nil
    }

    /// A new connection in a read-only session.
    private func connect() throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection(info)
        try connection.execute("SET default_transaction_read_only TO on", doing: "opening \(table) read-only")
        self.connection = connection
        return connection
    }

    /// The checkpoint table of the copy's schema.
    static func catalog(_ table: TableName) -> String { table.qualified("archivist_replicas") }

    /// Reads the checkpoint of `table`; a table without one is not a copy.
    static func readCheckpoint(
        _ connection: PostgresConnection, table: TableName, looking: Bool = true
    ) throws(PostgresError)
        -> Checkpoint
    {
        if looking {
            let catalogName = table.schema.map { TableName.quote($0) + ".archivist_replicas" } ?? "archivist_replicas"
            let found = try connection.execute(
                "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL", [catalogName, table.sql],
                doing: "looking for the copy \(table)")
            guard found.values.first?[0] == "t" else {
                throw .unusableTable(
                    table: table.description, reason: "no archivist_replicas checkpoint table here: not a copy 'archivist replicate' made")
            }
            guard found.values.first?[1] == "t" else {
                throw .unusableTable(table: table.description, reason: "no such table (give ?table=NAME)")
            }
        }
        let rows = try connection.execute(
            """
            SELECT folder, feed_start, last_seq, rows, columns::text, loaded,
                   to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   extract(epoch FROM now() - updated_at)
            FROM \(catalog(table)) WHERE table_name = $1
            """, [table.name], doing: "reading the checkpoint of \(table)")
        guard let row = rows.values.first else {
            throw .unusableTable(table: table.description, reason: "no copy of that name in archivist_replicas (give ?table=NAME)")
        }
        guard row[5] == "t" else {
            throw .unusableTable(table: table.description, reason: "its initial load has not finished")
        }
        var columns: [ReplicaColumn] = []
        if let text = row[4], case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) {
            columns = items.compactMap(ReplicaColumn.init(json:))
        }
        return Checkpoint(
            folder: row[0] ?? "", feedStart: Int(row[1] ?? "") ?? 0, lastSequence: Int(row[2] ?? "") ?? 0, rows: Int(row[3] ?? "") ?? 0,
            columns: columns, updatedAt: row[6] ?? "", age: Double(row[7] ?? "") ?? 0)
    }

    /// Runs `body` in one read-only snapshot with the checkpoint read in it; a connection lost
    /// (the server restarted, the network dropped) is made again and the read tried once more.
    func snapshot<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        var attempts = 0
        while true {
            attempts += 1
            do {
                let connection: PostgresConnection
                if let open = self.connection, open.isOpen { connection = open } else { close(); connection = try connect() }
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", doing: "reading \(table)")
                do {
                    // Read again in the snapshot, even just after the open: the typed columns'
                    // promises (`ReplicaColumn.holdsEveryValue`) must be those of the rows read.
                    checkpoint = try Self.readCheckpoint(connection, table: table, looking: false)
                    let result = try body(connection)
                    try connection.execute("COMMIT", doing: "reading \(table)")
                    return result
                } catch {
                    if connection.isOpen { _ = try? connection.execute("ROLLBACK", doing: "ending a read of \(table)") }
                    throw error
                }
            } catch let error as PostgresError where error.isTransient && attempts < 2 {
                close()
                continue
            }
        }
    }

    /// Runs `sql` with those of `parameters` it names (see `SQLFilter.bind`).
    @discardableResult
    func run(
        _ connection: PostgresConnection, _ sql: String, _ parameters: [String?], doing: String
    ) throws(PostgresError)
        -> PostgresConnection.Rows
    {
        let bound = SQLFilter.bind(sql, parameters)
        if Self.tracesSQL {
            FileHandle.standardError.write(Data("sql: \(bound.sql) -- \(bound.parameters.map { $0 ?? "NULL" })\n".utf8))
        }
        return try connection.execute(bound.sql, bound.parameters, doing: doing)
    }

    /// Whether each statement a read runs is printed on stderr with its parameters
    /// (`ARCHIVIST_TRACE_SQL=1`): what to give `EXPLAIN` when an answer is slow.
    static let tracesSQL = ProcessInfo.processInfo.environment["ARCHIVIST_TRACE_SQL"] == "1"

    /// A compiler of filters over the copy's typed columns.
    var compiler: SQLFilter { SQLFilter(columns: checkpoint.columns) }

    /// The typed column of a path.
    func column(_ path: String) -> ReplicaColumn? {
        checkpoint.columns.first { $0.path == path }
    }
}
