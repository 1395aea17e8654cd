import Foundation

/// The first error several threads ran into.
final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var error: JSONSyntaxError?

    func record(_ error: JSONSyntaxError) {
        lock.withLock { if self.error == nil { self.error = error } }
    }

    var first: JSONSyntaxError? { lock.withLock { error } }
}
