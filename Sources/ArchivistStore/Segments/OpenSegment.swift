/// A segment file in use by a process: the manifest's record of it, its mapped structures, and
/// its deletions (the ordinals newer changes superseded, from its deletes file).
final class OpenSegment: Sendable {
    /// What the manifest says of it.
    let record: Manifest.Segment
    /// Its structures, read in place.
    let mapped: MappedSegment
    /// Its deleted ordinals (documents, then tombstones at `count + index`); nil when none.
    private let deleted: OrdinalSet?

    /// A segment with the deletions `deletes` (of this segment, checked against its size).
    init(record: Manifest.Segment, mapped: MappedSegment, deletes: SegmentDeletes?) {
        self.record = record
        self.mapped = mapped
        if let deletes, !deletes.ordinals.isEmpty {
            var set = OrdinalSet(capacity: mapped.count + mapped.tombstoneCount)
            for ordinal in deletes.ordinals where Int(ordinal) < set.capacity { set.insert(Int(ordinal)) }
            deleted = set
        } else {
            deleted = nil
        }
    }

    /// Whether an ordinal (of a document, or `count +` a tombstone's index) is deleted.
    @inline(__always)
    func isDeleted(_ ordinal: Int) -> Bool {
        deleted?.contains(ordinal) ?? false
    }

    /// Its deleted ordinals, ascending.
    var deletedOrdinals: [Int] { deleted?.ordinals ?? [] }

    /// Its documents no newer change superseded.
    var liveDocuments: Int { record.documents - record.deletedDocuments }

    /// The sum of the sizes of its live documents.
    var liveBytes: Int { record.liveBytes }

    /// Its live documents as a set of ordinals (all but the deleted ones and `masked`).
    func live(masking masked: Set<Int>) -> OrdinalSet {
        var live = OrdinalSet(capacity: mapped.count, full: true)
        if let deleted {
            for ordinal in deleted.ordinals where ordinal < mapped.count { live.remove(ordinal) }
        }
        for ordinal in masked { live.remove(ordinal) }
        return live
    }
}
