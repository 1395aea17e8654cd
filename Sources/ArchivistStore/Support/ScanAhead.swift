import ArchivistBase
import Foundation

/// The buckets (or pieces of them) a scan of the documents has read ahead of the one it hands on,
/// in order: one thread reads (`put`), another takes them (`take`); the reader waits while more
/// than a limit of documents wait (though always one read may), and either side can stop the
/// other.
final class ScanAhead: @unchecked Sendable {
    private let condition = NSCondition()
    private var ready: [(bucket: String, read: Result<[DocumentStore.ScannedFile], StoreError>, isLast: Bool)] = []
    private var waiting = 0
    private var stopped = false
    private var finished = false

    /// Waits until fewer than `limit` documents wait (or none does); false once stopped.
    func waitForRoom(limit: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !stopped && !ready.isEmpty && waiting >= limit { condition.wait() }
        return !stopped
    }

    /// Hands on the read of a bucket's files (its last piece when `isLast`); false once stopped
    /// (or after a failed read, which ends the scan).
    func put(_ bucket: String, _ read: Result<[DocumentStore.ScannedFile], StoreError>, isLast: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return false }
        if case .success(let files) = read { waiting += files.count }
        ready.append((bucket, read, isLast))
        condition.broadcast()
        if case .failure = read { return false }
        return true
    }

    /// Says the reader is done.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next read, waiting for it; nil when the reader finished without one.
    func take() -> (String, Result<[DocumentStore.ScannedFile], StoreError>, Bool)? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !finished { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let next = ready.removeFirst()
        if case .success(let files) = next.read { waiting -= files.count }
        condition.broadcast()
        return next
    }

    /// Stops the reader (it finishes the bucket it is reading) and waits for it to finish.
    func stopAndWait() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        ready.removeAll()
        condition.unlock()
    }
}
