/// Everything talking to PostgreSQL can fail with. Each case names the server (its connection
/// shown without a password), and where the server said so, the SQL state and the table; no case
/// ever carries a password.
public enum PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libpq could not be loaded (not installed, or a version without a function Archivist calls).
    case libraryUnavailable(reason: String)
    /// The connection string does not parse: libpq's reason (with no password in it).
    case invalidConnectionString(reason: String)
    /// The server could not be reached or refused the connection (wrong password, no such
    /// database or role): the server shown without password and libpq's reason.
    case cannotConnect(server: String, reason: String)
    /// A statement failed: the server, the SQL state (`42501`: no rights), what was being done
    /// (naming the table) and the server's message.
    case statement(server: String, sqlState: String, doing: String, message: String)
    /// The connection broke during the work (the server stopped, the network dropped).
    case connectionLost(server: String, doing: String, reason: String)
    /// The table exists but is not one `replicate` made or can use: what is wrong with it.
    case unusableTable(table: String, reason: String)
    /// The copy no longer follows the folder (another folder, an older backup, a feed reset):
    /// what was found, and that `--resync` rebuilds it.
    case copyReset(table: String, reason: String)
    /// Another `replicate` holds the table (PostgreSQL advisory lock).
    case busy(table: String)
    /// A name given for the table is not a plain SQL identifier.
    case invalidTableName(String)
    /// The initial load was stopped (Ctrl-C) before it finished: the old copy, if any, stays.
    case loadStopped(table: String)

    /// A one-line, lowercase message that starts with its subject.
    public var description: String {
        switch self {
        case .libraryUnavailable(let reason):
            return "libpq: \(reason) (on Debian: apt-get install libpq5)"
        case .invalidConnectionString(let reason):
            return "connection string: \(reason)"
        case .cannotConnect(let server, let reason):
            return "\(server): cannot connect: \(reason)"
        case .statement(let server, let sqlState, let doing, let message):
            return "\(server): \(doing): \(message) (SQL state \(sqlState))"
        case .connectionLost(let server, let doing, let reason):
            return "\(server): connection lost while \(doing): \(reason)"
        case .unusableTable(let table, let reason):
            return "table \(table): \(reason)"
        case .copyReset(let table, let reason):
            return "table \(table): \(reason); run 'archivist replicate --resync' to rebuild the copy"
        case .busy(let table):
            return "table \(table): another 'archivist replicate' is copying into it now"
        case .loadStopped(let table):
            return "table \(table): the load was stopped before it finished (the next run starts it again)"
        case .invalidTableName(let name):
            return "--table \(name): expected a plain SQL name (letters, digits and _, not starting with a digit), optionally SCHEMA.NAME"
        }
    }

    /// Whether the error is a lost or refused connection, which a follower rides out by
    /// reconnecting, rather than a mistake that waiting does not fix.
    public var isTransient: Bool {
        switch self {
        case .connectionLost: return true
        case .cannotConnect(_, let reason):
            // A refused socket or a server starting or shutting down comes back; a wrong
            // password or a missing database does not.
            let lowered = reason.lowercased()
            return lowered.contains("no such file") || lowered.contains("connection refused")
                || lowered.contains("starting up") || lowered.contains("shutting down") || lowered.contains("timeout")
                || lowered.contains("server closed") || lowered.contains("terminating connection")
                || lowered.contains("in recovery")
        case .statement(_, let state, _, _):
            // Class 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown,
            // cannot connect now.
            return state.hasPrefix("08") || state.hasPrefix("57P")
        default: return false
        }
    }
}
