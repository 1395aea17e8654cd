/// JSON text with terminal colours, as jq shows it: keys blue and bold, strings green, numbers
/// cyan, `true` and `false` magenta, `null` grey; punctuation and white space as they are.
///
/// Only for a terminal: `get` colours its document when standard output is one, the format is
/// the table default and `NO_COLOR` is not set (https://no-color.org); `--format json` and pipes
/// get the plain bytes.
enum JSONColors {
    static let key = "\u{1B}[34;1m"
    static let string = "\u{1B}[32m"
    static let number = "\u{1B}[36m"
    static let boolean = "\u{1B}[35m"
    static let null = "\u{1B}[90m"
    static let reset = "\u{1B}[0m"

    /// `text` (JSON, as the store writes it) with colours around its keys and values. Bytes that
    /// are not JSON are passed through unchanged.
    static func colored(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count + text.count / 4)
        var index = 0
        func paint(_ color: String, _ range: Range<Int>) {
            out.append(contentsOf: color.utf8)
            out.append(contentsOf: text[range])
            out.append(contentsOf: reset.utf8)
        }
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < text.count, text[end] != UInt8(ascii: "\"") {
                    end += text[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                end = min(end + 1, text.count)
                // A key is a string followed by a colon.
                var next = end
                while next < text.count, text[next] == 0x20 || text[next] == 0x0A || text[next] == 0x09 || text[next] == 0x0D { next += 1 }
                paint(next < text.count && text[next] == UInt8(ascii: ":") ? key : string, index..<end)
                index = end
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var end = index + 1
                while end < text.count, "0123456789.eE+-".utf8.contains(text[end]) { end += 1 }
                paint(number, index..<end)
                index = end
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                let word: [UInt8] =
                    byte == UInt8(ascii: "t") ? Array("true".utf8) : byte == UInt8(ascii: "f") ? Array("false".utf8) : Array("null".utf8)
                if index + word.count <= text.count, Array(text[index..<(index + word.count)]) == word {
                    paint(byte == UInt8(ascii: "n") ? null : boolean, index..<(index + word.count))
                    index += word.count
                } else {
                    out.append(byte)
                    index += 1
                }
            default:
                out.append(byte)
                index += 1
            }
        }
        return out
    }
}
