import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

@Suite("ordinal sets")
struct OrdinalSetTests {
    @Test("counting a list of ordinals against a set counts those it holds, each as often as listed", arguments: [0, 1, 63, 64, 65, 1000])
    func countOfAList(capacity: Int) {
        var dice = SplitMix64(state: UInt64(capacity) + 1)
        var set = OrdinalSet(capacity: capacity)
        var held: Set<Int> = []
        for _ in 0..<(capacity / 2) {
            let ordinal = Int(dice.next() % UInt64(capacity))
            set.insert(ordinal)
            held.insert(ordinal)
        }
        // Repeats, and ordinals past the capacity (never held).
        let list = (0..<(capacity + 10)).map { _ in UInt32(dice.next() % UInt64(capacity + 5)) } + [UInt32.max]
        let expected = list.filter { held.contains(Int($0)) }.count
        #expect(list.withUnsafeBufferPointer { set.count(of: $0) } == expected)
        #expect(set.count == held.count)
    }
}
