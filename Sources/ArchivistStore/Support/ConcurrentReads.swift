import Foundation
import Synchronization

/// Runs a body over many items on several threads at once, for work that mostly waits on the
/// disk (reading document files): with one read in flight a cold disk serves a few thousand small
/// files a second; with many, it orders and overlaps them. The bodies also share the CPU's cores
/// (parsing what they read).
///
/// The threads are this type's own, started once and kept: Dispatch's pool sizes itself to the
/// cores, which is right for computing and wrong for waiting.
public final class ConcurrentReads: @unchecked Sendable {
    /// How many bodies run at once, by default: enough reads in flight for a virtual or solid
    /// state disk's queue, few enough that their memory stays small.
    public static let defaultWidth = 16

    /// The pool every store shares.
    public static let shared = ConcurrentReads(width: defaultWidth)

    private let width: Int
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var threads = 0

    /// A pool running at most `width` bodies at once.
    public init(width: Int) {
        self.width = max(1, width)
    }

    /// `body(i)` for every `i` in `0..<count`, run on the pool's threads (the calling thread
    /// waits), the results in order. Each body must be safe to run alongside the others, and must
    /// not call `map` itself (it would wait for threads that wait for it).
    public func map<T>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        guard count > 0 else { return [] }
        if count == 1 { return [body(0)] }
        let slots = ParallelSlots<T?>(count: count, initial: nil)
        let next = Atomic<Int>(0)
        let lanes = min(width, count)
        let done = DispatchSemaphore(value: 0)
        let results = slots
        for _ in 0..<lanes {
            enqueue {
                while true {
                    let i = next.add(1, ordering: .relaxed).oldValue
                    guard i < count else { break }
                    results.set(i, body(i))
                }
                done.signal()
            }
        }
        for _ in 0..<lanes { done.wait() }
        return (0..<count).map { slots[$0]! }
    }

    /// Runs `job` on a pool thread, starting one when fewer than `width` exist.
    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(job)
        let start = threads < width
        if start { threads += 1 }
        condition.signal()
        condition.unlock()
        guard start else { return }
        let thread = Thread { [self] in self.serve() }
        thread.stackSize = 8 << 20  // as the main thread: a parse may nest 512 levels
        thread.start()
    }

    /// A pool thread: runs queued jobs for as long as the process lives.
    private func serve() {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let job = queue.removeFirst()
            condition.unlock()
            job()
        }
    }
}
