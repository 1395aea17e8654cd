import ArchivistBase
import Foundation

/// What an archive run did, month by month and in total.
public struct ArchiveSummary: Sendable, Equatable {
    /// Months in the range asked for.
    public var months = 0
    /// The sequence numbers of the changes committed while the run stored (nil: none), for
    /// `changes --since` (changes other processes committed meanwhile may be among them).
    public var sequences: ClosedRange<Int>?
    /// Months skipped because they are complete already.
    public var skipped = 0
    /// Months fetched and stored whole.
    public var fetched = 0
    /// Documents stored.
    public var documents = 0
    /// Documents new to the store.
    public var added = 0
    /// Documents whose stored version changed.
    public var updated = 0
    /// Documents stored already exactly so (not rewritten).
    public var unchanged = 0
    /// Months that failed after their retries.
    public var failed: [ArchiveMonth] = []
    /// Months not reached because the run stopped early (Ctrl-C, the daily limit, a fatal error),
    /// the one it stopped in included.
    public var left = 0
    /// The record of each month fetched or tried, in order.
    public var records: [ArchiveRecord] = []

    /// An empty summary.
    public init() {}
}

/// Progress of an archive run, for the terminal.
public enum ArchiveEvent: Sendable, Equatable {
    /// Month `index` (from 1) of the `count` to fetch is starting.
    case month(ArchiveMonth, index: Int, count: Int)
    /// Its body is downloading: bytes so far, and the announced length.
    case downloading(received: Int, expected: Int?)
    /// Its documents are being stored: `stored` of `received` so far.
    case storing(stored: Int, received: Int)
    /// A month's answer says `hits` but holds `received` documents (stored all the same).
    case hitsDiffer(ArchiveMonth, hits: Int, received: Int)
    /// Documents of a month that could not be stored (not objects, no `_id`): how many, and the
    /// first one's error.
    case rejected(ArchiveMonth, count: Int, first: String)
    /// A month failed after its retries; the run goes on with the next.
    case failed(ArchiveMonth, reason: String)
    /// Something the client said (pacing, retries, quota).
    case client(NYTClient.Event)
}

/// Fetches Archive API months oldest first, one request each, storing each month's documents in
/// durable batches as it reads them and recording the month in `archive.json` as complete only
/// when all of it is stored.
///
/// A month that fails after the client's retries is recorded as failed and the run goes on; the
/// run stops at once for Ctrl-C, the daily limit, a key the API refuses (401, 403), no network
/// library, a server never reached, or a storage error. A month stopped in the middle stays
/// `partial` and is fetched again whole next time (the upserts leave unchanged documents alone).
public final class Archiver: Sendable {
    /// Documents per durable batch, at most.
    public static let batchSize = 1_000
    /// Bytes of the body per durable batch, at most (a batch has one document at least): a month
    /// of large documents is stored in smaller batches, so that the two batches in hand (one
    /// written, the next prepared) stay a few times this size in memory.
    public static let batchBytes = 4 << 20

    private let client: NYTClient
    private let store: any DataFolder
    private let records: ArchiveRecords
    private let isCancelled: @Sendable () -> Bool

    /// An archiver fetching with `client` into `store`; `isCancelled` is polled between batches.
    public init(client: NYTClient, store: any DataFolder, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.client = client
        self.store = store
        self.records = ArchiveRecords(store: store)
        self.isCancelled = isCancelled
    }

    /// The months of `first...last` to fetch, oldest first, and how many are skipped: a month
    /// recorded complete is skipped unless `refetch`, or it is `current` or the month before it
    /// (they still grow).
    public static func plan(
        from first: ArchiveMonth, to last: ArchiveMonth, refetch: Bool, recorded: [ArchiveRecord],
        current: ArchiveMonth = .current
    ) -> (months: [ArchiveMonth], skipped: Int) {
        guard first <= last else { return ([], 0) }
        let complete = Set(recorded.filter { $0.status == .complete }.map(\.month))
        let growing = current.adding(months: -1)
        var months: [ArchiveMonth] = []
        var skipped = 0
        for ordinal in first.ordinal...last.ordinal {
            let month = ArchiveMonth(ordinal: ordinal)
            if !refetch, month < growing, complete.contains(month) {
                skipped += 1
            } else {
                months.append(month)
            }
        }
        return (months, skipped)
    }

