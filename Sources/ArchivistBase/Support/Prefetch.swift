import Dispatch

/// A value computed on another thread while the caller does something else, waited for by
/// `value()`: the next window of a replication read while one is sent, the next batch of an
/// import read and encoded while one commits.
public final class Prefetch<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Value?

    /// Starts `work` on a thread of the global queue. Whatever `work` touches must not be used by
    /// the caller until `value()` has returned.
    public init(_ work: @escaping () -> Value) {
        nonisolated(unsafe) let work = work
        DispatchQueue.global(qos: .userInitiated).async {
            self.result = work()
            self.done.signal()
        }
    }

    /// The value, waiting for it (call it once).
    public func value() -> Value {
        done.wait()
        return result!
    }
}
