/// A JSON document parsed whole except for the elements of one array, which are checked and
/// located but not built: for bodies such as an Archive API month (tens of megabytes, nearly all
/// of it in `response.docs`), whose envelope is wanted at once and whose elements are wanted a few
/// at a time.
public struct DeferredJSON: Sendable {
    /// The document, with the deferred array (when found) left empty: `[]`.
    public var root: JSONValue
    /// Where each element of the deferred array lies in the parsed bytes, in order; nil when the
    /// document has no array at that key path (the key is missing, or holds something else).
    public var elements: [Range<Int>]?
}

extension JSONParser {
    /// Parses `bytes` as `parse(_:)` does, checking every byte, but leaves the array at `path`
    /// (object keys from the top, such as `["response", "docs"]`) unbuilt: its elements are checked
    /// and their byte ranges returned, for `parse(_:)` of each later. The whole text must be valid,
    /// so a body cut off anywhere fails here, before any element is used.
    ///
    /// - Throws: `JSONSyntaxError` for invalid JSON, with the offset and the reason.
    public static func parse(_ bytes: [UInt8], deferringArrayAt path: [String]) throws(JSONSyntaxError) -> DeferredJSON {
        let result: Result<DeferredJSON, JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(buffer)
            do throws(JSONSyntaxError) {
                if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { reader.index = 3 }
                reader.skipWhitespace()
                if reader.index >= buffer.count { throw reader.fail("empty input") }
                var elements: [Range<Int>]?
                let root = try reader.parseDeferring(path[...], elements: &elements)
                reader.skipWhitespace()
                if reader.index < buffer.count { throw reader.fail("unexpected data after the value") }
                return .success(DeferredJSON(root: root, elements: elements))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension JSONParser.Reader {
    /// Parses the value at `index`; when `path` is empty and the value is an array, records its
    /// elements' ranges in `elements` instead of building them. Along the path, objects are built
    /// member by member, descending into the member named by the path's first key (the last
    /// occurrence wins when a key repeats, as in a parse).
    mutating func parseDeferring(_ path: ArraySlice<String>, elements: inout [Range<Int>]?) throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        if path.isEmpty, bytes[index] == UInt8(ascii: "[") {
            var ranges: [Range<Int>] = []
            if try enterContainer(closing: UInt8(ascii: "]")) {
                elements = ranges
                return .array([])
            }
            repeat {
                skipWhitespace()
                let start = index
                try skipValue()
                ranges.append(start..<index)
            } while try elementSeparator()
            depth -= 1
            elements = ranges
            return .array([])
        }
        guard let key = path.first, bytes[index] == UInt8(ascii: "{") else { return try parseValue() }
        if try enterContainer(closing: UInt8(ascii: "}")) { return .object([]) }
        var members: [JSONMember] = []
        repeat {
            let name = try memberName()
            if UTF8Bytes.equal(name, key) {
                var found: [Range<Int>]?
                let value = try parseDeferring(path.dropFirst(), elements: &found)
                elements = found  // a repeated key: the last one counts, as in a parse
                members.append(JSONMember(key: name, value: value))
            } else {
                members.append(JSONMember(key: name, value: try parseValue()))
            }
        } while try memberSeparator()
        depth -= 1
        return .object(JSONValue.sortedMembers(members))
    }
}
