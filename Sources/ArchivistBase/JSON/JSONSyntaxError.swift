/// Why a JSON text could not be parsed, and the byte offset (from 0) where it went wrong.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset of the problem.
    public var offset: Int
    /// What was wrong, in a few lowercase words.
    public var reason: String

    /// An error at byte `offset`.
    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// A message such as `invalid JSON at byte 17: expected ':'`.
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}
