/// Dotted key paths (`headline.main`, `keywords.value`, `multimedia.0.url`): the one place a path
/// is split into its keys, so every part of Archivist resolves `a..b` alike.
public enum FieldPath {
    /// The keys of a dotted path. Every dot separates two keys: `a..b` is `a`, an empty key and `b`,
    /// and `.a` starts with an empty key (a key no document is likely to have, so such a path finds
    /// nothing rather than something else).
    public static func components(_ path: String) -> [String] {
        path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}
