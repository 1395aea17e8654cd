/// A JSON value kept exactly as it was given: numbers keep their literal text, `null` stays `null`,
/// and object members keep every key.
///
/// Objects hold their members sorted by the UTF-8 bytes of their keys (the order documents are
/// written in), with at most one member per key (the last one given wins, as in most parsers).
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its literal JSON text (`879`, `0.0`, `1e5`), so integers stay integers.
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object whose members are sorted by key bytes.
    case object([JSONMember])
}

extension JSONValue {
    /// Builds an object from members given in any order; a repeated key keeps its last value.
    public static func object(sorting members: [JSONMember]) -> JSONValue {
        .object(JSONValue.sortedMembers(members))
    }

    /// Sorts members by key bytes and drops all but the last member for each key.
    static func sortedMembers(_ members: [JSONMember]) -> [JSONMember] {
        if members.count < 2 { return members }
        var inOrder = true
        for i in 1..<members.count where !JSONValue.keyPrecedes(members[i - 1].key, members[i].key) {
            inOrder = false
            break
        }
        if inOrder { return members }
        // Stable sort by key keeps input order among equal keys; then keep the last of each run.
        let sorted = members.enumerated().sorted { a, b in
            if JSONValue.keyPrecedes(a.element.key, b.element.key) { return true }
            if JSONValue.keyPrecedes(b.element.key, a.element.key) { return false }
            return a.offset < b.offset
        }.map(\.element)
        var result: [JSONMember] = []
        result.reserveCapacity(sorted.count)
        for member in sorted {
            if let last = result.last, UTF8Bytes.equal(last.key, member.key) {
                result[result.count - 1] = member
            } else {
                result.append(member)
            }
        }
        return result
    }

    /// Whether key `a` sorts before key `b` (byte order of UTF-8, as `jq -S` and `sort` do).
    public static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        UTF8Bytes.precedes(a, b)
    }

    /// The value of member `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where UTF8Bytes.equal(member.key, key) {
            return member.value
        }
        return nil
    }

    /// Returns this object with member `key` set to `value` (added or replaced).
    public func setting(_ key: String, to value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { UTF8Bytes.equal($0.key, key) }) {
            members[index].value = value
        } else {
            let position = members.firstIndex(where: { JSONValue.keyPrecedes(key, $0.key) }) ?? members.count
            members.insert(JSONMember(key: key, value: value), at: position)
        }
        return .object(members)
    }

    /// The string payload, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The name of this value's JSON type, for messages (`object`, `array`, `string`, ...).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Whether this value is an array.
    public var isArray: Bool {
        if case .array = self { return true }
        return false
    }

    /// Whether this value is an object.
    public var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// Every value at a dotted path (`headline.main`).
    public func values(atPath path: String) -> [JSONValue] {
        values(atPath: FieldPath.components(path))
    }

    /// Follows a dotted key path (`headline.main`, `keywords.value`). Arrays on the way are
    /// traversed element by element, so the result is every value found, flattened one level
    /// per array crossed (as MongoDB does).
    public func values(atPath path: [String]) -> [JSONValue] {
        var current: [JSONValue] = [self]
        for key in path {
            var next: [JSONValue] = []
            for value in current {
                switch value {
                case .object:
                    if let child = value[key] { next.append(child) }
                case .array(let elements):
                    // A numeric key indexes the array (`multimedia.0.url`); otherwise each
                    // element that is an object is followed.
                    if let position = Int(key), position >= 0, key.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                        if position < elements.count { next.append(elements[position]) }
                    } else {
                        for element in elements {
                            if let child = element[key] { next.append(child) }
                        }
                    }
                default:
                    break
                }
            }
            current = next
            if current.isEmpty { break }
        }
        return current
    }
}
