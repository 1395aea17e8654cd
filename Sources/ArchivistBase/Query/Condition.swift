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
