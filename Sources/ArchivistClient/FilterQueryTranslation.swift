import ArchivistBase

/// Translates the simple `fq` filters people write into store filters, so an offline answer from
/// the cache can honour them: `field:value`, `field:"value"`, `field:("a" "b")` (any of), clauses
/// joined by `AND`. Anything else (ranges, wildcards, OR between fields) is not translated.
///
/// The API's filter fields are read where a stored document keeps them: the keyword facets
/// (`subject`, `glocations`, `persons`, `organizations`, `creative_works`) as a `keywords` element
/// of that name, `headline` as words of `headline.main`, `kicker` as `headline.kicker`, `pub_year`
/// as a year of `pub_date`, and `FIELD.contains` as a substring ignoring case and accents. Other
/// fields are paths of the document (`section_name`, `news_desk`, `type_of_material`, ...); fields
/// whose text is not stored (`body`, `day_of_week`) are not translated.
public enum FilterQueryTranslation {
    /// The API's keyword facets: each is a `keywords` element with this `name`.
    static let keywordFacets: Set<String> = ["subject", "glocations", "persons", "organizations", "creative_works"]
    /// API fields whose values a stored document does not hold.
    static let unstoredFields: Set<String> = ["body", "body.search", "day_of_week", "secpg"]

    /// The store filter for `fq`, or nil when it uses syntax beyond the simple subset.
    public static func filter(for fq: String) -> Filter? {
        var clauses: [Filter] = []
        var rest = Substring(fq.trimmingCharacters(in: .whitespaces))
        while !rest.isEmpty {
            guard let colon = rest.firstIndex(of: ":") else { return nil }
            let field = rest[..<colon].trimmingCharacters(in: .whitespaces)
            guard !field.isEmpty, field.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }) else { return nil }
            rest = rest[rest.index(after: colon)...].drop { $0 == " " }
            var values: [String] = []
            if rest.first == "(" {
                guard let close = rest.firstIndex(of: ")") else { return nil }
                var inside = rest[rest.index(after: rest.startIndex)..<close]
                while true {
                    inside = inside.drop { $0 == " " }
                    if inside.isEmpty { break }
                    let wasQuoted = inside.first == "\""
                    guard let (value, after) = word(inside) else { return nil }
                    inside = after
                    if !wasQuoted {
                        // Inside the parentheses, OR is the default meaning; AND and NOT are not.
                        if value == "OR" || value == "||" { continue }
                        if ["AND", "NOT", "&&", "!"].contains(value) { return nil }
                    }
                    values.append(value)
                }
                rest = rest[rest.index(after: close)...]
            } else {
                guard let (value, after) = word(rest) else { return nil }
                values.append(value)
                rest = after
            }
            guard !values.isEmpty, let clause = clause(field: field, values: values) else { return nil }
            clauses.append(clause)
            rest = rest.drop { $0 == " " }
            if rest.isEmpty { break }
            guard rest.hasPrefix("AND ") else { return nil }
            rest = rest.dropFirst(4).drop { $0 == " " }
        }
        guard !clauses.isEmpty else { return nil }
        return clauses.count == 1 ? clauses[0] : .and(clauses)
    }

    /// The store filter for one clause: any of `values` in the API's `field`.
    static func clause(field: String, values: [String]) -> Filter? {
        guard !unstoredFields.contains(field) else { return nil }
        let isContains = field.hasSuffix(".contains")
        let base = isContains ? String(field.dropLast(".contains".count)) : field
        guard !base.isEmpty else { return nil }
        func anyOf(_ filters: [Filter]) -> Filter { filters.count == 1 ? filters[0] : .or(filters) }
        func text(_ value: String) -> Condition { isContains ? .contains(value) : .eq(.string(value)) }
        if keywordFacets.contains(base) {
            return anyOf(
                values.map { value in
                    .field(
                        "keywords",
                        [
                            .elemMatch(
                                .filter(
                                    .and([
                                        .field("name", [.eq(.string(base))]),
                                        .field("value", [text(value)]),
                                    ])))
                        ])
                })
        }
        switch base {
        case "headline", "headline.search":
            // Lucene matches the words of the headline: a substring ignoring case and accents.
            return anyOf(values.map { .field("headline.main", [.contains($0)]) })
        case "kicker":
            return anyOf(values.map { .field("headline.kicker", [text($0)]) })
        case "pub_year":
            guard !isContains else { return nil }
            var years: [Filter] = []
            for value in values {
                guard value.utf8.count == 4, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
                years.append(.field("pub_date", [.gte(.string("\(value)-01-01")), .lte(.string("\(value)-12-31"))]))
            }
            return anyOf(years)
        default:
            if isContains { return anyOf(values.map { .field(base, [.contains($0)]) }) }
            return values.count == 1 ? .field(base, [.eq(.string(values[0]))]) : .field(base, [.in(values.map(JSONValue.string))])
        }
    }

    /// A quoted string or a bare word at the start of `text`, and what follows it.
    private static func word(_ text: Substring) -> (String, Substring)? {
        if text.first == "\"" {
            let body = text.dropFirst()
            guard let end = body.firstIndex(of: "\"") else { return nil }
            return (String(body[..<end]), body[body.index(after: end)...])
        }
        let end = text.firstIndex { $0 == " " || $0 == ")" || $0 == "(" || $0 == "\"" } ?? text.endIndex
        let value = text[..<end]
        // Wildcards, fuzzy and boost markers, ranges and escapes are Lucene syntax, not values.
        guard !value.isEmpty, !value.contains(where: { "*?~^[]{}\\:".contains($0) }) else { return nil }
        return (String(value), text[end...])
    }
}
