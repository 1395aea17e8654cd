import CLibPQ
import Foundation

/// One connection to a PostgreSQL server through libpq: statements with parameters (never values
/// pasted into SQL), `COPY ... FROM STDIN` streams, and errors that name the server without its
/// password, the SQL state and what was being done.
///
/// Not thread-safe (libpq's connections are not): one owner at a time.
public final class PostgresConnection {
    /// The connection's rows: text values (nil for NULL), a row at a time.
    public struct Rows: Sendable, Equatable {
        /// The column names.
        public var columns: [String]
        /// The rows' values as the server writes them in text.
        public var values: [[String?]]
        /// The rows a command affected (`INSERT`, `UPDATE`, `DELETE`), 0 for others.
        public var affected: Int

        /// The first row's first value, or nil.
        public var scalar: String? { values.first?.first ?? nil }
    }

    /// Where the connection goes, shown without password.
    public let info: ConnectionInfo
    private let pq: archivist_pq
    private var handle: OpaquePointer?

    /// The server as messages show it.
    public var server: String { info.display }

    /// Connects (blocking); fails with libpq's reason, one line, no password.
    public init(_ info: ConnectionInfo) throws(PostgresError) {
        self.info = info
        self.pq = try PostgresLibrary.shared().functions
        guard let connection = pq.PQconnectdb!(info.string) else {
            throw .cannotConnect(server: info.display, reason: "out of memory")
        }
        handle = connection
        guard pq.PQstatus!(connection) == CONNECTION_OK else {
            let reason = info.redact(ConnectionInfo.firstLine(cText(pq.PQerrorMessage!(connection))))
            pq.PQfinish!(connection)
            handle = nil
            throw .cannotConnect(server: info.display, reason: reason)
        }
        _ = pq.PQsetNoticeProcessor!(connection, archivist_pq_ignore_notice, nil)
        try execute("SET client_encoding TO 'UTF8'", doing: "setting the client encoding")
        try execute("SET application_name TO 'archivist'", doing: "naming the session")
    }

    deinit { close() }

    /// Closes the connection (again: nothing).
    public func close() {
        if let handle { pq.PQfinish!(handle) }
        handle = nil
    }

    /// Whether the connection is open and usable.
    public var isOpen: Bool {
        guard let handle else { return false }
        return pq.PQstatus!(handle) == CONNECTION_OK
    }

    /// The server's version number (150018 for 15.18).
    public var serverVersion: Int {
        guard let handle else { return 0 }
        return Int(pq.PQserverVersion!(handle))
    }

    /// The connection's socket (for waiting on notifications), or -1.
    public var socket: Int32 {
        guard let handle else { return -1 }
        return pq.PQsocket!(handle)
    }

