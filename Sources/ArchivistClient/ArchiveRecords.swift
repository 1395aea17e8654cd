import ArchivistBase
import Foundation

/// What the data folder holds of one Archive API month.
public struct ArchiveRecord: Sendable, Equatable {
    /// How far a month got.
    public enum Status: String, Sendable, CaseIterable {
        /// Every document received was stored (`hits` may still differ from `received`).
        case complete
        /// A run stored some of it and stopped (Ctrl-C, a crash, the daily limit): fetched again
        /// whole next time.
        case partial
        /// The last attempt failed after its retries; nothing of that attempt is complete.
        case failed
    }

    /// The month.
    public var month: ArchiveMonth
    /// How far it got.
    public var status: Status
    /// `response.meta.hits` of the last answer (nil when none came).
    public var hits: Int?
    /// Documents in the last answer's `docs`.
    public var received = 0
    /// Documents of it stored so far (upserted, whatever the outcome).
    public var stored = 0
    /// Of those, new to the store.
    public var added = 0
    /// Of those, changed.
    public var updated = 0
    /// Of those, stored already exactly so (not rewritten).
    public var unchanged = 0
    /// Documents that could not be stored (not an object, no `_id`).
    public var rejected = 0
    /// When the record was last written.
    public var at: Date
    /// Why the last attempt failed, for `failed` (never holds the key).
    public var error: String?

    /// A record.
    public init(month: ArchiveMonth, status: Status, hits: Int? = nil, at: Date, error: String? = nil) {
        self.month = month
        self.status = status
        self.hits = hits
        self.at = at
        self.error = error
    }
}

/// The Archive API months a data folder holds, in `archive.json` (grammar: `docs/FORMAT.md`):
///
/// ```json
/// {"months": {"1963-02": {"status": "complete", "hits": 3012, "received": 3012, "stored": 3012,
///                         "added": 3012, "updated": 0, "unchanged": 0, "rejected": 0,
///                         "at": "2026-12-02T03:10:00.000Z"}}}
/// ```
/// Each change is a read-modify-write of the whole file under the writers' lock. A month is
/// `complete` only once every document of its answer is stored. An unreadable file is an error
/// naming it; it is never replaced.
public struct ArchiveRecords: Sendable {
    private let store: any DataFolder

    /// The records of `store`'s folder.
    public init(store: any DataFolder) {
        self.store = store
    }

    private var path: String { store.sideFilePath(named: ClientFiles.archive) }

    /// Every month recorded, oldest first.
    public func all() throws(ClientError) -> [ArchiveRecord] {
        do {
            guard let bytes = try store.sideFile(named: ClientFiles.archive) else { return [] }
            return try ArchiveRecords.decode(bytes, path: path).sorted { $0.month < $1.month }
        } catch {
            throw .storage(error)
        }
    }

    /// Writes `record`, replacing what was recorded of its month. A failed attempt does not
    /// replace a complete month: what it stored is still all there.
    public func save(_ record: ArchiveRecord) throws(ClientError) {
        let path = self.path
        do {
            try store.updateSideFile(named: ClientFiles.archive) { (current: [UInt8]?) throws(StoreError) -> [UInt8]? in
                var records = try current.map { (bytes) throws(StoreError) in try ArchiveRecords.decode(bytes, path: path) } ?? []
                if let index = records.firstIndex(where: { $0.month == record.month }) {
                    if record.status == .failed, records[index].status == .complete { return nil }
                    records[index] = record
                } else {
                    records.append(record)
                }
                return ArchiveRecords.encode(records)
            }
        } catch {
            throw .storage(error)
        }
    }

    // MARK: Encoding

    static func encode(_ records: [ArchiveRecord]) -> [UInt8] {
        let members = records.map { record -> JSONMember in
            var fields = [
                JSONMember(key: "status", value: .string(record.status.rawValue)),
                JSONMember(key: "received", value: .number(String(record.received))),
                JSONMember(key: "stored", value: .number(String(record.stored))),
                JSONMember(key: "added", value: .number(String(record.added))),
                JSONMember(key: "updated", value: .number(String(record.updated))),
                JSONMember(key: "unchanged", value: .number(String(record.unchanged))),
                JSONMember(key: "rejected", value: .number(String(record.rejected))),
                JSONMember(key: "at", value: .string(Timestamp(record.at).description)),
            ]
            if let hits = record.hits { fields.append(JSONMember(key: "hits", value: .number(String(hits)))) }
            if let error = record.error { fields.append(JSONMember(key: "error", value: .string(error))) }
            return JSONMember(key: record.month.description, value: .object(sorting: fields))
        }
        return JSONWriter.prettyBytes(.object(sorting: [JSONMember(key: "months", value: .object(sorting: members))]))
    }

    static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> [ArchiveRecord] {
        let file = try SideFile(bytes, path: path)
        guard case .object(let members)? = file["months"] else {
            throw file.invalid("", "expected {\"months\": {YYYY-MM: {...}}}")
        }
        var result: [ArchiveRecord] = []
        for member in members {
            let place = "months.\(member.key)"
            guard let month = ArchiveMonth(member.key) else { throw file.invalid(place, "'\(member.key)' is not a YYYY-MM month") }
            let value = member.value
            guard case .object = value else { throw file.invalid(place, "expected an object") }
            guard case .string(let statusText)? = value["status"], let status = ArchiveRecord.Status(rawValue: statusText) else {
                throw file.invalid("\(place).status", "expected \"complete\", \"partial\" or \"failed\"")
            }
            func count(_ key: String) throws(StoreError) -> Int? {
                switch value[key] {
                case nil, .null?: return nil
                case .number(let text)?:
                    guard let number = Int(text), number >= 0 else {
                        throw file.invalid("\(place).\(key)", "expected a count, found \(text)")
                    }
                    return number
                default: throw file.invalid("\(place).\(key)", "expected a count")
                }
            }
            guard case .string(let atText)? = value["at"], let stamp = Timestamp(parsing: atText) else {
                throw file.invalid("\(place).at", "expected a timestamp")
            }
            var record = ArchiveRecord(month: month, status: status, hits: try count("hits"), at: stamp.date)
            record.received = try count("received") ?? 0
            record.stored = try count("stored") ?? 0
            record.added = try count("added") ?? 0
            record.updated = try count("updated") ?? 0
            record.unchanged = try count("unchanged") ?? 0
            record.rejected = try count("rejected") ?? 0
            switch value["error"] {
            case nil, .null?: break
            case .string(let text)?: record.error = text
            default: throw file.invalid("\(place).error", "expected a string")
            }
            result.append(record)
        }
        return result
    }
}
