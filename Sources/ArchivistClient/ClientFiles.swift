import ArchivistBase

/// The side files the NYT client keeps in a data folder, beside the documents (their grammar is
/// in `docs/FORMAT.md`). They are the client's, not derived data: `check` reports one that is not
/// valid JSON and `repair` leaves it alone.
public enum ClientFiles {
    /// The saved searches (`search --save`).
    public static let savedSearches = "searches.json"
    /// The NYT API requests per UTC day, and the time of the last one (for pacing).
    public static let apiUsage = "api-usage.json"
    /// The Archive API months fetched: complete, partial or failed, with their counts.
    public static let archive = "archive.json"
    /// Every side file of the client.
    public static let all = [savedSearches, apiUsage, archive]
}
