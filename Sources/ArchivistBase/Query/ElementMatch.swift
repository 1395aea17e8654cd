/// What `$elemMatch` applies to each element.
public indirect enum ElementMatch: Sendable, Equatable {
    /// Conditions on the element itself (`{"$gte": 80, "$lt": 85}`).
    case conditions([Condition])
    /// A filter on the element as a document (`{"name": "subject", "value": "Politics"}`).
    case filter(Filter)
}
