import ArchivistBase

/// A merge planned under the writers' lock and built without it (`DocumentStore.runDueMerges`):
/// the segments it joins as they were when it was planned (their files never change; what newer
/// changes delete in them meanwhile is carried over when it is installed), and the number the
/// new segment was given.
struct PendingMerge {
    /// The segments merged, with what of each was live when the merge was planned.
    let inputs: [SegmentMerger.Input]
    /// The number reserved for the new segment (the manifest's next number was moved past it).
    let number: Int
    /// The projection the segments were built with.
    let projection: Projection

    /// The new segment's file name.
    var fileName: String { Manifest.fileName(number: number) }
    /// Where the new segment waits, built and synced, until it is installed.
    var aside: String { FileNames.merging + "/" + fileName }

    /// Whether the manifest `manifest` still names every input, as the same file.
    func inputsAreLive(in manifest: Manifest) -> Bool {
        inputs.allSatisfy { input in
            manifest.segments.contains {
                $0.number == input.segment.record.number && $0.footerHash == input.segment.record.footerHash
            }
        }
    }
}
