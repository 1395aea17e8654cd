import ArchivistBase

/// A value with what ordering it needs worked out in advance, ordered as
/// `ValueOrder.compareSortKeys` orders values (then by ordinal).
struct SortableKey: Comparable {
    let value: JSONValue?
    let ordinal: Int32
    /// -1 empty array, 0 missing/null, 1 number, 2 date string, 3 other string, 4 other.
    let rank: Int8
    static let numberRank: Int8 = 1
    static let dateRank: Int8 = 2
    static let stringRank: Int8 = 3
    let number: Double
    let instant: Int64

    init(_ value: JSONValue?, ordinal: Int32) {
        self.value = value
        self.ordinal = ordinal
        switch value {
        case .array(let elements)? where elements.isEmpty:
            rank = -1; number = 0; instant = 0
        case nil, .null?:
            rank = 0; number = 0; instant = 0
        case .number(let literal)?:
            rank = 1; number = Double(literal) ?? 0; instant = 0
        case .string(let text)?:
            if let date = ISODate.instant(of: text) {
                rank = 2; number = 0; instant = date
            } else {
                rank = 3; number = 0; instant = 0
            }
        default:
            rank = 4; number = 0; instant = 0
        }
    }

    static func < (a: SortableKey, b: SortableKey) -> Bool {
        if a.rank != b.rank { return a.rank < b.rank }
        let c: Int
        switch a.rank {
        case 1: c = a.number < b.number ? -1 : (a.number > b.number ? 1 : 0)
        case 2:
            if a.instant != b.instant { c = a.instant < b.instant ? -1 : 1 } else { c = ValueOrder.compareSortKeys(a.value, b.value) }
        case 3:
            if case .string(let x)? = a.value, case .string(let y)? = b.value {
                c = ValueOrder.compareBytes(x, y)
            } else {
                c = 0
            }
        case 4: c = ValueOrder.compareSortKeys(a.value, b.value)
        default: c = 0
        }
        return c != 0 ? c < 0 : a.ordinal < b.ordinal
    }

    static func == (a: SortableKey, b: SortableKey) -> Bool { !(a < b) && !(b < a) }
}
