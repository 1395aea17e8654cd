import ArchivistBase
import Foundation
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A real PostgreSQL server for tests: a cluster made by `initdb` in a temporary folder, started
/// with `pg_ctl` as the `postgres` user (the server refuses to run as root), listening only on a
/// Unix socket in that folder (no TCP port), and stopped and deleted by `stop()` or at exit.
///
/// The `postgres` role connects without a password; other roles use SCRAM passwords
/// (`pg_hba.conf`: `local all postgres trust`, `local all all scram-sha-256`).
public final class PostgresServer: Sendable {
    /// The cluster's folder (`data/`, the socket, the log).
    public let root: String
    /// The temporary folder that is `root`.
    private let folder: TemporaryFolder
    /// The socket's folder (libpq's `host`).
    public var socketFolder: String { root }
    /// The server's binaries (`/usr/lib/postgresql/15/bin`).
    public let binaries: String
    /// How many databases `makeDatabase()` has made.
    private let databases = Mutex(0)

    /// The folder of the newest installed server's binaries, or nil when there is none (the tests
    /// that need a server are then skipped with a message).
    public static let installedBinaries: String? = {
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let folder = "\(base)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: folder + "/initdb"),
                FileManager.default.isExecutableFile(atPath: folder + "/pg_ctl")
            {
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
        // In /tmp whatever $TMPDIR says: the socket's path must be short (108 bytes at most).
        do { folder = try TemporaryFolder(in: "/tmp") } catch { throw PostgresServerError(message: "\(error)") }
        root = folder.root
        chmod(root, 0o755)
        try PostgresServer.giveToPostgres(root)
        try run(
            [
                binaries + "/initdb", "-D", root + "/data", "-U", "postgres", "--auth-local=trust", "--auth-host=reject", "-E", "UTF8",
                "--locale=C.UTF-8",
            ]
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
        folder.remove()
    }

    /// A libpq connection string for `database` as `user` (the superuser `postgres` by default).
    public func connectionString(database: String = "postgres", user: String = "postgres", password: String? = nil) -> String {
        var words = "host=\(root) dbname=\(database) user=\(user)"
        if let password { words += " password=\(password)" }
        return words
    }

    /// Makes a new empty database (`test_N`) and returns its name.
    public func makeDatabase() throws -> String {
        let name = databases.withLock { databases -> String in
            databases += 1
            return "test_\(databases)"
        }
        try psql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs SQL with `psql` as `postgres` (in `database`) and returns its unaligned output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run(
            [binaries + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", root, "-U", "postgres", "-d", database, "-c", sql],
            asPostgres: false)
    }

    /// Runs a program (as `postgres` when this process is root and `asPostgres`), returning its
    /// standard output; a non-zero exit throws with its standard error.
    ///
    /// posix_spawn and waitpid rather than Foundation's Process: the server that `pg_ctl start`
    /// leaves running must not hold anything the caller waits on, and its output goes to files.
    @discardableResult
    func run(_ arguments: [String], asPostgres: Bool = true) throws -> String {
        let command = asPostgres && geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + arguments : arguments
        let outputPath = root + "/.out-\(UInt64.random(in: 0...UInt64.max))"
        let errorPath = outputPath + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
        // The output files are made by the child, which may run as postgres: the folder is theirs.
        var pid: pid_t = 0
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw PostgresServerError(message: "cannot start \(command[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw PostgresServerError(message: "waitpid: errno \(errno)") }
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            let name = (arguments[0] as NSString).lastPathComponent
            throw PostgresServerError(message: "\(name) exited with \(exited ? code : -(status & 0x7f)): \(errors)")
        }
        return output
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
