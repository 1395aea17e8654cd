import ArchivistBase
import Foundation
import Synchronization

/// Connections that carry the initial load side by side, each on its own thread: the server
/// parses, compresses and stores rows (then builds indexes) in as many backends as there are
/// lanes, while the folder's side reads and encodes the next window. One connection's backend
/// uses one core of the server; the folder's reading overlaps them.
///
/// Each connection is used only by its lane's serial queue. A failure of any lane is kept and
/// thrown by the next `send` or by `finish`.
final class LoadLanes: @unchecked Sendable {
    private struct State {
        var idle: [Int]
        var copied = 0
        var failure: PostgresError?
    }

    private let connections: [PostgresConnection]
    private let queues: [DispatchQueue]
    private let free: DispatchSemaphore
    private let state: Mutex<State>

    /// How many lanes there are.
    var count: Int { connections.count }

    /// `count` new connections to `info`, each set up by `prepare`.
    init(info: ConnectionInfo, count: Int, prepare: (PostgresConnection) throws(PostgresError) -> Void) throws(PostgresError) {
        var connections: [PostgresConnection] = []
        for _ in 0..<max(1, count) {
            let connection = try PostgresConnection(info)
            try prepare(connection)
            connections.append(connection)
        }
        self.connections = connections
        queues = connections.indices.map { DispatchQueue(label: "archivist.load-lane.\($0)") }
        free = DispatchSemaphore(value: connections.count)
        state = Mutex(State(idle: Array(connections.indices)))
    }

    /// Rows the lanes have copied so far (their COPY finished).
    var copied: Int { state.withLock { $0.copied } }

    /// Streams `rows` (lines `CopySink.encode` made) through `sql` (a `COPY ... FROM STDIN`) on the next idle lane, waiting
    /// for one; returns once the lane has them. Throws a failure of an earlier send.
    func send(_ rows: [[UInt8]], sql: String, doing: String) throws(PostgresError) {
        free.wait()
        let taken = state.withLock { state -> (lane: Int?, failure: PostgresError?) in
            if let failure = state.failure { return (nil, failure) }
            return (state.idle.removeLast(), nil)
        }
        guard let lane = taken.lane else {
            free.signal()
            throw taken.failure!
        }
        queues[lane].async { [self] in
            do throws(PostgresError) {
                try connections[lane].copy(sql, doing: doing) { sink throws(PostgresError) in
                    for row in rows { try sink.line(row) }
                }
                state.withLock { $0.copied += rows.count }
            } catch {
                state.withLock { if $0.failure == nil { $0.failure = error } }
            }
            state.withLock { $0.idle.append(lane) }
            free.signal()
        }
    }

    /// Waits until every lane is idle; throws the first failure of any.
    func finish() throws(PostgresError) {
        for _ in connections.indices { free.wait() }
        for _ in connections.indices { free.signal() }
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Runs `body(plans[i], connection)` on lane `i` (at most `count` plans), all at once, and
    /// waits for them; throws the first failure.
    func run<Plan: Sendable>(_ plans: [Plan], _ body: @escaping @Sendable (Plan, PostgresConnection) throws -> Void) throws(PostgresError) {
        try finish()
        let group = DispatchGroup()
        for (lane, plan) in plans.prefix(connections.count).enumerated() {
            queues[lane].async(group: group) { [self] in
                do {
                    try body(plan, connections[lane])
                } catch {
                    let failure = error as? PostgresError ?? .loadStopped(table: "\(error)")
                    state.withLock { if $0.failure == nil { $0.failure = failure } }
                }
            }
        }
        group.wait()
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Closes every connection (after `finish`).
    func close() {
        for queue in queues { queue.sync {} }
        for connection in connections { connection.close() }
    }
}
