import ArchivistBase

/// The text index of a snapshot read in place: terms in byte order, each with its documents
/// (ascending) and their weights. Answers what the in-memory `TextIndex` answers.
struct SegmentText {
    private let reader: SegmentReader
    private let terms: UnsafeRawBufferPointer
    private let heap: SegmentFile.Section
    private let postings: SegmentFile.Section
    /// The number of terms.
    let termCount: Int

    init(_ reader: SegmentReader, documentCount: Int) throws(SegmentDamage) {
        guard let terms = reader.section(.terms), let heap = reader.section(.termHeap), let postings = reader.section(.textPostings),
            terms.length % SegmentBuilder.termRowSize == 0
        else { throw .unreadable("snapshot text index: sections missing") }
        self.reader = reader
        self.heap = heap
        self.postings = postings
        self.terms = try reader.bytes(of: terms)
        termCount = terms.length / SegmentBuilder.termRowSize
    }

    /// A term's row: where its bytes and postings are.
    private func row(_ index: Int) throws(SegmentDamage) -> (term: UnsafeRawBufferPointer, start: Int, count: Int) {
        let r = BinaryReader(buffer: terms)
        let at = index * SegmentBuilder.termRowSize
        guard let offset = r.uint32(at: at), let length = r.uint32(at: at + 4), let start = r.uint32(at: at + 8),
            let count = r.uint32(at: at + 12), UInt64(start) + UInt64(count) <= UInt64(postings.length / 8)
        else { throw .unreadable("snapshot term \(index) out of bounds") }
        return (try reader.bytes(of: heap, at: Int(offset), count: Int(length)), Int(start), Int(count))
    }

    /// Term `index` (0 ..< termCount, in byte order): its bytes and its postings.
    func term(at index: Int) throws(SegmentDamage) -> (term: UnsafeRawBufferPointer, postings: UnsafeBufferPointer<SIMD2<UInt32>>) {
        let found = try row(index)
        let bytes = try reader.bytes(of: postings, at: found.start * 8, count: found.count * 8)
        return (found.term, bytes.bindMemory(to: SIMD2<UInt32>.self))
    }

    /// The postings of a term: (ordinal, weight) pairs, ordinals ascending; empty when absent.
    func postings(of term: String) throws(SegmentDamage) -> UnsafeBufferPointer<SIMD2<UInt32>> {
        let wanted = Array(term.utf8)
        var low = 0, high = termCount
        while low < high {
            let mid = (low + high) / 2
            let candidate = try row(mid)
            let order = wanted.withUnsafeBytes { ValueOrder.compareBytes(candidate.term, $0) }
            if order == 0 {
                let bytes = try reader.bytes(of: postings, at: candidate.start * 8, count: candidate.count * 8)
                return bytes.bindMemory(to: SIMD2<UInt32>.self)
            }
            if order < 0 { low = mid + 1 } else { high = mid }
        }
        return UnsafeBufferPointer(start: nil, count: 0)
    }

    /// The weight of a posting (its second word holds a Float32).
    static func weight(_ posting: SIMD2<UInt32>) -> Float { Float(bitPattern: posting[1]) }
}
