/// A segment's deletions: the ordinals of its documents (and, past its document count, of its
/// tombstones) that newer changes superseded, kept in `segments/<number>-<generation>.del` (its
/// grammar: `docs/FORMAT.md`, "segments"). A segment never changes; what newer segments and the
/// tail supersede in it is recorded here, as Lucene's live-documents files do, so that opening a
/// folder does not look every newer ID up in every older segment.
///
/// A new generation is written whole (aside, synced, renamed) when a flush supersedes more of the
/// segment; the manifest names the generation in use.
struct SegmentDeletes: Equatable, Sendable {
    /// `ARCDEL01`, little-endian.
    static let magic: UInt64 = 0x3130_4C45_4443_5241

    /// The segment these are of.
    var segment: Int
    /// The deleted ordinals, ascending, each once.
    var ordinals: [UInt32]

    /// The file's bytes: the magic, the segment's number, the count, the ordinals (u32, padded to
    /// 8 bytes), and a checksum of everything before it.
    func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 32 + ordinals.count * 4)
        writer.append(Self.magic)
        writer.append(UInt64(segment))
        writer.append(UInt64(ordinals.count))
        for ordinal in ordinals { writer.append(ordinal) }
        writer.align(to: 8)
        let hash = writer.bytes.withUnsafeBytes { WordHash.striped($0) }
        writer.append(hash)
        return writer.bytes
    }

    /// Reads a deletes file of segment `segment`, which holds `limit` ordinals (documents and
    /// tombstones); damage, another segment's file or an ordinal out of range is an error.
    static func decode(_ bytes: [UInt8], segment: Int, limit: Int) throws(SegmentDamage) -> SegmentDeletes {
        let decoded = bytes.withUnsafeBytes { (raw) -> Result<SegmentDeletes, SegmentDamage> in
            Result { () throws(SegmentDamage) -> SegmentDeletes in
                let reader = BinaryReader(buffer: raw)
                guard raw.count >= 32, raw.count % 8 == 0, reader.uint64(at: 0) == magic else {
                    throw .unreadable("not a deletes file")
                }
                guard WordHash.striped(UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 8)])) == reader.uint64(at: raw.count - 8)
                else {
                    throw .unreadable("deletes file checksum mismatch")
                }
                guard reader.uint64(at: 8) == UInt64(segment) else { throw .unreadable("deletes file of another segment") }
                guard let count = reader.uint64(at: 16), count <= UInt64(limit), 24 + Int(count) * 4 <= raw.count - 8 else {
                    throw .unreadable("deletes file count out of range")
                }
                var ordinals: [UInt32] = []
                ordinals.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    let ordinal = reader.uint32(at: 24 + index * 4) ?? UInt32.max
                    guard ordinal < UInt32(limit), ordinals.last.map({ $0 < ordinal }) ?? true else {
                        throw .unreadable("deletes file ordinal \(ordinal) out of order or range")
                    }
                    ordinals.append(ordinal)
                }
                return SegmentDeletes(segment: segment, ordinals: ordinals)
            }
        }
        return try decoded.get()
    }

    /// These deletions and `more` (ascending, each once).
    func adding(_ more: [UInt32]) -> SegmentDeletes {
        let sorted = more.sorted()
        var merged: [UInt32] = []
        merged.reserveCapacity(ordinals.count + sorted.count)
        var i = 0
        var j = 0
        while i < ordinals.count || j < sorted.count {
            let next: UInt32
            if j == sorted.count || (i < ordinals.count && ordinals[i] <= sorted[j]) {
                next = ordinals[i]
                i += 1
            } else {
                next = sorted[j]
                j += 1
            }
            if merged.last != next { merged.append(next) }
        }
        return SegmentDeletes(segment: segment, ordinals: merged)
    }
}
