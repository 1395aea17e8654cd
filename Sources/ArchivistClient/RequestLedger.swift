import ArchivistBase
import Foundation
import Synchronization

/// Counts API requests per UTC day and spaces them out, across every process using the data folder.
public protocol RequestLedger: Sendable {
    /// Takes the next request slot when `pace` seconds have passed since the last request and
    /// fewer than `dailyLimit` requests were counted on `now`'s UTC day: records the request at
    /// `now` and returns `.granted` with the day's count including it. Else returns `.wait` with
    /// the seconds left, or `.limitReached` when the day's requests are used up; neither records
    /// anything.
    func reserve(at now: Date, pace: Double, dailyLimit: Int) throws(ClientError) -> LedgerSlot
}

/// The answer of `RequestLedger.reserve(at:pace:dailyLimit:)`.
public enum LedgerSlot: Sendable, Equatable {
    /// The request may go now; it is the `requestsToday`-th of this UTC day.
    case granted(requestsToday: Int)
    /// Another request went out too recently: wait this many seconds first.
    case wait(seconds: Double)
    /// `requestsToday` requests were sent this UTC day, the daily limit: none may go before tomorrow.
    case limitReached(requestsToday: Int)
}

/// A ledger kept in memory (for one process, or tests).
public final class MemoryRequestLedger: RequestLedger {
    private let usage = Mutex(StoreRequestLedger.Usage())

    /// An empty ledger.
    public init() {}

    /// Reserves a slot (see `RequestLedger`).
    public func reserve(at now: Date, pace: Double, dailyLimit: Int) throws(ClientError) -> LedgerSlot {
        usage.withLock { $0.reserve(at: now, pace: pace, dailyLimit: dailyLimit) }
    }
}

/// The ledger of a data folder: `api-usage.json` (grammar: `docs/FORMAT.md`), read and replaced
/// under the writers' lock.
///
/// ```json
/// {"last_request_at": "2026-11-29T22:10:00.123Z", "requests_per_day": {"2026-11-29": 12}}
/// ```
/// Only the last 31 days are kept. An unreadable file is an error, never silently reset.
public final class StoreRequestLedger: RequestLedger {
    /// How many days of counts the file keeps.
    public static let keptDays = 31
    private let store: any DataFolder

    /// The ledger of `store`'s data folder.
    public init(store: any DataFolder) {
        self.store = store
    }

    /// Reserves a slot (see `RequestLedger`).
    public func reserve(at now: Date, pace: Double, dailyLimit: Int) throws(ClientError) -> LedgerSlot {
        let path = store.sideFilePath(named: ClientFiles.apiUsage)
        var slot = LedgerSlot.wait(seconds: 0)
        do {
            try store.updateSideFile(named: ClientFiles.apiUsage) { (current: [UInt8]?) throws(StoreError) -> [UInt8]? in
                var usage = try current.map { (bytes) throws(StoreError) in try Usage(bytes, path: path) } ?? Usage()
                slot = usage.reserve(at: now, pace: pace, dailyLimit: dailyLimit)
                guard case .granted = slot else { return nil }
                return usage.encoded()
            }
        } catch {
            throw .storage(error)
        }
        return slot
    }

    /// The requests counted per UTC day, oldest first.
    public func requestsPerDay() throws(ClientError) -> [(day: CalendarDay, requests: Int)] {
        let path = store.sideFilePath(named: ClientFiles.apiUsage)
        do {
            guard let bytes = try store.sideFile(named: ClientFiles.apiUsage) else { return [] }
            return try Usage(bytes, path: path).perDay.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        } catch {
            throw .storage(error)
        }
    }

    /// The file's contents.
    struct Usage: Sendable {
        var lastRequest: Date?
        var perDay: [CalendarDay: Int] = [:]

        /// Takes the next slot when fewer than `dailyLimit` requests were counted on `now`'s UTC day
        /// and `pace` seconds have passed since the last request (a clock set back, `now` before the
        /// last request, grants at once), counting it on its UTC day and keeping the last
        /// `keptDays` days; else says that the day is used up or how long to wait, and changes
        /// nothing.
        mutating func reserve(at now: Date, pace: Double, dailyLimit: Int) -> LedgerSlot {
            let used = perDay[CalendarDay(now)] ?? 0
            if used >= dailyLimit { return .limitReached(requestsToday: used) }
            if let last = lastRequest, now >= last, now.timeIntervalSince(last) < pace {
                return .wait(seconds: pace - now.timeIntervalSince(last))
            }
            let today = CalendarDay(now)
            let count = (perDay[today] ?? 0) + 1
            perDay[today] = count
            perDay = perDay.filter { $0.key > today.adding(days: -StoreRequestLedger.keptDays) }
            lastRequest = now
            return .granted(requestsToday: count)
        }

        init() {}

        init(_ bytes: [UInt8], path: String) throws(StoreError) {
            let file = try SideFile(bytes, path: path)
            switch file["last_request_at"] {
            case .string(let text)?:
                guard let stamp = Timestamp(parsing: text) else {
                    throw file.invalid("last_request_at", "'\(text)' is not a timestamp")
                }
                lastRequest = stamp.date
            case nil, .null?: break
            default: throw file.invalid("last_request_at", "expected a string")
            }
            switch file["requests_per_day"] {
            case .object(let members)?:
                for member in members {
                    guard let day = CalendarDay(member.key), case .number(let text) = member.value, let count = Int(text) else {
                        throw file.invalid("requests_per_day.\(member.key)", "expected a day and a count")
                    }
                    perDay[day] = count
                }
            case nil, .null?: break
            default: throw file.invalid("requests_per_day", "expected an object")
            }
        }

        func encoded() -> [UInt8] {
            var members: [JSONMember] = []
            if let lastRequest {
                members.append(JSONMember(key: "last_request_at", value: .string(Timestamp(lastRequest).description)))
            }
            members.append(
                JSONMember(
                    key: "requests_per_day",
                    value: .object(
                        sorting: perDay.map {
                            JSONMember(key: $0.key.description, value: .number(String($0.value)))
                        })))
            return JSONWriter.prettyBytes(.object(sorting: members))
        }
    }
}
