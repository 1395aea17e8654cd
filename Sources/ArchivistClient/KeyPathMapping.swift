import ArchivistBase

/// A dotted key path into a JSON document (`headline.main`), in the spirit of Mantle's
/// `JSONKeyPathsByPropertyKey`.
///
/// Only objects are followed: a step into an array, a string or `null` finds nothing, so
/// `byline.original` finds nothing when `byline` is `[]`, `null` or absent.
struct JSONKeyPath: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The keys followed in order.
    let keys: [String]

    /// A key path from its dotted text (`headline.main`).
    init(_ text: String) {
        keys = FieldPath.components(text)
    }

    /// A key path from its dotted text (`headline.main`).
    init(stringLiteral text: String) {
        self.init(text)
    }

    /// The dotted text.
    var description: String { keys.joined(separator: ".") }

    /// The value at this path in `document`, or nil when a step is missing or not an object.
    /// A `null` found at the end is returned as `.null`.
    func value(in document: JSONValue) -> JSONValue? {
        var current = document
        for key in keys {
            guard let child = current[key] else { return nil }
            current = child
        }
        return current
    }
}

/// One row of a model's mapping table: which key paths feed which property, through which
/// transformer.
///
/// The key paths are alternatives tried in order (`subsection_name`, then the misspelled
/// `subsectoinName`): the first one whose value the transformer accepts wins. When none does, the
/// property keeps its initial value (nil, or an empty array). A mapping never fails: a missing,
/// `null` or mistyped value is simply not used.
struct JSONFieldMapping<Model>: Sendable {
    /// The key paths tried in order.
    let keyPaths: [JSONKeyPath]
    /// Reads one value (already found at a key path) into the model; false when the transformer
    /// refused it.
    private let assign: @Sendable (inout Model, JSONValue) -> Bool

    /// A row that sets the property through `set` with what `transformer` accepts.
    private init<Value>(
        keyPaths: [JSONKeyPath], transformer: JSONTransformer<Value>,
        set: @escaping @Sendable (inout Model, Value) -> Void
    ) {
        self.keyPaths = keyPaths
        assign = { model, json in
            guard let value = transformer.transform(json) else { return false }
            set(&model, value)
            return true
        }
    }

    /// Maps an optional property from the first key path whose value `transformer` accepts.
    static func map<Value>(
        _ property: WritableKeyPath<Model, Value?> & Sendable, from keyPaths: JSONKeyPath...,
        using transformer: JSONTransformer<Value>
    ) -> JSONFieldMapping {
        JSONFieldMapping(keyPaths: keyPaths, transformer: transformer) { model, value in model[keyPath: property] = value }
    }

    /// Maps a non-optional property (a list) from the first key path whose value `transformer`
    /// accepts; otherwise the property keeps its initial value.
    static func map<Value>(
        _ property: WritableKeyPath<Model, Value> & Sendable, from keyPaths: JSONKeyPath...,
        using transformer: JSONTransformer<Value>
    ) -> JSONFieldMapping {
        JSONFieldMapping(keyPaths: keyPaths, transformer: transformer) { model, value in model[keyPath: property] = value }
    }

    /// Sets the property from `document`, if any of the key paths holds an accepted value.
    func apply(to model: inout Model, from document: JSONValue) {
        for keyPath in keyPaths {
            if let json = keyPath.value(in: document), assign(&model, json) { return }
        }
    }
}

/// A type read from JSON through a table of field mappings.
protocol JSONMappable: Sendable {
    /// The mapping table: one row per property read from JSON.
    static var fieldMappings: [JSONFieldMapping<Self>] { get }
}

extension JSONMappable {
    /// Fills every mapped property from `document`; unmapped and unmatched properties keep
    /// their values.
    mutating func applyFieldMappings(from document: JSONValue) {
        for mapping in Self.fieldMappings {
            mapping.apply(to: &self, from: document)
        }
    }
}
