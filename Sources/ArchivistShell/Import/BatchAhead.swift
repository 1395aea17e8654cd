import Dispatch

/// One batch of an import read, parsed and encoded on another thread while the batch before it
/// commits: the commit spends much of its time waiting for the disk (two syncs), and the next
/// batch's CPU work fills that time. At most one job runs at a time; `value()` waits for it.
final class BatchAhead<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Value?

    /// Starts `work` on a thread of the global queue. Whatever `work` touches must not be used by
    /// the caller until ``value()`` has returned (the importer's reader is used by one job at a time).
    init(_ work: @escaping () -> Value) {
        nonisolated(unsafe) let work = work
        DispatchQueue.global(qos: .userInitiated).async {
            self.result = work()
            self.done.signal()
        }
    }

    /// The job's result, waiting for it to finish (once).
    func value() -> Value {
        done.wait()
        return result!
    }
}
