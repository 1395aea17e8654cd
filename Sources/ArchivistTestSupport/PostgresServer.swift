import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A real PostgreSQL server for tests: a cluster made by `initdb` in a temporary folder, started
/// with `pg_ctl` as the `postgres` user (the server refuses to run as root), listening only on a
/// Unix socket in that folder (no TCP port), and stopped and deleted by `stop()` or at exit.
///
/// The `postgres` role connects without a password; other roles use SCRAM passwords
/// (`pg_hba.conf`: `local all postgres trust`, `local all all scram-sha-256`).
public final class PostgresServer: @unchecked Sendable {
    /// The cluster's folder (`data/`, the socket, the log).
    public let root: String
    /// The socket's folder (libpq's `host`).
    public var socketFolder: String { root }
    /// The server's binaries (`/usr/lib/postgresql/15/bin`).
    public let binaries: String
    private let lock = NSLock()
    private var databases = 0

    /// The folder of the newest installed server's binaries, or nil when there is none (the tests
    /// that need a server are then skipped with a message).
    public static let installedBinaries: String? = {
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let folder = "\(base)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: folder + "/initdb"), FileManager.default.isExecutableFile(atPath: folder + "/pg_ctl") {
                return folder
            }
        }
        return nil
    }()

    /// Whether a server can be started here.
    public static var isAvailable: Bool { installedBinaries != nil }

    /// One server for a whole test process, started on first use; tests make their own databases
    /// in it (`makeDatabase()`).
    public static let shared: Result<PostgresServer, PostgresServerError> = {
        do {
            let server = try PostgresServer()
            sharedForExit = server
            atexit { PostgresServer.sharedForExit?.stop() }
            return .success(server)
        } catch let error as PostgresServerError {
            return .failure(error)
        } catch {
            return .failure(PostgresServerError(message: "\(error)"))
        }
    }()

    nonisolated(unsafe) private static var sharedForExit: PostgresServer?

    /// Makes a cluster in a new temporary folder and starts it.
    public init() throws {
        guard let binaries = PostgresServer.installedBinaries else {
            throw PostgresServerError(message: "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql-15)")
        }
        self.binaries = binaries
        var template = Array("/tmp/archivist-pg-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PostgresServerError(message: "mkdtemp failed: errno \(errno)")
        }
        root = String(cString: made)
        chmod(root, 0o755)
        try PostgresServer.giveToPostgres(root)
        try run(
            [binaries + "/initdb", "-D", root + "/data", "-U", "postgres", "--auth-local=trust", "--auth-host=reject", "-E", "UTF8", "--locale=C.UTF-8"]
        )
        let hba = "local all postgres trust\nlocal all all scram-sha-256\n"
        try hba.write(toFile: root + "/data/pg_hba.conf", atomically: false, encoding: .utf8)
        try PostgresServer.giveToPostgres(root + "/data/pg_hba.conf")
        try start()
    }

    /// Starts the server (again, after `stopImmediately()`), waiting until it accepts connections.
    public func start() throws {
        try run([
            binaries + "/pg_ctl", "-D", root + "/data", "-l", root + "/log", "-w", "-t", "60", "-o",
            "-c listen_addresses='' -c unix_socket_directories='\(root)' -c fsync=off -c full_page_writes=off -c max_connections=60",
            "start",
        ])
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`): the next start
    /// recovers from its log.
    public func stopImmediately() throws {
        try run([binaries + "/pg_ctl", "-D", root + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// Stops the server and deletes its folder.
    public func stop() {
        _ = try? run([binaries + "/pg_ctl", "-D", root + "/data", "-m", "fast", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A libpq connection string for `database` as `user` (the superuser `postgres` by default).
    public func connectionString(database: String = "postgres", user: String = "postgres", password: String? = nil) -> String {
        var words = "host=\(root) dbname=\(database) user=\(user)"
        if let password { words += " password=\(password)" }
        return words
    }

    /// Makes a new empty database (`test_N`) and returns its name.
    public func makeDatabase() throws -> String {
        let name = lock.withLock { () -> String in
            databases += 1
            return "test_\(databases)"
        }
        try psql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL with `psql` as `postgres` (in `database`) and returns its unaligned output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run([binaries + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", root, "-U", "postgres", "-d", database, "-c", sql], asPostgres: false)
    }

    /// Runs a program (as `postgres` when this process is root and `asPostgres`), returning its
    /// standard output; a non-zero exit throws with its standard error.
    @discardableResult
    func run(_ arguments: [String], asPostgres: Bool = true) throws -> String {
        let process = Process()
        if asPostgres, geteuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both to the end before waiting: a full pipe would block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorBytes = Data()
        group.enter()
        DispatchQueue.global().async {
            errorBytes = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outputBytes = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let name = (arguments[0] as NSString).lastPathComponent
            throw PostgresServerError(
                message: "\(name) exited with \(process.terminationStatus): \(String(decoding: errorBytes, as: UTF8.self))")
        }
        return String(decoding: outputBytes, as: UTF8.self)
    }

    /// Makes `path` the `postgres` user's (when this process is root; else it is already ours).
    static func giveToPostgres(_ path: String) throws {
        guard geteuid() == 0 else { return }
        guard let user = getpwnam("postgres") else {
            throw PostgresServerError(message: "there is no postgres user (the server package makes it)")
        }
        guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
            throw PostgresServerError(message: "chown \(path): errno \(errno)")
        }
    }
}

/// Why a test server could not be made or driven.
public struct PostgresServerError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let message: String

    /// The message.
    public var description: String { message }
}
