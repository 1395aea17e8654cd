/// Which segments to merge (LevelDB's levels, Lucene's log merge policy): segments are grouped
/// into size classes a factor `F` apart (below `F × base` documents is class 0, then up to `F²
/// × base`, ...), and once a class holds `F` segments they are merged into one of the next class.
/// So a document is rewritten once per class, about log_F(N / base) times in all: the bytes a
/// write costs stay bounded, and the number of segments stays below `F` per class.
///
/// A segment whose deleted documents reach half its documents is rewritten on its own, so that
/// updates to old documents do not leave large segments mostly dead.
struct MergePolicy {
    /// Segments per merge, and the size ratio between classes.
    let factor: Int
    /// The documents of a flush: the size of class 0.
    let base: Int

    /// The size class of a segment of `documents` live documents and tombstones.
    func sizeClass(_ documents: Int) -> Int {
        var limit = max(1, base) * factor
        var level = 0
        while documents >= limit, level < 20 {
            limit *= factor
            level += 1
        }
        return level
    }

    /// The next merge due among `segments` (oldest first): the numbers of the segments to merge,
    /// or nil when none is due. The smallest class first, and in it the oldest segments.
    func nextMerge(_ segments: [Manifest.Segment]) -> [Int]? {
        var classes: [Int: [Manifest.Segment]] = [:]
        for segment in segments {
            let live = segment.liveDocuments + segment.tombstones - segment.deletedTombstones
            classes[sizeClass(live), default: []].append(segment)
        }
        for level in classes.keys.sorted() {
            let members = classes[level]!
            if members.count >= factor { return members.prefix(factor).map(\.number) }
        }
        if let empty = segments.first(where: { $0.liveDocuments == 0 && $0.deletedTombstones == $0.tombstones }) {
            return [empty.number]
        }
        if let dead = segments.first(where: { $0.documents > 0 && $0.deletedDocuments * 2 >= $0.documents }) {
            return [dead.number]
        }
        return nil
    }
}
