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

    /// `text` with every occurrence of the key replaced by the placeholder.
    public func callAsFunction(_ text: String) -> String {
        guard !key.isEmpty else { return text }
        return text.replacingOccurrences(of: key, with: Self.placeholder)
    }
}
