/// A document's ID, compared byte for byte (Swift's `String` equality would merge IDs that are
/// canonically equivalent Unicode, such as a precomposed and a decomposed "é").
public struct DocumentID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The ID text.
    public let rawValue: String

    /// Wraps an ID.
    @inlinable
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The ID text.
    public var description: String { rawValue }

    /// Byte-wise equality.
    @inlinable
    public static func == (lhs: DocumentID, rhs: DocumentID) -> Bool {
        UTF8Bytes.equal(lhs.rawValue, rhs.rawValue)
    }

    /// Byte-wise order.
    @inlinable
    public static func < (lhs: DocumentID, rhs: DocumentID) -> Bool {
        UTF8Bytes.precedes(lhs.rawValue, rhs.rawValue)
    }

    /// Hashes the UTF-8 bytes.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        var copy = rawValue
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
