import ArchivistStore

/// Translates the simple `fq` filters people write into store filters, so an offline answer from
/// the cache can honour them: `field:value`, `field:"value"`, `field:("a" "b")` (any of), clauses
/// joined by `AND`. Anything else (ranges, wildcards, OR between fields) is not translated.
public enum FilterQueryTranslation {
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
            guard !values.isEmpty else { return nil }
            clauses.append(values.count == 1 ? .field(field, [.eq(.string(values[0]))])
                                              : .field(field, [.in(values.map(JSONValue.string))]))
            rest = rest.drop { $0 == " " }
            if rest.isEmpty { break }
            guard rest.hasPrefix("AND ") else { return nil }
            rest = rest.dropFirst(4).drop { $0 == " " }
        }
        guard !clauses.isEmpty else { return nil }
        return clauses.count == 1 ? clauses[0] : .and(clauses)
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
