import ArchivistBase
import ArchivistStore

/// One row of output: named values in the order they are shown.
public struct Record: Sendable, Equatable {
    /// The columns and their values.
    public var fields: [(name: String, value: JSONValue)]

    /// Creates a record from name/value pairs.
    public init(_ fields: [(String, JSONValue)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Compares names and values.
    public static func == (lhs: Record, rhs: Record) -> Bool {
        lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    /// The record as a JSON object (keys kept in column order).
    public var jsonObject: JSONValue {
        .object(fields.map { JSONMember(key: $0.name, value: $0.value) })
    }
}
