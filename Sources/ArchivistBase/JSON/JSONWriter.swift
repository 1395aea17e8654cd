/// Writes `JSONValue`s as UTF-8: pretty (two-space indent, as `jq` prints) or compact (one line).
///
/// Keys come out in the order objects hold them (sorted by key bytes), `/` and non-ASCII text are
/// written as they are, and number literals are copied verbatim.
public enum JSONWriter {
    /// The pretty form with a trailing newline: the bytes of a document file.
    public static func prettyBytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2048)
        writePretty(value, into: &out, indent: 0)
        out.append(0x0A)
        return out
    }

    /// The compact one-line form, without a newline: a line of JSON Lines.
    public static func compactBytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        writeCompact(value, into: &out)
        return out
    }

    /// The compact form as a string.
    public static func compactString(_ value: JSONValue) -> String {
        String(decoding: compactBytes(value), as: UTF8.self)
    }

    /// The pretty form as a string, without the trailing newline.
    public static func prettyString(_ value: JSONValue) -> String {
        var bytes = prettyBytes(value)
        bytes.removeLast()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact form of `value` to `out`.
    public static func writeCompact(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let flag):
            flag ? out.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) : out.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        case .number(let literal): out.append(contentsOf: literal.utf8)
        case .string(let string): writeString(string, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeCompact(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                writeCompact(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func newline(_ out: inout [UInt8], indent: Int) {
        out.append(0x0A)
        for _ in 0..<indent { out.append(0x20) }
    }

    static func writePretty(_ value: JSONValue, into out: inout [UInt8], indent: Int) {
        switch value {
        case .array(let elements):
            if elements.isEmpty {
                out.append(contentsOf: [UInt8(ascii: "["), UInt8(ascii: "]")])
                return
            }
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent: indent + 2)
                writePretty(element, into: &out, indent: indent + 2)
            }
            newline(&out, indent: indent)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty {
                out.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
                return
            }
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent: indent + 2)
                writeString(member.key, into: &out)
                out.append(contentsOf: [UInt8(ascii: ":"), 0x20])
                writePretty(member.value, into: &out, indent: indent + 2)
            }
            newline(&out, indent: indent)
            out.append(UInt8(ascii: "}"))
        default:
            writeCompact(value, into: &out)
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `string` as a quoted JSON string.
    public static func writeString(_ string: String, into out: inout [UInt8]) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { writeString(bytes: $0, into: &out) }
        if done == nil { Array(string.utf8).withUnsafeBufferPointer { writeString(bytes: $0, into: &out) } }
    }

    /// Appends UTF-8 `bytes` as a quoted JSON string: the runs that need no escape are copied
    /// whole.
    static func writeString(bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var run = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
            if run < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index])) }
            run = index + 1
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            default:
                out.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)],
                ])
            }
        }
        if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<bytes.count])) }
        out.append(UInt8(ascii: "\""))
    }
}