    /// Fetches and stores `months` in order. Returns what was done and the error that stopped the
    /// run early, if any (`.cancelled` for Ctrl-C); months that failed and were passed over are in
    /// the summary's `failed`, not an error.
    public func run(
        _ months: [ArchiveMonth], onEvent: @escaping @Sendable (ArchiveEvent) -> Void = { _ in }
    ) async -> (ArchiveSummary, ClientError?) {
        var summary = ArchiveSummary()
        for (position, month) in months.enumerated() {
            if isCancelled() {
                summary.left = months.count - position
                return (summary, .cancelled)
            }
            onEvent(.month(month, index: position + 1, count: months.count))
            var progress: ArchiveRecord?
            do throws(ClientError) {
                try await fetch(month, into: &progress, storingIn: store, onEvent: onEvent)
                summary.fetched += 1
            } catch {
                if Archiver.stopsTheRun(error) {
                    if let progress { summary.add(progress) }
                    summary.left = months.count - position
                    return (summary, error)
                }
                let reason = Self.message(error)
                let record = ArchiveRecord(month: month, status: .failed, at: Date(), error: reason)
                summary.records.append(record)
                summary.failed.append(month)
                onEvent(.failed(month, reason: reason))
                do {
                    try records.save(record)
                } catch {
                    summary.left = months.count - position - 1
                    return (summary, error)
                }
                continue
            }
            if let progress { summary.add(progress) }
        }
        return (summary, nil)
    }

    /// Whether an error ends the whole run rather than one month.
    static func stopsTheRun(_ error: ClientError) -> Bool {
        switch error {
        case .cancelled, .dailyLimitReached, .networkUnavailable, .missingAPIKey, .storage, .invalidRequest:
            return true
        case .http(let status, _, _, _):
            return status == 401 || status == 403
        case .unreachable(_, _, let attempts):
            return attempts == 1  // never reached the server: offline or a wrong address
        default:
            return false
        }
    }

    /// An error's one-line message.
    static func message(_ error: ClientError) -> String {
        (error.errorDescription ?? "\(error)").replacingOccurrences(of: "\n", with: " ")
    }

    /// Fetches one month and stores it in batches, recording it partial after each batch and
    /// complete at the end; `progress` holds its record as far as it got, also when it throws.
    /// Generic over the folder, so that the batch prepared on another core is of its own kind.
    private func fetch<Folder: DataFolder>(
        _ month: ArchiveMonth, into progress: inout ArchiveRecord?, storingIn store: Folder,
        onEvent: @escaping @Sendable (ArchiveEvent) -> Void
    ) async throws(ClientError) {
        let response = try await client.fetchArchive(
            month, onEvent: { onEvent(.client($0)) },
            onProgress: { received, expected in onEvent(.downloading(received: received, expected: expected)) })
        var record = ArchiveRecord(month: month, status: .partial, hits: response.hits, at: Date())
        record.received = response.documentCount
        if response.hits != response.documentCount {
            onEvent(.hitsDiffer(month, hits: response.hits, received: response.documentCount))
        }
        progress = record
        var firstRejection: String?
        onEvent(.storing(stored: 0, received: record.received))
        // The next batch is parsed and encoded on another core while this one is written.
        func preparing(_ start: Int) -> (end: Int, task: Task<(Folder.PreparedUpsert, [ClientError]), Never>)? {
            guard start < response.documentCount else { return nil }
            let end = response.batchEnd(from: start, documents: Archiver.batchSize, bytes: Archiver.batchBytes)
            return (
                end,
                Task.detached {
                    var documents: [JSONValue] = []
                    var rejected: [ClientError] = []
                    documents.reserveCapacity(end - start)
                    for result in response.documents(start..<end) {
                        switch result {
                        case .success(let document): documents.append(document)
                        case .failure(let error): rejected.append(error)
                        }
                    }
                    return (store.prepareUpsert(documents), rejected)
                }
            )
        }
        var next = preparing(0)
        while let (end, preparation) = next {
            if isCancelled() {
                if record.stored > 0 { try records.save(record) }
                throw .cancelled
            }
            let (batch, rejected) = await preparation.value
            record.rejected += rejected.count
            if firstRejection == nil, let error = rejected.first { firstRejection = Self.message(error) }
            next = preparing(end)
            let results: [UpsertResult]
            do {
                results = try store.upsert(batch)
            } catch {
                throw .storage(error)
            }
            for result in results {
                switch result.outcome {
                case .success(.added): record.added += 1
                case .success(.updated): record.updated += 1
                case .success(.unchanged): record.unchanged += 1
                case .failure(let error):
                    record.rejected += 1
                    if firstRejection == nil { firstRejection = error.errorDescription ?? "\(error)" }
                    continue
                }
                record.stored += 1
            }
            record.at = Date()
            progress = record
            try records.save(record)
            onEvent(.storing(stored: record.stored, received: record.received))
        }
        if let firstRejection { onEvent(.rejected(month, count: record.rejected, first: firstRejection)) }
        record.status = .complete
        record.at = Date()
        try records.save(record)
        progress = record
    }
}

extension ArchiveSummary {
    /// Counts a month's record in: its row and its documents.
    mutating func add(_ record: ArchiveRecord) {
        records.append(record)
        documents += record.stored
        added += record.added
        updated += record.updated
        unchanged += record.unchanged
    }
}
