import ArchivistBase

// libFuzzer targets for the store's parsers, compiled into the ArchivistStore module itself
// (`scripts/fuzz` builds it with `-sanitize=fuzzer,address`), so that they reach internal parsers
// too. Fuzz/ShellTargets.swift holds the entry point and picks a target by ARCHIVIST_FUZZ_TARGET.
// Where two implementations must agree (parsing and skipping a value, a parse and a compact copy,
// writing then reading), the target checks that they do and traps when they do not.

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The store's targets, by name.
nonisolated(unsafe) public let storeFuzzTargets: [String: ([UInt8]) -> Void] = [
    "json": fuzzJSON,
    "deferred": fuzzDeferredJSON,
    "filter": fuzzFilter,
    "index-line": fuzzIndexLines,
    "journal": fuzzJournal,
    "snapshot": fuzzSnapshot,
    "date": fuzzDate,
]

/// The JSON parser: any bytes parse or fail; a parsed value written compact or pretty reads back
/// equal; `compactCopy` gives the compact write when it gives anything; skipping a value ends where
/// parsing it ends.
func fuzzJSON(_ bytes: [UInt8]) {
    let parsed = try? JSONParser.parse(bytes)
    if let value = parsed {
        let compact = JSONWriter.compactBytes(value)
        agree((try? JSONParser.parse(compact)) == value, "compact write then parse")
        agree((try? JSONParser.parse(JSONWriter.prettyBytes(value))) == value, "pretty write then parse")
        if let copy = JSONParser.compactCopy(bytes) { agree(copy == compact, "compactCopy differs from the compact write") }
    }
    bytes.withUnsafeBufferPointer { buffer in
        var parser = JSONParser.Reader(buffer)
        var skipper = JSONParser.Reader(buffer)
        parser.skipWhitespace()
        skipper.skipWhitespace()
        let parsedValue = try? parser.parseValue()
        let skipped: Void? = try? skipper.skipValue()
        agree((parsedValue != nil) == (skipped != nil), "parseValue and skipValue disagree on validity")
        if parsedValue != nil {
            agree(parser.index == skipper.index, "parseValue and skipValue end at \(parser.index) and \(skipper.index)")
        }
    }
}

/// The deferring parser (an Archive month's docs array read lazily) agrees with the whole parse.
func fuzzDeferredJSON(_ bytes: [UInt8]) {
    let whole = try? JSONParser.parse(bytes)
    guard let deferred = try? JSONParser.parse(bytes, deferringArrayAt: ["response", "docs"]) else { return }
    agree(whole != nil, "the deferring parser accepted what the parse refuses")
    _ = deferred
}

/// The infix filter language and the MongoDB form: any text parses or fails with an error.
func fuzzFilter(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    if let filter = try? FilterParser.parseAny(text) {
        _ = filter.paths
        _ = filter.hasTextSearch
        let document = JSONValue.object([JSONMember(key: "a", value: .string("b"))])
        _ = filter.matches(document, textSearch: TextSearch(fields: [.init("a", weight: 1)]))
    }
    _ = try? Filter(jsonText: text)
}

/// Index lines: any bytes decode as lines or fail at a line; a decoded entry written again
/// decodes to the same entry.
func fuzzIndexLines(_ bytes: [UInt8]) {
    var lines: [(ChangeLog.Line, Int)] = []
    _ = ChangeLog.decodeLines(bytes, baseOffset: 0, firstLine: 1, previousSequence: 0) { lines.append(($0, $1)) }
    var batch = ChangeLog.Batch(firstSequence: 1)
    for (line, sequence) in lines {
        if case .entry(let entry) = line {
            var fields: [UInt8] = Array("{}".utf8)
            if case .indexFile(let offset, let length) = entry.fields, offset >= 0, length >= 0, offset + length <= bytes.count {
                fields = Array(bytes[offset..<(offset + length)])
            }
            batch.append(entry, fields: fields, file: FileNames.documentPath(for: entry.id, in: .plain), sequence: sequence)
        }
    }
    var again: [ChangeLog.Line] = []
    _ = ChangeLog.decodeLines(batch.bytes, baseOffset: 0, firstLine: 1, previousSequence: 0) { line, _ in again.append(line) }
    agree(again.count == batch.count, "\(batch.count) entries written, \(again.count) read back")
}

/// Journal lines: any bytes name a set of IDs (a torn or garbage line names nothing).
func fuzzJournal(_ bytes: [UInt8]) {
    let ids = Journal.decode(bytes)
    let again = Journal.decode(Journal.encode(Array(ids)))
    agree(again == ids, "journal write then read")
}

/// A snapshot file of any bytes is refused, or read without leaving its bounds.
func fuzzSnapshot(_ bytes: [UInt8]) {
    let file = FileBytes(bytes)
    guard let reader = try? SegmentReader(file), let snapshot = try? MappedSegment(reader) else { return }
    for ordinal in 0..<min(snapshot.count, 8) {
        _ = try? snapshot.id(at: ordinal)
        _ = try? snapshot.entry(at: ordinal)
    }
    _ = try? snapshot.ordinal(of: "a")
    for path in ["section_name", "pub_date", "headline.main"] {
        _ = try? snapshot.field(path)
    }
    _ = try? snapshot.text()
    _ = try? reader.verifyAll { offset, count in
        guard offset >= 0, count >= 0, offset <= bytes.count else { return nil }
        return Array(bytes[offset..<min(bytes.count, offset + count)])
    }
}

/// Dates: any text is an instant and an interval, or neither; the start of an interval is the
/// instant and comes before its end.
func fuzzDate(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let instant = ISODate.instant(of: text)
    let interval = ISODate.interval(of: text)
    if let interval {
        agree(interval.start <= interval.end, "interval \(interval) runs backwards")
        agree(instant == interval.start, "instant \(String(describing: instant)) is not the interval's start \(interval.start)")
    }
    _ = Timestamp(parsing: text)
}
