/// How results are printed.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// Aligned columns for people (the default on a terminal).
    case table
    /// One JSON value (an array for several records).
    case json
    /// One JSON value per line (the default when stdout is not a terminal).
    case jsonl
    /// A header line and one line per record.
    case csv
}

extension OutputFormat {
    /// The formats as messages list them: `table, json, jsonl or csv`.
    static var choices: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}
