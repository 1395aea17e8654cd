/// A held lock; release it once.
public protocol FileLockToken: AnyObject, Sendable {
    /// Releases the lock.
    func release()
}