    /// Runs `sql` with `parameters` ($1, $2, ...: text values, nil for NULL) and returns its rows.
    /// `doing` says what it was for in an error ("creating table articles").
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = [], doing: String) throws(PostgresError) -> Rows {
        let connection = try open(doing: doing)
        let result: OpaquePointer?
        if parameters.isEmpty {
            result = pq.PQexec!(connection, sql)
        } else {
            let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
            defer { for copy in copies { free(copy) } }
            result = copies.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: copies.count) { values in
                    pq.PQexecParams!(connection, sql, Int32(copies.count), nil, values, nil, nil, 0)
                }
            }
        }
        return try rows(of: result, doing: doing)
    }

    /// Streams rows into `COPY ... FROM STDIN` (text format): `write` is handed a sink to send the
    /// encoded rows through; the server's count of rows copied is returned.
    @discardableResult
    public func copy(_ sql: String, doing: String, write: (CopySink) throws(PostgresError) -> Void) throws(PostgresError) -> Int {
        let connection = try open(doing: doing)
        let started = pq.PQexec!(connection, sql)
        guard let started, pq.PQresultStatus!(started) == PGRES_COPY_IN else {
            _ = try rows(of: started, doing: doing)
            throw .statement(server: server, sqlState: "", doing: doing, message: "the server did not start the copy")
        }
        pq.PQclear!(started)
        let sink = CopySink(connection: self)
        var failure: PostgresError?
        do {
            try write(sink)
            try sink.flush(doing: doing)
        } catch {
            failure = error
        }
        if failure == nil {
            guard pq.PQputCopyEnd!(connection, nil) == 1 else { throw lost(doing: doing) }
        } else {
            _ = pq.PQputCopyEnd!(connection, "stopped by archivist")
        }
        var copied = 0
        var resultFailure: PostgresError?
        while let result = pq.PQgetResult!(connection) {
            do {
                copied += try rows(of: result, doing: doing).affected
            } catch {
                if resultFailure == nil { resultFailure = error }
            }
        }
        if let failure { throw failure }
        if let resultFailure { throw resultFailure }
        return copied
    }

    /// Sends bytes of a copy in progress.
    func putCopyData(_ bytes: UnsafeRawBufferPointer, doing: String) throws(PostgresError) {
        let connection = try open(doing: doing)
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let sent = pq.PQputCopyData!(connection, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        guard sent == 1 else { throw lost(doing: doing) }
    }

    /// The connection, or a lost-connection error.
    private func open(doing: String) throws(PostgresError) -> OpaquePointer {
        guard let handle else { throw .connectionLost(server: server, doing: doing, reason: "the connection is closed") }
        return handle
    }

    /// The error of a connection that went bad.
    private func lost(doing: String) -> PostgresError {
        let message = handle.map { info.redact(ConnectionInfo.firstLine(cText(pq.PQerrorMessage!($0)))) } ?? ""
        return .connectionLost(server: server, doing: doing, reason: message.isEmpty ? "the server closed the connection" : message)
    }

    /// Reads a result's rows and frees it; a failed result becomes an error.
    private func rows(of result: OpaquePointer?, doing: String) throws(PostgresError) -> Rows {
        guard let result else { throw lost(doing: doing) }
        defer { pq.PQclear!(result) }
        let status = pq.PQresultStatus!(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            let count = Int(pq.PQntuples!(result))
            let fields = Int(pq.PQnfields!(result))
            var columns: [String] = []
            for field in 0..<fields { columns.append(cText(pq.PQfname!(result, Int32(field)))) }
            var values: [[String?]] = []
            values.reserveCapacity(count)
            for row in 0..<count {
                var line: [String?] = []
                line.reserveCapacity(fields)
                for field in 0..<fields {
                    if pq.PQgetisnull!(result, Int32(row), Int32(field)) == 1 {
                        line.append(nil)
                    } else {
                        line.append(cText(pq.PQgetvalue!(result, Int32(row), Int32(field))))
                    }
                }
                values.append(line)
            }
            let affected = Int(cText(pq.PQcmdTuples!(result))) ?? 0
            return Rows(columns: columns, values: values, affected: affected)
        default:
            let state = pq.PQresultErrorField!(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            var message = pq.PQresultErrorField!(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? ""
            if message.isEmpty, let handle { message = ConnectionInfo.firstLine(cText(pq.PQerrorMessage!(handle))) }
            message = info.redact(ConnectionInfo.firstLine(message))
            // No SQL state: libpq's own failure, which is the connection's (the server closed it).
            if state.isEmpty || handle.map({ pq.PQstatus!($0) != CONNECTION_OK }) ?? true {
                throw .connectionLost(server: server, doing: doing, reason: message.isEmpty ? "the server closed the connection" : message)
            }
            throw .statement(server: server, sqlState: state, doing: doing, message: message)
        }
    }
}

/// A C string libpq returned ("" for NULL).
func cText(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

/// The sending end of a `COPY ... FROM STDIN` in text format: rows are encoded into a buffer sent
/// a megabyte at a time.
public final class CopySink {
    private let connection: PostgresConnection
    private var buffer: [UInt8] = []

    init(connection: PostgresConnection) {
        self.connection = connection
        buffer.reserveCapacity(1 << 20)
    }

    /// Appends one row: each value escaped for COPY's text format (nil is `\N`).
    public func row(_ values: [CopyValue]) throws(PostgresError) {
        CopySink.encode(values, into: &buffer)
        if buffer.count >= 1 << 20 { try flush(doing: "copying rows") }
    }

    /// Appends one row already encoded by `encode` (its newline included).
    public func line(_ encoded: [UInt8]) throws(PostgresError) {
        buffer.append(contentsOf: encoded)
        if buffer.count >= 1 << 20 { try flush(doing: "copying rows") }
    }

    /// Appends the row `values` to `buffer` as COPY's text format has it, with its newline:
    /// rows can be encoded on any thread and sent by `line` later.
    public static func encode(_ values: [CopyValue], into buffer: inout [UInt8]) {
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.append(0x09) }
            switch value {
            case .null:
                buffer.append(0x5C)
                buffer.append(0x4E)
            case .text(let text):
                var text = text
                text.withUTF8 { escape($0, into: &buffer) }
            case .bytes(let bytes): bytes.withUnsafeBufferPointer { escape($0, into: &buffer) }
            case .document(let bytes): bytes.withUnsafeBufferPointer { compactDocument($0, into: &buffer) }
            }
        }
        buffer.append(0x0A)
    }

    /// Sends what is buffered.
    func flush(doing: String) throws(PostgresError) {
        guard !buffer.isEmpty else { return }
        let pending = buffer
        buffer.removeAll(keepingCapacity: true)
        var failure: PostgresError?
        pending.withUnsafeBytes { bytes in
            do throws(PostgresError) {
                try connection.putCopyData(bytes, doing: doing)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// COPY's text escapes: backslash, tab, newline and carriage return.
    static func escape(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        for byte in bytes {
            switch byte {
            case 0x5C, 0x09, 0x0A, 0x0D:
                buffer.append(0x5C)
                buffer.append(byte == 0x5C ? 0x5C : byte == 0x09 ? 0x74 : byte == 0x0A ? 0x6E : 0x72)
            default: buffer.append(byte)
            }
        }
    }

    /// A JSON document (valid, as the folder's are) for a `jsonb` column, in one pass: the
    /// whitespace between tokens left out (`jsonb` keeps none of it, and the server parses fewer
    /// bytes), the escape `\u0000`, which `jsonb` refuses, written as U+FFFD (the folder keeps the
    /// original), and COPY's escapes applied.
    static func compactDocument(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        var index = 0
        var inString = false
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if !inString {
                switch byte {
                case 0x20, 0x0A, 0x0D, 0x09: break
                case 0x22:
                    inString = true
                    buffer.append(byte)
                default: buffer.append(byte)
                }
                index += 1
                continue
            }
            switch byte {
            case 0x22:
                inString = false
                buffer.append(byte)
            case 0x5C where index + 1 < count:
                let next = bytes[index + 1]
                if next == 0x75, index + 5 < count, bytes[index + 2] == 0x30, bytes[index + 3] == 0x30, bytes[index + 4] == 0x30,
                    bytes[index + 5] == 0x30
                {
                    // \u0000 becomes \ufffd (its backslash doubled for COPY).
                    buffer.append(contentsOf: [0x5C, 0x5C, 0x75, 0x66, 0x66, 0x66, 0x64])
                    index += 6
                    continue
                }
                // Any other escape (\\ among them) is copied whole, so `\\u0000` stays text.
                buffer.append(0x5C)
                buffer.append(0x5C)
                if next == 0x5C {
                    buffer.append(0x5C)
                    buffer.append(0x5C)
                } else {
                    buffer.append(next)
                }
                index += 2
                continue
            case 0x5C, 0x09, 0x0A, 0x0D:
                buffer.append(0x5C)
                buffer.append(byte == 0x5C ? 0x5C : byte == 0x09 ? 0x74 : byte == 0x0A ? 0x6E : 0x72)
            default: buffer.append(byte)
            }
            index += 1
        }
    }
}

/// A value of a COPY row.
public enum CopyValue: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// Text (a number, a timestamp, an array literal are written as text too).
    case text(String)
    /// UTF-8 bytes as they are.
    case bytes([UInt8])
    /// A JSON document for a `jsonb` column, sent without the whitespace between its tokens
    /// (`CopySink.compactDocument`).
    case document([UInt8])
}
