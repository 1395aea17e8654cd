import Foundation

/// Case- and accent-insensitive text: the folding and the tokenizer of full-text search and `~`.
public enum TextFolding {
    /// Lower-cases and strips accents (`Café` → `cafe`); ASCII takes a fast path.
    public static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            if !text.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) { return text }
            return String(decoding: text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// The folded words of a text: runs of letters and digits (an apostrophe inside a word is
    /// dropped, so `Trump's` gives `trumps`). ASCII is handled byte by byte; other characters are
    /// folded one at a time through a cache.
    public static func tokens(_ text: String) -> [String] {
        if let tokens = text.utf8.withContiguousStorageIfAvailable({ tokens(utf8: $0) }) { return tokens }
        return Array(text.utf8).withUnsafeBufferPointer { tokens(utf8: $0) }
    }

    /// `tokens` of well-formed UTF-8: ASCII bytes are taken as they are, and each other
    /// character is decoded and folded.
    static func tokens(utf8 bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        var tokens: [String] = []
        var current: [UInt8] = []
        current.reserveCapacity(32)
        func finish() {
            guard !current.isEmpty else { return }
            tokens.append(String(decoding: current, as: UTF8.self))
            current.removeAll(keepingCapacity: true)
        }
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                index += 1
                switch byte {
                case 48...57, 97...122: current.append(byte)
                case 65...90: current.append(byte + 32)
                case 39 where !current.isEmpty: continue
                default: finish()
                }
                continue
            }
            // A character of 2 to 4 bytes (the string's UTF-8 is well-formed).
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
            var value = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            for offset in 1..<length where index + offset < count {
                value = value << 6 | UInt32(bytes[index + offset] & 0x3F)
            }
            index += length
            guard let scalar = Unicode.Scalar(value) else {
                finish()
                continue
            }
            switch ScalarFolding.fold(scalar) {
            case .word(let folded): current.append(contentsOf: folded.utf8)
            case .apostrophe where !current.isEmpty: continue
            default: finish()
            }
        }
        finish()
        return tokens
    }

    /// How many times a folded word occurs as a whole word of `text` (as `tokens` would split
    /// it), counted on the bytes for ASCII text and through `tokens` otherwise.
    static func occurrences(of word: [UInt8], in text: String) -> Int {
        guard !word.isEmpty else { return 0 }
        var text = text
        let ascii: Int? = text.withUTF8 { bytes -> Int? in
            // Apostrophes join words ("Trump's" is "trumps"): leave such text to the tokenizer.
            if bytes.contains(where: { $0 >= 0x80 || $0 == 39 }) { return nil }
            @inline(__always) func isWordByte(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }
            let n = bytes.count, m = word.count
            guard m <= n else { return 0 }
            var count = 0
            var i = 0
            while i <= n - m {
                var matched = true
                for j in 0..<m {
                    var c = bytes[i + j]
                    if c >= 65 && c <= 90 { c += 32 }
                    if c != word[j] { matched = false; break }
                }
                if matched && (i == 0 || !isWordByte(bytes[i - 1])) && (i + m == n || !isWordByte(bytes[i + m])) { count += 1 }
                i += 1
            }
            return count
        }
        if let ascii { return ascii }
        let target = String(decoding: word, as: UTF8.self)
        return tokens(text).filter { $0 == target }.count
    }

    /// A quick test that may say yes wrongly but never says no wrongly: whether `text` could hold
    /// the folded word (ASCII text is searched byte by byte, ignoring case; other text is folded).
    static func mayContain(_ text: String, folded word: [UInt8]) -> Bool {
        guard let first = word.first else { return true }
        var text = text
        return text.withUTF8 { bytes -> Bool in
            // Accented letters may fold into the word, and apostrophes join words ("Trump's" is
            // "trumps"): only plain ASCII text is checked here.
            if bytes.contains(where: { $0 >= 0x80 || $0 == 39 }) { return true }
            let n = bytes.count, m = word.count
            guard m <= n else { return false }
            var i = 0
            while i <= n - m {
                var c = bytes[i]
                if c >= 65 && c <= 90 { c += 32 }
                if c == first {
                    var j = 1
                    while j < m {
                        var d = bytes[i + j]
                        if d >= 65 && d <= 90 { d += 32 }
                        if d != word[j] { break }
                        j += 1
                    }
                    if j == m { return true }
                }
                i += 1
            }
            return false
        }
    }
}
