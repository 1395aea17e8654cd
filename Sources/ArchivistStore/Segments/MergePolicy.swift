/// Which segments to merge (LevelDB's levels, Lucene's log merge policy): segments are grouped
/// into size classes a factor `F` apart (below `F × base` documents is class 0, then up to `F²
/// × base`, ...), and once a class holds `F` segments they are merged into one of the next class.
/// So a document is rewritten once per class, about log_F(N / base) times in all: the bytes a
/// write costs stay bounded, and the number of segments stays below `F` per class.
///
/// A merge writes at most `maxDocuments` (Lucene's `maxMergedSegmentMB`): a segment of half that
/// or more is full and joins no merge of its class, and a class merges only as many of its
/// oldest segments as stay under the cap together. A merge's memory grows with the documents it
/// writes (each input's map of new ordinals, 4 bytes a document, and the new ID filter), so the
/// cap is what keeps it flat however large the store grows; the cost is more segments, about
/// one per `maxDocuments / 2` documents of the store.
///
/// A segment whose deleted documents reach half its documents is rewritten on its own, so that
/// updates to old documents do not leave large segments mostly dead.
struct MergePolicy {
    /// Segments per merge, and the size ratio between classes.
    let factor: Int
    /// The documents of a flush: the size of class 0.
    let base: Int
    /// The most documents (live, and tombstones) a merge writes.
    let maxDocuments: Int

    init(factor: Int, base: Int, maxDocuments: Int = .max) {
        self.factor = factor
        self.base = base
        self.maxDocuments = max(2, maxDocuments)
    }

    /// Whether a segment of `documents` live documents and tombstones is too large to join a
    /// merge of its class.
    func isFull(_ documents: Int) -> Bool {
        documents >= maxDocuments / 2
    }

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
        var classes: [Int: [(number: Int, size: Int)]] = [:]
        for segment in segments {
            let live = segment.liveDocuments + segment.tombstones - segment.deletedTombstones
            guard !isFull(live) else { continue }
            classes[sizeClass(live), default: []].append((segment.number, live))
        }
        for level in classes.keys.sorted() {
            let members = classes[level]!
            guard members.count >= factor else { continue }
            // The oldest, as many as the cap takes (two always fit: neither is full).
            var total = 0
            var chosen: [Int] = []
            for member in members.prefix(factor) {
                guard chosen.count < 2 || total + member.size <= maxDocuments else { break }
                total += member.size
                chosen.append(member.number)
            }
            return chosen
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
