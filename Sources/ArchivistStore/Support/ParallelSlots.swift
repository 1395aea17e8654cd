/// Slots that several threads fill at once, each slot by exactly one thread. The storage is a raw
/// buffer, so the threads never touch a shared array (whose copy-on-write check would race).
public final class ParallelSlots<Element>: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<Element>

    /// `count` slots, each holding `initial`.
    public init(count: Int, initial: Element) {
        storage = .allocate(capacity: count)
        storage.initialize(repeating: initial)
    }

    /// Sets one slot (from any thread; no two threads may set the same slot).
    public func set(_ index: Int, _ element: Element) {
        storage[index] = element
    }

    /// One slot (once every thread is done).
    public subscript(index: Int) -> Element { storage[index] }

    /// Every slot, in order (once every thread is done).
    public var values: [Element] { Array(storage) }

    deinit {
        storage.deinitialize()
        storage.deallocate()
    }
}
