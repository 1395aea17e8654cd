import CLibPQ
import Foundation

/// A libpq connection string (a `postgresql://` URI or `key=value` words; empty for libpq's own
/// variables: `PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`, `PGSERVICE`, `PGSSLMODE`, `~/.pgpass`), and
/// how it is shown in messages: the server without its password.
public struct ConnectionInfo: Sendable, Equatable {
    /// The string handed to libpq, as given (it may hold a password: never printed).
    public let string: String
    /// The server as messages show it: `postgresql://user@host:port/db`, never a password.
    public let display: String
    /// The passwords the string and the environment hold, removed from any text shown.
    let secrets: [String]

    /// Parses `string` with libpq's own parser; a string that does not parse fails with libpq's
    /// reason, passwords removed.
    public init(_ string: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresError) {
        let pq = try PostgresLibrary.shared().functions
        var values: [String: String] = [:]
        var failure: UnsafeMutablePointer<CChar>?
        guard let options = pq.PQconninfoParse!(string, &failure) else {
            let reason = failure.map { String(cString: $0) } ?? "it does not parse"
            if let failure { pq.PQfreemem!(failure) }
            let secrets = ConnectionInfo.passwords(in: string, environment: environment, parsed: [:])
            throw .invalidConnectionString(reason: ConnectionInfo.redact(ConnectionInfo.firstLine(reason), secrets: secrets))
        }
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        pq.PQconninfoFree!(options)
        self.string = string
        self.secrets = ConnectionInfo.passwords(in: string, environment: environment, parsed: values)
        func pick(_ key: String, _ variable: String) -> String? {
            values[key].flatMap { $0.isEmpty ? nil : $0 } ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        let host = pick("host", "PGHOST") ?? pick("hostaddr", "PGHOSTADDR") ?? "/var/run/postgresql"
        let user = pick("user", "PGUSER") ?? (environment["USER"] ?? "")
        let port = pick("port", "PGPORT") ?? "5432"
        let database = pick("dbname", "PGDATABASE") ?? user
        self.display = ConnectionInfo.describe(
            host: host, port: port, user: user, database: database, service: pick("service", "PGSERVICE"))
    }

    /// `postgresql://user@host:port/db`, with a socket folder written as psql shows it in `\conninfo`.
    static func describe(host: String, port: String, user: String, database: String, service: String? = nil) -> String {
        if let service { return "service \(service)" }
        let place = host.hasPrefix("/") ? "[socket \(host)]" : host
        return "postgresql://\(user.isEmpty ? "" : user + "@")\(place):\(port)/\(database)"
    }

    /// Every password the string (URI user info, `password=` keyword) or `PGPASSWORD` holds.
    static func passwords(in string: String, environment: [String: String], parsed: [String: String]) -> [String] {
        var found: [String] = []
        if let password = parsed["password"], !password.isEmpty { found.append(password) }
        if let password = environment["PGPASSWORD"], !password.isEmpty { found.append(password) }
        // A URI that does not parse: take what sits between "user:" and "@" as the password.
        if let scheme = string.range(of: "://"), let at = string[scheme.upperBound...].firstIndex(of: "@") {
            let userInfo = string[scheme.upperBound..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                let password = String(userInfo[userInfo.index(after: colon)...])
                if !password.isEmpty {
                    found.append(password)
                    found.append(password.removingPercentEncoding ?? password)
                }
            }
        }
        if let range = string.range(of: "password=") {
            let rest = string[range.upperBound...]
            let word = rest.prefix { $0 != " " && $0 != "&" }
            if !word.isEmpty { found.append(String(word).trimmingCharacters(in: CharacterSet(charactersIn: "'"))) }
        }
        return found.sorted { $0.count > $1.count }
    }

    /// `text` with every password replaced by `REDACTED`, and the connection string itself shown as
    /// its display form when it appears.
    func redact(_ text: String) -> String {
        var clean = text
        if !string.isEmpty { clean = clean.replacingOccurrences(of: string, with: display) }
        return ConnectionInfo.redact(clean, secrets: secrets)
    }

    static func redact(_ text: String, secrets: [String]) -> String {
        var clean = text
        for secret in secrets where secret.count >= 1 { clean = clean.replacingOccurrences(of: secret, with: "REDACTED") }
        return clean
    }

    /// libpq's messages end in a newline and may hold several lines: one line, trimmed.
    static func firstLine(_ text: String) -> String {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return lines.joined(separator: "; ")
    }
}
