/// Intersection of two ascending lists.
func intersect(_ a: [Int32], _ b: [Int32]) -> [Int32] {
    var result: [Int32] = []
    var i = 0, j = 0
    while i < a.count && j < b.count {
        if a[i] == b[j] { result.append(a[i]); i += 1; j += 1 } else if a[i] < b[j] { i += 1 } else { j += 1 }
    }
    return result
}

/// Union of two ascending lists.
func merge(_ a: [Int32], _ b: [Int32]) -> [Int32] {
    if a.isEmpty { return b }
    if b.isEmpty { return a }
    var result: [Int32] = []
    result.reserveCapacity(a.count + b.count)
    var i = 0, j = 0
    while i < a.count || j < b.count {
        if j >= b.count || (i < a.count && a[i] < b[j]) {
            result.append(a[i]); i += 1
        } else if i >= a.count || b[j] < a[i] {
            result.append(b[j]); j += 1
        } else {
            result.append(a[i]); i += 1; j += 1
        }
    }
    return result
}
