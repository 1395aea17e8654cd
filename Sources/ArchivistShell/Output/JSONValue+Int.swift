import ArchivistBase
import ArchivistStore

extension JSONValue {
    /// An integer number.
    static func int(_ value: Int) -> JSONValue { .number(String(value)) }
}
