/// Index lines being assembled for one write, with where each entry's fields land in them.
struct IndexLines {
    /// The lines, each ending in a newline.
    private(set) var bytes: [UInt8] = []
    /// How many lines.
    private(set) var count = 0
    /// For each entry line, where its fields object is within `bytes`.
    private(set) var fieldSpans: [(id: DocumentID, offset: Int, length: Int)] = []

    /// Adds an entry's line.
    mutating func append(_ entry: IndexEntry, fields: [UInt8]) {
        let line = entry.line(fields: fields)
        // The fields object is last, just before the closing brace.
        fieldSpans.append((DocumentID(entry.id), bytes.count + line.count - 1 - fields.count, fields.count))
        bytes.append(contentsOf: line)
        bytes.append(0x0A)
        count += 1
    }

    /// Adds a removal line.
    mutating func appendRemoval(of id: String, at time: Timestamp) {
        bytes.append(contentsOf: IndexEntry.removalLine(id: id, at: time))
        bytes.append(0x0A)
        count += 1
    }
}
