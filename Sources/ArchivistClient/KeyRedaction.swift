/// The one rule that keeps the API key out of every message, URL and file: each occurrence of the
/// key is replaced by `REDACTED`. URLs built for messages carry `api-key=REDACTED` from the start
/// (`SearchRequest.redactedURL`); this catches the rest, such as a server body that echoes the key.
public struct KeyRedaction: Sendable {
    /// What stands for the key in text.
    public static let placeholder = "REDACTED"

    /// The key to hide.
    let key: String

    /// Redaction of `key` (an empty key hides nothing).
    public init(key: String) {
        self.key = key
    }

    /// `text` with every occurrence of the key replaced by the placeholder, compared byte by byte:
    /// a key followed by a combining mark (`KEY\u{301}`, one character to a `String` search) is
    /// still found.
    public func callAsFunction(_ text: String) -> String {
        let key = Array(self.key.utf8)
        guard let first = key.first else { return text }
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == first, bytes[index...].starts(with: key) {
                result.append(contentsOf: Self.placeholder.utf8)
                index += key.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
