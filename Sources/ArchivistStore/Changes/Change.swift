import ArchivistBase

/// One committed change of a data folder, as the changes feed gives it: its sequence number, the
/// document's ID, what happened, when, and the document's projected fields as the change left them
/// (for a removal, as they were before it).
public struct Change: Sendable, Equatable {
    /// What a change did to its document.
    public enum Kind: String, Sendable, Equatable {
        /// The document was stored for the first time (or again after a removal).
        case added
        /// The document's content changed.
        case updated
        /// The document was removed.
        case removed
    }

    /// The change's sequence number: strictly increasing per data folder, never reused.
    public var sequence: Int
    /// The document's ID.
    public var id: String
    /// What happened.
    public var kind: Kind
    /// When: the document's `updated_at`, or the removal's time.
    public var time: Timestamp
    /// The compact JSON object of the document's projected fields (dotted path to value) after the
    /// change, or before a removal (`{}` when the removal's line does not hold them).
    public var fieldsJSON: [UInt8]

    /// Creates a change.
    public init(sequence: Int, id: String, kind: Kind, time: Timestamp, fieldsJSON: [UInt8]) {
        self.sequence = sequence
        self.id = id
        self.kind = kind
        self.time = time
        self.fieldsJSON = fieldsJSON
    }

    /// The projected fields, parsed (empty when they do not parse).
    public var fields: [String: JSONValue] {
        guard case .object(let members)? = try? JSONParser.parse(fieldsJSON) else { return [:] }
        var fields: [String: JSONValue] = [:]
        for member in members { fields[member.key] = member.value }
        return fields
    }
}
