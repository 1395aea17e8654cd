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

/// One condition on the value at a path.
public indirect enum Condition: Sendable, Equatable {
    /// `$eq`: equal (an array field matches when it or any element is equal; `null` matches missing).
    case eq(JSONValue)
    /// `$ne`: not `$eq`.
    case ne(JSONValue)
    /// `$gt`: greater, within the same type (dates as instants).
    case gt(JSONValue)
    /// `$gte`.
    case gte(JSONValue)
    /// `$lt`.
    case lt(JSONValue)
    /// `$lte`.
    case lte(JSONValue)
    /// `$in`: equal to any of the values.
    case `in`([JSONValue])
    /// `$nin`: not `$in`.
    case nin([JSONValue])
    /// `$exists`.
    case exists(Bool)
    /// `$regex` with its options (`i`, `m`, `s`, `x`).
    case regex(String, options: String)
    /// `$size`: an array with this many elements.
    case size(Int)
    /// `$all`: an array holding every value.
    case all([JSONValue])
    /// `$elemMatch`: an array element satisfying the conditions or the filter.
    case elemMatch(ElementMatch)
    /// `$not`: the conditions do not all hold (missing fields match).
    case not([Condition])
    /// The infix `~`: a string containing the text, ignoring case and accents.
    case contains(String)
}

extension Condition {
    /// The condition of a comparison operator of the infix language (`=`, `!=` or `<>`, `<`, `<=`,
    /// `>`, `>=`) with its value; nil for any other operator.
    static func comparison(_ op: String, _ value: JSONValue) -> Condition? {
        switch op {
        case "=": return .eq(value)
        case "!=", "<>": return .ne(value)
        case "<": return .lt(value)
        case "<=": return .lte(value)
        case ">": return .gt(value)
        case ">=": return .gte(value)
        default: return nil
        }
    }
}

/// What `$elemMatch` applies to each element.
public indirect enum ElementMatch: Sendable, Equatable {
    /// Conditions on the element itself (`{"$gte": 80, "$lt": 85}`).
    case conditions([Condition])
    /// A filter on the element as a document (`{"name": "subject", "value": "Politics"}`).
    case filter(Filter)
}

/// A sort key: a dotted path, ascending unless descending.
public struct SortKey: Sendable, Equatable {
    /// The dotted path.
    public var path: String
    /// Whether larger values come first.
    public var isDescending: Bool

    /// Creates a sort key.
    public init(_ path: String, descending: Bool = false) {
        self.path = path
        self.isDescending = descending
    }

    /// Parses `FIELD` or `FIELD:desc` / `FIELD:asc`.
    public init?(parsing text: String) {
        var path = text
        var descending = false
        if let colon = text.lastIndex(of: ":") {
            let order = text[text.index(after: colon)...].lowercased()
            guard order == "desc" || order == "asc" else { return nil }
            descending = order == "desc"
            path = String(text[..<colon])
        }
        guard !path.isEmpty else { return nil }
        self.init(path, descending: descending)
    }
}

/// A whole query: a filter, a sort, a window and the fields to return.
public struct Query: Sendable, Equatable {
    /// Which documents.
    public var filter: Filter
    /// In which order (ties broken by ID); empty means by ID, or by relevance for a text search.
    public var sort: [SortKey]
    /// How many matching documents to pass over.
    public var skip: Int
    /// How many to return at most.
    public var limit: Int?

    /// Creates a query.
    public init(filter: Filter = .all, sort: [SortKey] = [], skip: Int = 0, limit: Int? = nil) {
        self.filter = filter
        self.sort = sort
        self.skip = skip
        self.limit = limit
    }

    /// The part of an ordered list of matches the query returns: `skip` passed over, at most `limit` kept.
    func window<Element>(_ ordered: [Element]) -> [Element] {
        let start = min(skip, ordered.count)
        let end = limit.map { min(ordered.count, start + $0) } ?? ordered.count
        return Array(ordered[start..<end])
    }
}
