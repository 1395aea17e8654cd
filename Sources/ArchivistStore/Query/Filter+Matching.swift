import ArchivistBase
import Foundation

extension Filter {
    /// Whether a whole document matches; a text search reads the fields `textSearch` names.
    public func matches(_ document: JSONValue, textSearch: TextSearch) -> Bool {
        matches(resolve: { document.values(atPath: $0) }, textMatches: { textSearch.matches(document, terms: $0) })
    }

    /// Whether the values a resolver gives match. `resolve` returns every value at a dotted path
    /// (arrays on the way crossed, as MongoDB does; empty when missing); `textMatches` answers a
    /// text search for folded terms.
    public func matches(resolve: (String) -> [JSONValue], textMatches: ([String]) -> Bool) -> Bool {
        switch self {
        case .all: return true
        case .and(let filters): return filters.allSatisfy { $0.matches(resolve: resolve, textMatches: textMatches) }
        case .or(let filters): return filters.contains { $0.matches(resolve: resolve, textMatches: textMatches) }
        case .nor(let filters): return !filters.contains { $0.matches(resolve: resolve, textMatches: textMatches) }
        case .field(let path, let conditions):
            let values = resolve(path)
            return conditions.allSatisfy { $0.holds(for: values) }
        case .text(let search):
            let terms = TextFolding.tokens(search)
            return !terms.isEmpty && textMatches(terms)
        }
    }
}

extension Condition {
    /// The values a comparison looks at: each value, and each element of each array value.
    static func candidates(_ values: [JSONValue]) -> [JSONValue] {
        var result: [JSONValue] = []
        result.reserveCapacity(values.count)
        for value in values {
            result.append(value)
            if case .array(let elements) = value { result.append(contentsOf: elements) }
        }
        return result
    }

    /// Whether the condition holds for the values found at a path (empty: the path is missing).
    public func holds(for values: [JSONValue]) -> Bool {
        switch self {
        case .eq(let query):
            return Self.equalityHolds(values, query)
        case .ne(let query):
            return !Self.equalityHolds(values, query)
        case .gt(let query), .gte(let query), .lt(let query), .lte(let query):
            if case .null = query {
                switch self {
                case .gte, .lte: return Self.equalityHolds(values, .null)
                default: return false
                }
            }
            return Self.candidates(values).contains { candidate in
                guard let order = ValueOrder.compare(candidate, query) else { return false }
                switch self {
                case .gt: return order > 0
                case .gte: return order >= 0
                case .lt: return order < 0
                default: return order <= 0
                }
            }
        case .in(let list):
            return list.contains { Self.equalityHolds(values, $0) }
        case .nin(let list):
            return !list.contains { Self.equalityHolds(values, $0) }
        case .exists(let flag):
            return values.isEmpty != flag
        case .regex(let pattern, let options):
            guard let expression = RegexCache.expression(pattern, options: options) else { return false }
            return Self.candidates(values).contains { candidate in
                guard case .string(let text) = candidate else { return false }
                return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            }
        case .size(let count):
            return values.contains { if case .array(let elements) = $0 { return elements.count == count } else { return false } }
        case .all(let list):
            return !list.isEmpty && list.allSatisfy { Self.equalityHolds(values, $0) }
        case .elemMatch(let match):
            return values.contains { value in
                guard case .array(let elements) = value else { return false }
                return elements.contains { element in
                    switch match {
                    case .conditions(let conditions): return conditions.allSatisfy { $0.holds(for: [element]) }
                    case .filter(let filter):
                        // A filter inside $elemMatch has no $text (the parser refuses it there).
                        return element.isObject && filter.matches(element, textSearch: TextSearch(fields: []))
                    }
                }
            }
        case .not(let conditions):
            return !conditions.allSatisfy { $0.holds(for: values) }
        case .contains(let needle):
            let folded = TextFolding.fold(needle)
            return Self.candidates(values).contains { candidate in
                guard case .string(let text) = candidate else { return false }
                return folded.isEmpty || TextFolding.fold(text).contains(folded)
            }
        }
    }

    /// `$eq` with MongoDB's null rule: `null` matches a missing field.
    static func equalityHolds(_ values: [JSONValue], _ query: JSONValue) -> Bool {
        if case .null = query, values.isEmpty { return true }
        return candidates(values).contains { ValueOrder.equals($0, query) }
    }
}
