import Foundation

/// A strict JSON parser (RFC 8259) over UTF-8 bytes that keeps number literals as text.
public enum JSONParser {
    /// The deepest nesting accepted; deeper input is refused rather than overflowing the stack.
    public static let maximumDepth = 512

    /// Parses one JSON value filling the whole of `bytes` (white space around it allowed).
    public static func parse<Bytes: ContiguousBytes>(_ bytes: Bytes) throws(JSONSyntaxError) -> JSONValue {
        let result: Result<JSONValue, JSONSyntaxError> = bytes.withUnsafeBytes { raw in
            var reader = Reader(raw.bindMemory(to: UInt8.self))
            do throws(JSONSyntaxError) {
                let value = try reader.parseDocument()
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON value from a string.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var copy = text
        let result: Result<JSONValue, JSONSyntaxError> = copy.withUTF8 { buffer in
            var reader = Reader(buffer)
            do throws(JSONSyntaxError) {
                return .success(try reader.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// A reader of one JSON text, a value at a time; the engine's readers of index lines and
    /// projected fields drive it member by member.
    package struct Reader {
        /// The text.
        package let bytes: UnsafeBufferPointer<UInt8>
        /// The offset of the next byte to read.
        package var index = 0
        var depth = 0

        /// A reader at the start of `bytes`.
        package init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        /// The error `reason` at `offset` (the current byte when nil).
        @inlinable
        package func fail(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
            JSONSyntaxError(offset: offset ?? index, reason: reason)
        }

        /// Moves past JSON white space.
        @inlinable
        package mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        /// The whole text as one value (a leading byte order mark and white space around it allowed).
        package mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
            // A UTF-8 byte order mark is tolerated at the very start.
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
            skipWhitespace()
            if index >= bytes.count { throw fail("empty input") }
            let value = try parseValue()
            skipWhitespace()
            if index < bytes.count { throw fail("unexpected data after the value") }
            return value
        }

        /// The value at the current byte.
        package mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
            guard index < bytes.count else { throw fail("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try parseObject()
            case UInt8(ascii: "["): return try parseArray()
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            default: throw fail("expected a value")
            }
        }

        mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
            let start = index
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { throw fail("unexpected end of input", at: start) }
            let pointer = literal.utf8Start
            for i in 0..<count where bytes[index + i] != pointer[i] {
                throw fail("expected a value", at: start)
            }
            index += count
        }

        /// Enters the object or array whose opening bracket is at `index`, one level deeper (refused
        /// past `maximumDepth`); true, with the level left again, when it closes at once.
        mutating func enterContainer(closing: UInt8) throws(JSONSyntaxError) -> Bool {
            depth += 1
            if depth > JSONParser.maximumDepth { throw fail("nested deeper than \(JSONParser.maximumDepth) levels") }
            index += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == closing else { return false }
            index += 1
            depth -= 1
            return true
        }

        mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
            if try enterContainer(closing: UInt8(ascii: "}")) { return .object([]) }
            var members: [JSONMember] = []
            repeat {
                let key = try memberName()
                members.append(JSONMember(key: key, value: try parseValue()))
            } while try memberSeparator()
            depth -= 1
            return .object(JSONValue.sortedMembers(members))
        }

        /// Reads an object member's name and the ':' after it (white space around them skipped).
        @inline(__always)
        mutating func memberName() throws(JSONSyntaxError) -> String {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let name = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            guard bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            return name
        }

        mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
            if try enterContainer(closing: UInt8(ascii: "]")) { return .array([]) }
            var elements: [JSONValue] = []
            repeat {
                skipWhitespace()
                elements.append(try parseValue())
            } while try elementSeparator()
            depth -= 1
            return .array(elements)
        }

        /// Moves past the ',' or ']' after an array element; true when another element follows.
        @inline(__always)
        mutating func elementSeparator() throws(JSONSyntaxError) -> Bool {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                return true
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return false
            }
            throw fail("expected ',' or ']'")
        }

        mutating func parseNumber() throws(JSONSyntaxError) -> String {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if isDigit(bytes[index]) {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            } else {
                throw fail("expected a digit")
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit after '.'") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit in the exponent") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        @inline(__always) func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }

        /// The string at the current byte (its quote), decoded.
        package mutating func parseString() throws(JSONSyntaxError) -> String {
            let quote = index
            index += 1
            let start = index
            // Fast path: no escapes; validate UTF-8 through String's own check.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    guard let string = UTF8Bytes.string(validating: slice) else {
                        throw fail("invalid UTF-8 in string", at: quote)
                    }
                    return string
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw fail("control character in string") }
                index += 1
            }
            guard index < bytes.count else { throw fail("unterminated string", at: quote) }
            // Slow path with escapes.
            var scratch: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    guard let string = scratch.withUnsafeBufferPointer({ UTF8Bytes.string(validating: $0) }) else {
                        throw fail("invalid UTF-8 in string", at: quote)
                    }
                    return string
                }
                if byte < 0x20 { throw fail("control character in string") }
                if byte != UInt8(ascii: "\\") {
                    scratch.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard index < bytes.count else { break }
                try appendEscape(to: &scratch)
            }
            throw fail("unterminated string", at: quote)
        }

        /// Decodes the escape after a backslash (at `index`) and appends its UTF-8 to `scratch`.
        private mutating func appendEscape(to scratch: inout [UInt8]) throws(JSONSyntaxError) {
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scratch.append(0x22)
            case UInt8(ascii: "\\"): scratch.append(0x5C)
            case UInt8(ascii: "/"): scratch.append(0x2F)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                let unicode = try parseUnicodeEscape()
                scratch.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                // A byte that is not printable is named by its value: a message stays one line of text.
                let shown =
                    (0x21...0x7E).contains(escape)
                    ? "'\\\(Character(Unicode.Scalar(escape)))'"
                    : "'\\' before byte 0x\(escape < 16 ? "0" : "")\(String(escape, radix: 16, uppercase: true))"
                throw fail("invalid escape \(shown)", at: index - 2)
            }
        }

        /// The scalar of a `\uXXXX` escape (its `\u` read), joining a surrogate pair.
        private mutating func parseUnicodeEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail("unpaired surrogate in string", at: index - 6)
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair", at: index - 6) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail("unpaired surrogate in string", at: index - 6)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid escape", at: index - 6) }
            return unicode
        }

        /// Checks the syntax of one value and moves past it without building it.
        package mutating func skipValue() throws(JSONSyntaxError) {
            guard index < bytes.count else { throw fail("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = bytes[index] == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if try enterContainer(closing: close) { return }
                while true {
                    skipWhitespace()
                    if isObject {
                        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                            throw fail(index < bytes.count ? "expected a string key" : "unexpected end of input")
                        }
                        try skipString()
                        skipWhitespace()
                        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                            throw fail(index < bytes.count ? "expected ':'" : "unexpected end of input")
                        }
                        index += 1
                        skipWhitespace()
                    }
                    try skipValue()
                    skipWhitespace()
                    guard index < bytes.count else { throw fail("unexpected end of input") }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    if bytes[index] == close {
                        index += 1
                        break
                    }
                    throw fail(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
                depth -= 1
            case UInt8(ascii: "\""):
                try skipString()
            default:
                _ = try parseValue()
            }
        }

        /// Reads an object member's key and the ':' after it, stopping at the value, and returns
        /// where the key's raw bytes are (escapes not decoded). For readers that pick members out
        /// of an object without building it (index lines, projected fields).
        package mutating func memberKey() throws(JSONSyntaxError) -> Range<Int> {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let start = index + 1
            try skipString()
            let end = index - 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            return start..<end
        }

        /// Moves past the ',' or '}' after an object member's value; true when another member follows.
        @inlinable @inline(__always)
        package mutating func memberSeparator() throws(JSONSyntaxError) -> Bool {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                return true
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return false
            }
            throw fail("expected ',' or '}'")
        }

        /// Moves past a string, checking escapes and control characters.
        /// Skips a string, refusing what parsing it refuses (control characters, bad escapes and
        /// surrogates, invalid UTF-8), so that skipping and parsing agree on every input.
        package mutating func skipString() throws(JSONSyntaxError) {
            let quote = index
            try skipStringStructure()
            try checkUTF8(from: quote + 1, to: index - 1, quote: quote)
        }

        /// Fails when the bytes between `start` and `end` are not UTF-8: a word-at-a-time look
        /// for bytes above 0x7F, and the validator only when there are some.
        private func checkUTF8(from start: Int, to end: Int, quote: Int) throws(JSONSyntaxError) {
            guard start < end, let base = bytes.baseAddress else { return }
            var position = start
            var ascii = true
            while position + 8 <= end {
                let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 {
                    ascii = false
                    break
                }
                position += 8
            }
            if ascii {
                while position < end {
                    if bytes[position] >= 0x80 {
                        ascii = false
                        break
                    }
                    position += 1
                }
            }
            if !ascii, !UTF8Bytes.isValid(UnsafeBufferPointer(rebasing: bytes[start..<end])) {
                throw fail("invalid UTF-8 in string", at: quote)
            }
        }

        /// Skips a string's bytes and escapes (its opening quote at `index`).
        private mutating func skipStringStructure() throws(JSONSyntaxError) {
            let quote = index
            index += 1
            // Short strings (keys, most values): one simple pass over their first bytes.
            let shortEnd = min(bytes.count, index + 24)
            var position = index
            while position < shortEnd {
                let byte = bytes[position]
                if byte == 0x22 {
                    index = position + 1
                    return
                }
                if byte == 0x5C || byte < 0x20 { break }
                position += 1
            }
            // Long strings: jump to the next quote; if nothing between needs a closer look
            // (a backslash or a control character), the string ends there.
            if position == shortEnd, let base = bytes.baseAddress, shortEnd < bytes.count,
                let found = memchr(base + shortEnd, 0x22, bytes.count - shortEnd)
            {
                let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var plain = true
                for position in shortEnd..<end where bytes[position] == 0x5C || bytes[position] < 0x20 {
                    plain = false
                    break
                }
                if plain {
                    index = end + 1
                    return
                }
            }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return
                }
                if byte < 0x20 { throw fail("control character in string") }
                if byte == UInt8(ascii: "\\") {
                    guard index + 1 < bytes.count else { break }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "u"):
                        index += 2
                        _ = try parseUnicodeEscape()
                        continue
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 2
                        continue
                    default:
                        throw fail("invalid escape", at: index)
                    }
                }
                index += 1
            }
            throw fail("unterminated string", at: quote)
        }

        mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw fail("unexpected end of input") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Hex.digit(bytes[index]) else { throw fail("invalid hex digit in \\u escape") }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
