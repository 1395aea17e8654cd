/// Singular and plural in messages, decided in one place for every target: `1 document`,
/// `2 documents`.
public enum Plural {
    /// The count and its noun: `1 document`, `0 documents`, `2 documents` (`plural` when the noun
    /// does not just take an s).
    public static func count(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(count) " + word(for: count, singular, plural ?? singular + "s")
    }

    /// `singular` for a count of 1, else `plural`: a verb that agrees with it (`is`, `are`).
    public static func word(for count: Int, _ singular: String, _ plural: String) -> String {
        count == 1 ? singular : plural
    }
}
