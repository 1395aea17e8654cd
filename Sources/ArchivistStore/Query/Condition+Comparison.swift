import ArchivistBase

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
