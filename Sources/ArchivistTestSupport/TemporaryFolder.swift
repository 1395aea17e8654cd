import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh folder for one test, made by mkdtemp(3) under the system's temporary folder (`$TMPDIR`,
/// else `/tmp`), and removed by `remove()` or when it is freed: a suite that holds one in a property
/// needs no deinit; a test that holds one in a local variable calls `remove()` in a `defer`, which
/// also keeps the folder for the whole test.
///
/// ```
/// <root>/data/   the data folder the tests open a store on (not made in advance: the store makes it)
/// ```
public final class TemporaryFolder: Sendable {
    /// Why mkdtemp(3) failed.
    public struct CannotCreate: Error, CustomStringConvertible {
        /// The folder it was to be made in.
        public let parent: String
        /// mkdtemp's errno.
        public let code: Int32

        /// The parent and the error.
        public var description: String { "cannot make a temporary folder in \(parent): errno \(code)" }
    }

    /// The folder.
    public let root: String
    /// The data folder inside it.
    public var data: String { root + "/data" }
    /// Whether the folder has been removed (so that a folder of the same name made since by
    /// another test is never removed by this one's deinit).
    private let removed = Atomic<Bool>(false)

    /// Makes a new folder in `parent`, else in the system's temporary folder.
    public init(in parent: String? = nil) throws {
        var parent = parent ?? FileManager.default.temporaryDirectory.path
        while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
        var template = Array((parent + "/archivist-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else { throw CannotCreate(parent: parent, code: errno) }
        root = String(cString: made)
    }

    /// Deletes the folder and everything in it (once; later calls do nothing).
    public func remove() {
        guard removed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        try? FileManager.default.removeItem(atPath: root)
    }

    deinit { remove() }
}
