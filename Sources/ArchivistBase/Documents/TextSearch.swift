/// Full-text search over the text fields a schema names, each with a weight in the relevance score.
public struct TextSearch: Sendable, Equatable {
    /// A searched field.
    public struct Field: Sendable, Equatable {
        /// The dotted path of the field.
        public var path: String
        /// Its weight in the relevance score: an occurrence of a term counts this much.
        public var weight: Double

        /// A searched field.
        public init(_ path: String, weight: Double) {
            self.path = path
            self.weight = weight
        }
    }

    /// The searched fields.
    public var fields: [Field]

    /// A search over these fields.
    public init(fields: [Field]) {
        self.fields = fields
    }

    /// The searched paths.
    public var paths: [String] { fields.map(\.path) }
}
