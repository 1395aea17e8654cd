extension JSONParser {
    /// The compact form of the JSON value in `bytes`, exactly what `JSONWriter.compactBytes` of
    /// `parse(bytes)` writes, made in one pass without building the value; nil when the bytes are
    /// not valid JSON or need what only a parse does (an object whose keys are not in increasing
    /// byte order, or repeat), so the caller parses them and reports the error a parse reports.
    ///
    /// A document written by the store (keys sorted, one of each) is copied token by token: white
    /// space dropped, numbers and plain strings as they are, strings with escapes or DEL decoded
    /// and written again as the writer writes them.
    public static func compactCopy(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var reader = Reader(buffer)
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            do throws(JSONSyntaxError) {
                if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { reader.index = 3 }
                reader.skipWhitespace()
                guard reader.index < buffer.count, try reader.compactValue(into: &out) else { return nil }
                reader.skipWhitespace()
                return reader.index == buffer.count ? out : nil
            } catch {
                return nil
            }
        }
    }
}

extension JSONParser.Reader {
    /// Writes the compact form of the value at `index`; false when only a parse can say what it is
    /// (keys out of order or repeated).
    mutating func compactValue(into out: inout [UInt8]) throws(JSONSyntaxError) -> Bool {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            out.append(UInt8(ascii: "{"))
            if try enterContainer(closing: UInt8(ascii: "}")) {
                out.append(UInt8(ascii: "}"))
                return true
            }
            var previousKey: String?
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try parseString()
                if let previousKey, !JSONValue.keyPrecedes(previousKey, key) { return false }
                previousKey = key
                JSONWriter.writeString(key, into: &out)
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                out.append(UInt8(ascii: ":"))
                skipWhitespace()
                guard try compactValue(into: &out) else { return false }
                guard try memberSeparator() else { break }
                out.append(UInt8(ascii: ","))
            }
            depth -= 1
            out.append(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            out.append(UInt8(ascii: "["))
            if try enterContainer(closing: UInt8(ascii: "]")) {
                out.append(UInt8(ascii: "]"))
                return true
            }
            while true {
                skipWhitespace()
                guard try compactValue(into: &out) else { return false }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end of input") }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    break
                }
                guard bytes[index] == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
                index += 1
                out.append(UInt8(ascii: ","))
            }
            depth -= 1
            out.append(UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            try compactString(into: &out)
        default:
            // true, false, null and numbers are written as they are read.
            let start = index
            _ = try parseValue()
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        }
        return true
    }

    /// Writes the string at `index` as the writer writes it: its bytes as they are when they hold
    /// no escape, control character or DEL (and are valid UTF-8), else decoded and written again.
    private mutating func compactString(into out: inout [UInt8]) throws(JSONSyntaxError) {
        let quote = index
        var position = index + 1
        var ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte == 0x7F {
                JSONWriter.writeString(try parseString(), into: &out)
                return
            }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        guard position < bytes.count else { throw fail("unterminated string", at: quote) }
        let content = UnsafeBufferPointer(rebasing: bytes[(quote + 1)..<position])
        if !ascii, !UTF8Bytes.isValid(content) { throw fail("invalid UTF-8 in string", at: quote) }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[quote...position]))
        index = position + 1
    }
}
