import ArchivistBase
import Foundation
import Synchronization

/// A running observation of a data folder's changes (`DocumentStore.observe`): a thread that
/// waits on the folder (`LogWatcher`) and hands each set of new matching changes, committed by
/// this process or any other, to the handler. `invalidate()` (or releasing the last reference
/// and calling it) stops it; the handler is not called after `invalidate()` returns.
public final class ChangeObservation: Sendable {
    private let watcher: LogWatcher
    private let finished = Mutex<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(watcher: LogWatcher) {
        self.watcher = watcher
    }

    /// Stops the observation and waits for its thread to end (a handler running on it finishes
    /// first; calling this from the handler itself does not wait).
    public func invalidate() {
        watcher.cancel()
        if Thread.current.name == Self.threadName { return }
        let already = finished.withLock { finished -> Bool in
            defer { finished = true }
            return finished
        }
        if !already { done.wait() }
    }

    static let threadName = "archivist.observe"

    /// The thread's loop: read the changes after `since`, hand them over, wait.
    func run(store: DocumentStore, filter: Filter, since: Int, handler: @escaping @Sendable (Result<ChangeSet, StoreError>) -> Void) {
        let thread = Thread { [watcher, done] in
            defer { done.signal() }
            var last = since
            while true {
                do throws(StoreError) {
                    let page = try store.changePage(since: last, filter: filter)
                    if page.through > last {
                        if !page.changes.isEmpty {
                            if watcher.isCancelled { return }
                            handler(.success(ChangeSet(changes: page.changes, sequences: (last + 1)...page.through)))
                        }
                        last = page.through
                    }
                } catch {
                    handler(.failure(error))
                    return
                }
                if watcher.wait(timeout: nil) == .cancelled { return }
            }
        }
        thread.name = Self.threadName
        thread.start()
    }
}

extension DocumentStore {
    /// Observes the folder's changes that match `filter` from now on (or after sequence number
    /// `since`), made by this process or by others: `handler` hears each set of them on the
    /// observation's own thread, within milliseconds of their commit (inotify), or an error once
    /// (the observation then ends). Keep the returned observation and `invalidate()` it to stop.
    public func observe(
        filter: Filter = .all, since: Int? = nil, handler: @escaping @Sendable (Result<ChangeSet, StoreError>) -> Void
    ) throws(StoreError) -> ChangeObservation {
        _ = try ChangeFilter(filter, projection: projection, textSearch: schema.textSearch)
        let start: Int
        if let since { start = since } else { start = try lastSequence }
        let observation = ChangeObservation(watcher: LogWatcher(folder: folder))
        observation.run(store: self, filter: filter, since: start, handler: handler)
        return observation
    }

    /// The folder's change sets that match `filter`, from now on (or after `since`), as an
    /// asynchronous sequence; it ends with the first error, and ending the iteration (or
    /// cancelling its task) stops the watching.
    public func changeSets(filter: Filter = .all, since: Int? = nil) throws(StoreError) -> AsyncStream<ChangeSet> {
        let (stream, continuation) = AsyncStream<ChangeSet>.makeStream()
        let observation = try observe(filter: filter, since: since) { result in
            switch result {
            case .success(let set): continuation.yield(set)
            case .failure: continuation.finish()
            }
        }
        continuation.onTermination = { _ in observation.invalidate() }
        return stream
    }
}
