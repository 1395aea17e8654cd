import ArchivistBase
import Dispatch
import Synchronization

/// A flush built beside the writes (`DocumentStore+BackgroundFlushing.swift`): the tail as it was
/// at one commit, written on another thread to `segments/flushing/`, and installed at a later
/// commit if nothing replaced what it was planned against.
final class PendingFlush: Sendable {
    /// The new segment's number, reserved in the manifest when the flush was planned.
    let number: Int
    /// How far the log had been read when the tail was taken: what the segment covers.
    let position: ChangeLog.Position
    /// The manifest's coverage when the flush was planned: the segment is installed only while it
    /// is unchanged (no other flush, compaction or rebuild in between).
    let coverage: Manifest.Coverage
    /// The projection the segment is built with.
    let projection: Projection
    /// The IDs of the segment's documents and tombstones (what it supersedes in older segments).
    let ids: [String]
    /// The segment file being built, relative to the folder.
    let aside: String
    private let outcome = Mutex<Result<Manifest.Segment, StoreError>?>(nil)
    private let building = DispatchGroup()

    /// A flush of segment `number`, built by this process into `segments/flushing/`.
    init(
        number: Int, position: ChangeLog.Position, coverage: Manifest.Coverage, projection: Projection, ids: [String],
        processIdentifier: Int32
    ) {
        self.number = number
        self.position = position
        self.coverage = coverage
        self.projection = projection
        self.ids = ids
        self.aside = FileNames.flushing + "/\(processIdentifier)-" + Manifest.fileName(number: number)
        building.enter()
    }

    /// Whether the build has ended (built or failed).
    var isFinished: Bool { outcome.withLock { $0 != nil } }

    /// Records how the build ended; called once, by the thread that built it.
    func finish(_ result: Result<Manifest.Segment, StoreError>) {
        outcome.withLock { $0 = result }
        building.leave()
    }

    /// Waits until the build has ended and returns the new segment's record or why it failed.
    func result() -> Result<Manifest.Segment, StoreError> {
        building.wait()
        return outcome.withLock { $0! }
    }

    /// The process that builds a file of `segments/flushing/`, from its name (nil: not such a name).
    static func builder(ofAside name: String) -> Int32? {
        guard let dash = name.firstIndex(of: "-") else { return nil }
        return Int32(name[..<dash])
    }
}
