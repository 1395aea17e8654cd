/// A filter compiled to SQL as two bounds on the rows of the copy: a row where `sure` holds
/// matches; a row where `possible` does not hold does not; a row in between is read and decided
/// by Archivist's own `Filter.matches`. Most filters compile exactly (`sure == possible`), so that
/// nothing is read back; a condition SQL cannot decide as Archivist does (a regular expression, a
/// date against a value that is not a date column, `$elemMatch`) only widens the band.
///
/// Both bounds are never NULL (each leaf is wrapped), so `NOT` of either is the other's
/// complement.
struct SQLPredicate: Equatable {
    /// Rows certainly matching.
    var sure: String
    /// Rows possibly matching (a superset of `sure`).
    var possible: String

    /// Whether SQL alone decides the filter.
    var isExact: Bool { sure == possible }

    /// The same condition for both bounds.
    static func exact(_ sql: String) -> SQLPredicate { SQLPredicate(sure: sql, possible: sql) }

    /// Every row.
    static let always = exact("TRUE")
    /// No row.
    static let never = exact("FALSE")
    /// Rows SQL cannot decide at all: every one is read.
    static let undecided = SQLPredicate(sure: "FALSE", possible: "TRUE")

    /// Every predicate holds.
    static func all(_ parts: [SQLPredicate]) -> SQLPredicate {
        let parts = parts.filter { $0 != .always }
        if parts.isEmpty { return .always }
        if parts.contains(.never) { return .never }
        if parts.count == 1 { return parts[0] }
        return SQLPredicate(
            sure: "(" + parts.map(\.sure).joined(separator: " AND ") + ")",
            possible: "(" + parts.map(\.possible).joined(separator: " AND ") + ")")
    }

    /// Some predicate holds.
    static func any(_ parts: [SQLPredicate]) -> SQLPredicate {
        let parts = parts.filter { $0 != .never }
        if parts.isEmpty { return .never }
        if parts.contains(.always) { return .always }
        if parts.count == 1 { return parts[0] }
        return SQLPredicate(
            sure: "(" + parts.map(\.sure).joined(separator: " OR ") + ")",
            possible: "(" + parts.map(\.possible).joined(separator: " OR ") + ")")
    }

    /// The predicate does not hold: certainly where it cannot hold, possibly where it is not
    /// certain.
    var negated: SQLPredicate {
        if self == .always { return .never }
        if self == .never { return .always }
        return SQLPredicate(sure: "(NOT \(possible))", possible: "(NOT \(sure))")
    }

    /// Where `column` holds a typed value, `typed`; elsewhere `other`.
    static func split(on column: String, typed: SQLPredicate, other: SQLPredicate) -> SQLPredicate {
        func bound(_ typed: String, _ other: String) -> String {
            switch (typed, other) {
            case ("FALSE", "FALSE"): return "FALSE"
            case ("TRUE", "TRUE"): return "TRUE"
            case ("FALSE", _): return "(\(column) IS NULL AND \(other))"
            case (_, "FALSE"): return "(\(column) IS NOT NULL AND \(typed))"
            case ("TRUE", _): return "(\(column) IS NOT NULL OR \(other))"
            case (_, "TRUE"): return "(\(column) IS NULL OR \(typed))"
            // Two arms a planner can answer from indexes (a B-tree finds `IS NULL` rows too).
            default: return "((\(column) IS NOT NULL AND \(typed)) OR (\(column) IS NULL AND \(other)))"
            }
        }
        return SQLPredicate(sure: bound(typed.sure, other.sure), possible: bound(typed.possible, other.possible))
    }
}
