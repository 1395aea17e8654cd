/// A query filter, with MongoDB's operators and semantics.
///
/// Written as a JSON filter document (`Filter(json:)`), in the infix language
/// (`FilterParser.parse`), or in Swift, including DataStoreKit's dictionary style:
/// `let filter: Filter = ["pub_date >=": "2015-07-01", "section_name": "Sports"]`.
///
/// One deliberate departure from MongoDB: strings that are ISO-8601 dates or timestamps compare as
/// instants, whatever their spelling, and a date-only value stands for the whole UTC day.
public indirect enum Filter: Sendable, Equatable {
    /// Matches every document.
    case all
    /// Matches when every filter matches.
    case and([Filter])
    /// Matches when any filter matches.
    case or([Filter])
    /// Matches when no filter matches.
    case nor([Filter])
    /// Conditions on the value at a dotted path; all must hold.
    case field(String, [Condition])
    /// Full-text search: every term must occur in the headline, abstract, snippet, lead paragraph
    /// or keywords.
    case text(String)

    /// The negation of a filter (`$nor` of one).
    public static func not(_ filter: Filter) -> Filter { .nor([filter]) }

    /// The dotted paths the filter reads (`_id` included), for deciding whether the projection
    /// can answer it.
    public var paths: Set<String> {
        switch self {
        case .all, .text: return []
        case .and(let filters), .or(let filters), .nor(let filters):
            return filters.reduce(into: Set<String>()) { $0.formUnion($1.paths) }
        case .field(let path, let conditions):
            var paths: Set<String> = [path]
            for condition in conditions {
                if case .elemMatch(.filter(let inner)) = condition {
                    paths.formUnion(inner.paths.map { path + "." + $0 })
                }
            }
            return paths
        }
    }

    /// Whether the filter contains a text search.
    public var hasTextSearch: Bool {
        switch self {
        case .text: return true
        case .all, .field: return false
        case .and(let filters), .or(let filters), .nor(let filters): return filters.contains { $0.hasTextSearch }
        }
    }
}
