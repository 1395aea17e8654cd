import ArchivistBase
import Synchronization

/// The first error several threads ran into.
final class FailureBox: Sendable {
    private let error = Mutex<JSONSyntaxError?>(nil)

    func record(_ error: JSONSyntaxError) {
        self.error.withLock { if $0 == nil { $0 = error } }
    }

    var first: JSONSyntaxError? { error.withLock { $0 } }
}
