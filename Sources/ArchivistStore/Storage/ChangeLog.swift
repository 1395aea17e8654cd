import ArchivistBase
import Dispatch

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The change log: the owner of `index.jsonl`, the store's append-only record of every change
/// (the file keeps its name): the grammar of its lines (`docs/FORMAT.md`, "index.jsonl"), decoding
/// them on all cores, reading the file while other processes append to it, appending a batch, and
/// rewriting the whole file.
///
/// A line is an entry (`{"id":..,"seq":..,"file":..,"hash":..,"size":..,"stored_at":..,
/// "updated_at":..,"fields":{..}}`) or a removal (`{"id":..,"seq":..,"removed_at":..,"fields":{..}}`,
/// its fields when known); `seq` is the change's sequence number (lines written before format 3
/// have none: they are numbered by their place). The last line for an ID wins. A final line
/// without its newline is a write in progress, or one a crash cut: readers leave it, and the next
/// writer cuts it before appending.
struct ChangeLog {
    /// One decoded line: an entry, or the removal of an ID.
    enum Line: Sendable {
        /// The document's entry as of this line.
        case entry(IndexEntry)
        /// The ID was removed.
        case removal(Removal)

        /// The ID the line is about.
        var id: String {
            switch self {
            case .entry(let entry): return entry.id
            case .removal(let removal): return removal.id
            }
        }

        /// The line with its sequence number set.
        func numbered(_ sequence: Int) -> Line {
            switch self {
            case .entry(var entry):
                entry.sequence = sequence
                return .entry(entry)
            case .removal(var removal):
                removal.sequence = sequence
                return .removal(removal)
            }
        }
    }

    /// A removal line: the ID, its number, when, and the removed document's fields when the line
    /// holds them (format 3 on).
    struct Removal: Sendable, Equatable {
        var id: String
        var sequence = 0
        var removedAt: Timestamp?
        var fields: FieldsReference?
    }

    /// How far the file has been read: which file (its identity, which changes when the file is
    /// replaced) and how many of its bytes and lines are taken in.
    struct Position: Equatable {
        /// The file's identity when it was read; nil when there was no file.
        var identity: UInt64?
        /// Bytes consumed: always the end of a complete line.
        var consumed = 0
        /// Lines consumed (blank lines are not counted).
        var lines = 0
        /// The sequence number of the last line consumed (0: none yet).
        var sequence = 0
    }

    /// The outcome of reading the whole file.
    enum Load: Error, Equatable {
        /// Every complete line was read.
        case loaded
        /// There is no `index.jsonl`.
        case missing
        /// A line is not an index line.
        case unreadable(line: Int, reason: String)

        /// Whether the file could not be read as an index.
        var isUnreadable: Bool {
            if case .unreadable = self { return true }
            return false
        }
    }

    /// The outcome of reading what was appended since a position.
    enum Progress {
        /// Nothing new.
        case current
        /// New lines were read.
        case advanced
        /// The file was replaced, shrank, vanished or holds a bad line: read it again from the start.
        case replaced
    }

    /// The file system the file lives on.
    let fileSystem: any FileSystem
    /// The file's path.
    let path: String

    /// The change log of a data folder: `index.jsonl`, or `file` (relative to the folder) while a
    /// new log is written aside.
    init(folder: String, fileSystem: any FileSystem, file: String = FileNames.index) {
        self.fileSystem = fileSystem
        self.path = folder + "/" + file
    }
}

// MARK: Encoding

extension ChangeLog {
    /// An entry's line (without its newline), `file` its document's path. The ID comes first, for
    /// people; the projected fields come last, so opening the index can take their span without
    /// reading them.
    static func entryLine(_ entry: IndexEntry, sequence: Int, fields fieldsJSON: [UInt8], file: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fieldsJSON.count + entry.id.utf8.count * 2 + 160)
        appendEntryLine(
            entry, sequence: sequence, fields: fieldsJSON, file: file, storedAt: Array(entry.storedAt.description.utf8),
            updatedAt: Array(entry.updatedAt.description.utf8), to: &out)
        return out
    }

    /// Appends an entry's line (without its newline), its file and times given as written.
    static func appendEntryLine(
        _ entry: IndexEntry, sequence: Int, fields fieldsJSON: [UInt8], file: String, storedAt: [UInt8], updatedAt: [UInt8],
        to out: inout [UInt8]
    ) {
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(entry.id, into: &out)
        out.append(contentsOf: #","seq":"#.utf8)
        out.append(contentsOf: String(sequence).utf8)
        out.append(contentsOf: #","file":"#.utf8)
        JSONWriter.writeString(file, into: &out)
        out.append(contentsOf: #","hash":""#.utf8)
        out.append(contentsOf: FNV1a64.hex(entry.hash).utf8)
        out.append(contentsOf: #"","size":"#.utf8)
        out.append(contentsOf: String(entry.size).utf8)
        out.append(contentsOf: #","stored_at":""#.utf8)
        out.append(contentsOf: storedAt)
        out.append(contentsOf: #"","updated_at":""#.utf8)
        out.append(contentsOf: updatedAt)
        out.append(contentsOf: #"","fields":"#.utf8)
        out.append(contentsOf: fieldsJSON)
        out.append(UInt8(ascii: "}"))
    }

    /// A removal line (without its newline); `fields` is the removed document's projected fields
    /// as its last entry held them (so that a changes feed can tell whether a removal matches a
    /// filter), when known.
    static func removalLine(id: String, sequence: Int, at time: Timestamp, fields: [UInt8]?) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &out)
        out.append(contentsOf: #","seq":"#.utf8)
        out.append(contentsOf: String(sequence).utf8)
        out.append(contentsOf: #","removed_at":""#.utf8)
        out.append(contentsOf: time.description.utf8)
        out.append(UInt8(ascii: "\""))
        if let fields {
            out.append(contentsOf: #","fields":"#.utf8)
            out.append(contentsOf: fields)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Lines being assembled for one write, with where each entry's fields land in them.
    struct Batch {
        /// The sequence number of the batch's next line.
        private(set) var nextSequence: Int
        /// The lines, each ending in a newline.
        private(set) var bytes: [UInt8] = []
        /// How many lines.
        private(set) var count = 0
        /// For each entry line, where its fields object is within `bytes`.
        private(set) var fieldSpans: [(id: DocumentID, offset: Int, length: Int)] = []

        /// The last two times written, as text: a batch's lines mostly share them.
        private var times: [(Timestamp, [UInt8])] = []

        /// An empty batch whose first line gets sequence number `firstSequence`.
        init(firstSequence: Int) {
            nextSequence = firstSequence
        }

        /// The sequence number of the batch's last line (the one before the first when empty).
        var lastSequence: Int { nextSequence - 1 }

        /// Adds an entry's line; `file` is its document's path.
        mutating func append(_ entry: IndexEntry, fields: [UInt8], file: String, sequence: Int? = nil) {
            let sequence = sequence ?? nextSequence
            nextSequence = sequence + 1
            ChangeLog.appendEntryLine(
                entry, sequence: sequence, fields: fields, file: file, storedAt: text(of: entry.storedAt),
                updatedAt: text(of: entry.updatedAt), to: &bytes)
            // The fields object is last, just before the closing brace.
            fieldSpans.append((DocumentID(entry.id), bytes.count - 1 - fields.count, fields.count))
            bytes.append(0x0A)
            count += 1
        }

        /// A time as an index line writes it (`2016-08-12T00:00:00.000Z`).
        private mutating func text(of time: Timestamp) -> [UInt8] {
            if let known = times.first(where: { $0.0 == time }) { return known.1 }
            let text = Array(time.description.utf8)
            if times.count == 2 { times.removeFirst() }
            times.append((time, text))
            return text
        }

        /// Adds a removal line, with the removed document's projected fields when known.
        mutating func appendRemoval(of id: String, at time: Timestamp, fields: [UInt8]? = nil) {
            bytes.append(contentsOf: ChangeLog.removalLine(id: id, sequence: nextSequence, at: time, fields: fields))
            nextSequence += 1
            bytes.append(0x0A)
            count += 1
        }
    }
}

// MARK: Decoding

extension ChangeLog {
    /// The members of one line as they are read, before they make an entry.
    private struct Members {
        var id: String?
        var hash: UInt64?
        var size: Int?
        var storedAt: Timestamp?
        var updatedAt: Timestamp?
        var fields: Range<Int>?
        var sequence: Int?
        var removedAt: Timestamp?
        var removed = false
        var valid = true
    }

    /// One line as the changes feed reads it: the line, its sequence number when it states one,
    /// and for a removal the removed document's fields when the line holds them.
    struct FullLine {
        var line: Line
        var sequence: Int?
        var removedFields: FieldsReference?
        /// A removal's time, when it reads as one.
        var removedAt: Timestamp?
    }

    /// Decodes one line (without its newline) without building a tree for its fields: they are
    /// only located, and referred to at `lineOffset` (the line's offset in the file) plus their
    /// place in the line; their content is checked when a query reads them, and by `check`.
    /// Throws on invalid JSON; nil when the JSON is not an index line.
    static func decode(_ line: UnsafeBufferPointer<UInt8>, lineOffset: Int) throws(JSONSyntaxError) -> Line? {
        try decodeFull(line, lineOffset: lineOffset)?.line
    }

    /// As `decode(_:lineOffset:)`, with the line's sequence number and a removal's fields.
    static func decodeFull(_ line: UnsafeBufferPointer<UInt8>, lineOffset: Int) throws(JSONSyntaxError) -> FullLine? {
        var reader = JSONParser.Reader(line)
        reader.skipWhitespace()
        guard reader.index < line.count, line[reader.index] == UInt8(ascii: "{") else {
            _ = try reader.parseDocument()
            return nil
        }
        reader.index += 1
        var members = Members()
        reader.skipWhitespace()
        if reader.index < line.count, line[reader.index] == UInt8(ascii: "}") {
            reader.index += 1
        } else {
            repeat {
                try readMember(&reader, line, into: &members)
            } while try reader.memberSeparator()
        }
        reader.skipWhitespace()
        if reader.index < line.count { throw reader.fail("unexpected data after the value") }
        guard members.valid, let id = members.id, !id.isEmpty else { return nil }
        let located = members.fields.map { FieldsReference.indexFile(offset: lineOffset + $0.lowerBound, length: $0.count) }
        if members.removed {
            return FullLine(
                line: .removal(Removal(id: id, removedAt: members.removedAt, fields: located)), sequence: members.sequence,
                removedFields: located, removedAt: members.removedAt)
        }
        guard let hash = members.hash, let size = members.size, let storedAt = members.storedAt,
            let updatedAt = members.updatedAt
        else { return nil }
        let entry = IndexEntry(
            id: id, hash: hash, size: size, storedAt: storedAt, updatedAt: updatedAt, fields: located ?? .inline(Array("{}".utf8)))
        return FullLine(line: .entry(entry), sequence: members.sequence, removedFields: nil)
    }

    /// Reads one member of a line. Keys and the short string values are compared and read as
    /// bytes: no String is made for them (this runs on every line at every open).
    private static func readMember(
        _ reader: inout JSONParser.Reader, _ line: UnsafeBufferPointer<UInt8>,
        into members: inout Members
    ) throws(JSONSyntaxError) {
        let key = MemberKey(UnsafeBufferPointer(rebasing: line[try reader.memberKey()]))
        let start = reader.index
        switch key {
        case .fields:
            guard start < line.count, line[start] == UInt8(ascii: "{") else {
                try reader.skipValue()
                members.valid = false
                return
            }
            members.fields = try fieldsSpan(&reader, line, from: start)
        case .hash, .storedAt, .updatedAt:
            guard start < line.count, line[start] == UInt8(ascii: "\"") else {
                try reader.skipValue()
                members.valid = false
                return
            }
            try reader.skipString()
            let value = UnsafeBufferPointer(rebasing: line[(start + 1)..<(reader.index - 1)])
            switch key {
            case .hash: members.hash = Hex.value(value)
            case .storedAt: members.storedAt = Timestamp(bytes: value)
            default: members.updatedAt = Timestamp(bytes: value)
            }
        case .id:
            guard case .string(let text) = try reader.parseValue() else {
                members.valid = false
                return
            }
            members.id = text
        case .size:
            if let value = plainInteger(&reader, line) {
                members.size = value
            } else if case .number(let text) = try reader.parseValue() {
                members.size = Int(text)
            } else {
                members.valid = false
            }
        case .seq:
            // A positive integer (at most 2^53, as JSON readers keep exactly); anything else is not
            // an index line.
            var value = plainInteger(&reader, line)
            if value == nil, case .number(let text) = try reader.parseValue() { value = Int(text) }
            if let value, value > 0, value <= Self.maximumSequence {
                members.sequence = value
            } else {
                members.valid = false
            }
        case .removedAt:
            if start < line.count, line[start] == UInt8(ascii: "\"") {
                try reader.skipString()
                members.removedAt = Timestamp(bytes: UnsafeBufferPointer(rebasing: line[(start + 1)..<(reader.index - 1)]))
            } else {
                try reader.skipValue()
            }
            members.removed = true
        case .other:
            try reader.skipValue()
        }
    }

    /// The keys of an index line's members that `readMember` reads, told from the key's bytes.
    private enum MemberKey {
        case id, hash, size, storedAt, updatedAt, fields, removedAt, seq, other

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            func equals(_ text: StaticString) -> Bool {
                text.utf8CodeUnitCount == bytes.count && memcmp(text.utf8Start, bytes.baseAddress!, bytes.count) == 0
            }
            switch bytes.count {
            case 2: self = equals("id") ? .id : .other
            case 3: self = equals("seq") ? .seq : .other
            case 4: self = equals("hash") ? .hash : equals("size") ? .size : .other
            case 6: self = equals("fields") ? .fields : .other
            case 9: self = equals("stored_at") ? .storedAt : .other
            case 10: self = equals("updated_at") ? .updatedAt : equals("removed_at") ? .removedAt : .other
            default: self = .other
            }
        }
    }

    /// A value of one to fifteen digits without a leading zero (what the store writes for a size
    /// or a number), read in place and passed over; nil, with nothing read, for any other value
    /// (parsed as JSON by the caller).
    private static func plainInteger(_ reader: inout JSONParser.Reader, _ line: UnsafeBufferPointer<UInt8>) -> Int? {
        var at = reader.index
        guard at < line.count, line[at] >= UInt8(ascii: "1"), line[at] <= UInt8(ascii: "9") else { return nil }
        var value = 0
        while at < line.count, line[at] >= UInt8(ascii: "0"), line[at] <= UInt8(ascii: "9") {
            guard at - reader.index < 15 else { return nil }
            value = value * 10 + Int(line[at] - UInt8(ascii: "0"))
            at += 1
        }
        // Only where the number ends: a fraction or an exponent is JSON's to read.
        guard at < line.count, [UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0D, 0x0A].contains(line[at]) else { return nil }
        reader.index = at
        return value
    }

    /// The span of the fields object starting at `start`. It is written last, so its span runs to
    /// the line's closing brace and need not be parsed; when anything follows it, it is skipped.
    private static func fieldsSpan(
        _ reader: inout JSONParser.Reader, _ line: UnsafeBufferPointer<UInt8>,
        from start: Int
    ) throws(JSONSyntaxError) -> Range<Int> {
        var end = line.count
        while end > start, [0x20, 0x09, 0x0D].contains(line[end - 1]) { end -= 1 }
        if end - 1 > start, line[end - 1] == UInt8(ascii: "}"), line[end - 2] == UInt8(ascii: "}") {
            reader.index = end - 1
            return start..<(end - 1)
        }
        try reader.skipValue()
        return start..<reader.index
    }

    /// What one thread made of one line.
    private enum Decoded {
        case blank
        case invalid(String)
        case line(Line, sequence: Int?)
    }

    /// The complete lines of a chunk of the file, decoded.
    struct Chunk {
        /// The decoded lines, in order (blank lines left out).
        var lines: [Line]
        /// Bytes of complete lines (through the last newline).
        var consumed: Int
    }

    /// Decodes the complete lines of `bytes`, which start at `baseOffset` in the file with line
    /// number `firstLine`. A final line without its newline is left. Lines are decoded on all
    /// cores when there are many. Fails with the number of the first line that is not an index line.
    static func decodeLines(_ bytes: [UInt8], baseOffset: Int, firstLine: Int) -> Result<Chunk, Load> {
        var lines: [Line] = []
        return decodeLines(bytes, baseOffset: baseOffset, firstLine: firstLine, previousSequence: 0) { line, _ in lines.append(line) }
            .map { Chunk(lines: lines, consumed: $0.consumed) }
    }

    /// As `decodeLines(_:baseOffset:firstLine:)`, handing each line and its sequence number to
    /// `each` in order as it is taken from the threads' results (no array of them is made); on a
    /// bad line the lines before it have been handed over. A line without a `seq` member (written
    /// before format 3) has the number after the previous line's (`previousSequence` before the
    /// first); one with a number not above the previous line's is not an index line. Returns how
    /// many lines and bytes it consumed, and the last line's sequence number.
    static func decodeLines(
        _ bytes: [UInt8], baseOffset: Int, firstLine: Int, previousSequence: Int, each: (Line, Int) -> Void
    ) -> Result<(lines: Int, consumed: Int, sequence: Int), Load> {
        bytes.withUnsafeBufferPointer { buffer -> Result<(lines: Int, consumed: Int, sequence: Int), Load> in
            let (ranges, consumed) = lineRanges(buffer)
            let decoded = ParallelSlots<Decoded>(count: ranges.count, initial: .blank)
            nonisolated(unsafe) let shared = buffer
            let workers = ranges.count >= 4096 ? 2 : 1
            let share = (ranges.count + workers - 1) / max(workers, 1)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for index in (worker * share)..<min(ranges.count, (worker + 1) * share) {
                    decoded.set(
                        index,
                        decodeOne(
                            UnsafeBufferPointer(rebasing: shared[ranges[index]]),
                            lineOffset: baseOffset + ranges[index].lowerBound))
                }
            }
            var count = 0
            var sequence = previousSequence
            for index in 0..<ranges.count {
                switch decoded[index] {
                case .blank: continue
                case .invalid(let reason): return .failure(.unreadable(line: firstLine + index, reason: reason))
                case .line(let line, let stated):
                    if let stated {
                        guard stated > sequence else {
                            return .failure(
                                .unreadable(
                                    line: firstLine + index,
                                    reason: "sequence number \(stated) is not above the previous line's \(sequence)"))
                        }
                        sequence = stated
                    } else {
                        sequence += 1
                    }
                    each(line.numbered(sequence), sequence)
                    count += 1
                }
            }
            return .success((count, consumed, sequence))
        }
    }

    /// The ranges of the complete lines of a buffer (without their newlines), and the bytes they
    /// span with their newlines. memchr finds newlines many bytes at a time.
    static func lineRanges(_ buffer: UnsafeBufferPointer<UInt8>) -> ([Range<Int>], Int) {
        var ranges: [Range<Int>] = []
        var lineStart = 0
        guard let base = buffer.baseAddress else { return ([], 0) }
        while lineStart < buffer.count, let found = memchr(base + lineStart, 0x0A, buffer.count - lineStart) {
            let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            ranges.append(lineStart..<index)
            lineStart = index + 1
        }
        return (ranges, lineStart)
    }

    private static func decodeOne(_ line: UnsafeBufferPointer<UInt8>, lineOffset: Int) -> Decoded {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
        do throws(JSONSyntaxError) {
            guard let decoded = try decodeFull(line, lineOffset: lineOffset) else { return .invalid("not an index entry") }
            return .line(decoded.line, sequence: decoded.sequence)
        } catch {
            return .invalid(error.description)
        }
    }
}

// MARK: Reading, appending, rewriting

extension ChangeLog {
    /// The highest sequence number a line may hold: 2^53, the largest integer every JSON reader
    /// (`jq` included) keeps exactly.
    static let maximumSequence = 1 << 53

    /// The longest index line read (its ID is at most 4 KiB; the rest is the projected fields).
    static let maximumLineBytes = 64 << 20

    /// Reads every complete line of the file (of its first `end` bytes), a chunk at a time, handing each chunk's lines to
    /// `apply` in order; `position` ends where the reading stopped. `reset` is called before each
    /// attempt: the whole file is read again when it is replaced while it is read (compaction).
    func readAll(into position: inout Position, upTo end: Int = .max, reset: () -> Void, apply: (Line) -> Void) throws(StoreError) -> Load {
        attempts: for _ in 0..<5 {
            reset()
            position = Position()
            guard let before = try fileSystem.status(of: path) else { return .missing }
            position.identity = before.identity
            var chunkSize = 16 << 20
            reading: while true {
                let limit = min(chunkSize, end - position.consumed)
                guard limit > 0 else { break reading }
                guard let chunk = try fileSystem.contents(of: path, from: position.consumed, limit: limit) else {
                    continue attempts
                }
                switch Self.decodeLines(
                    chunk, baseOffset: position.consumed, firstLine: position.lines + 1, previousSequence: position.sequence,
                    each: { line, _ in apply(line) })
                {
                case .failure(let failure):
                    reset()
                    position.lines = 0
                    return failure
                case .success(let decoded):
                    position.lines += decoded.lines
                    position.consumed += decoded.consumed
                    position.sequence = decoded.sequence
                    if chunk.count < limit { break reading }
                    // A line longer than the chunk: read a larger chunk, up to the longest line
                    // an index can hold (a hostile or damaged file is refused, not read whole).
                    if decoded.consumed == 0 {
                        guard chunkSize < Self.maximumLineBytes else {
                            reset()
                            let lines = position.lines
                            position.lines = 0
                            return .unreadable(line: lines + 1, reason: "longer than \(Self.maximumLineBytes >> 20) MiB without a line end")
                        }
                        chunkSize = min(chunkSize * 2, Self.maximumLineBytes)
                    }
                }
            }
            guard try fileSystem.status(of: path)?.identity == before.identity else { continue }
            return .loaded
        }
        throw .io(path: path, operation: "read", message: "the file kept changing while it was read")
    }

    /// Reads the complete lines after `position` in a chunk of about `limit` bytes (more when a
    /// line is longer), handing them to `apply` and advancing `position`. Returns whether it read
    /// any (false: the end); throws `Load.unreadable` on a line that is not an index line, and an
    /// I/O error when the file was replaced since `position` was taken.
    func readChunk(_ position: inout Position, limit: Int = 16 << 20, apply: (Line) -> Void) throws(StoreError) -> Result<Bool, Load> {
        guard let status = try fileSystem.status(of: path) else { return .success(false) }
        if let identity = position.identity, identity != status.identity {
            throw .io(path: path, operation: "read", message: "the file was replaced while it was read")
        }
        position.identity = status.identity
        var size = limit
        while true {
            guard let chunk = try fileSystem.contents(of: path, from: position.consumed, limit: size), !chunk.isEmpty else {
                return .success(false)
            }
            switch Self.decodeLines(
                chunk, baseOffset: position.consumed, firstLine: position.lines + 1, previousSequence: position.sequence,
                each: { line, _ in apply(line) })
            {
            case .failure(let failure):
                return .failure(failure)
            case .success(let decoded):
                if decoded.consumed == 0 {
                    // A torn last line, or a line longer than the chunk.
                    guard chunk.count == size else { return .success(false) }
                    guard size < Self.maximumLineBytes else {
                        return .failure(
                            .unreadable(
                                line: position.lines + 1, reason: "longer than \(Self.maximumLineBytes >> 20) MiB without a line end"))
                    }
                    size = min(size * 2, Self.maximumLineBytes)
                    continue
                }
                position.lines += decoded.lines
                position.consumed += decoded.consumed
                position.sequence = decoded.sequence
                return .success(true)
            }
        }
    }

    /// Reads the lines appended since `position`, handing them to `apply`. Anything but plain
    /// growth by complete index lines is `.replaced`: the caller reads the file again.
    func follow(_ position: inout Position, apply: (Line) -> Void) throws(StoreError) -> Progress {
        guard let status = try fileSystem.status(of: path) else {
            return position.identity == nil ? .current : .replaced
        }
        if status.identity != position.identity || status.size < position.consumed { return .replaced }
        guard status.size > position.consumed else { return .current }
        guard let tail = try fileSystem.contents(of: path, from: position.consumed) else { return .replaced }
        guard
            case .success(let decoded) = Self.decodeLines(
                tail, baseOffset: position.consumed, firstLine: position.lines + 1, previousSequence: position.sequence,
                each: { line, _ in apply(line) })
        else { return .replaced }
        position.lines += decoded.lines
        position.consumed += decoded.consumed
        position.sequence = decoded.sequence
        return decoded.consumed > 0 ? .advanced : .current
    }

    /// Appends a batch's complete lines (not synced: the writer syncs the folder), advances
    /// `position`, and returns where in the file each new entry's fields now are.
    func append(_ batch: Batch, at position: inout Position) throws(StoreError) -> [(DocumentID, FieldsReference)] {
        let base = position.consumed
        try fileSystem.append(batch.bytes, to: path)
        if position.identity == nil {
            position.identity = try fileSystem.status(of: path)?.identity
        }
        position.consumed += batch.bytes.count
        position.lines += batch.count
        position.sequence = max(position.sequence, batch.lastSequence)
        return batch.fieldSpans.map { ($0.id, .indexFile(offset: base + $0.offset, length: $0.length)) }
    }

    /// Cuts what follows `position` (a torn line a crashed writer left); true when there was any.
    @discardableResult
    func cutTornTail(after position: Position) throws(StoreError) -> Bool {
        let size = try fileSystem.status(of: path)?.size ?? 0
        guard size > position.consumed else { return false }
        try fileSystem.truncate(path, to: position.consumed)
        return true
    }

    /// The bytes of an entry's projected fields: from memory, or read from this file (which must
    /// be the one the entry was read from).
    func fieldsBytes(of entry: IndexEntry) throws(StoreError) -> [UInt8] {
        switch entry.fields {
        case .inline(let bytes):
            return bytes
        case .indexFile(let offset, let length):
            guard let bytes = try fileSystem.contents(of: path, from: offset, limit: length), bytes.count == length else {
                throw .io(path: path, operation: "read", message: "the index changed while it was read")
            }
            return bytes
        case .logLine:
            return try fieldsBytes(ofLine: entry.sequence, id: entry.id)
        }
    }

    /// The projected fields of the line numbered `sequence`, which must be an entry of `id`: found
    /// by a search over the file's offsets (its lines are in sequence order; `line(after:end:)`).
    func fieldsBytes(ofLine sequence: Int, id: String) throws(StoreError) -> [UInt8] {
        let end = try fileSystem.status(of: path)?.size ?? 0
        let located = try line(after: sequence - 1, end: end)
        let start = located?.start ?? end
        var found: Change?
        if let located, located.sequence == sequence,
            let bytes = try fileSystem.contents(of: path, from: located.start, limit: located.end - located.start),
            bytes.count == located.end - located.start
        {
            // The line the search found, read alone (not the window after it).
            found = bytes.withUnsafeBufferPointer { line in
                (try? Self.decodeFull(line, lineOffset: start)).flatMap {
                    Self.change($0, sequence: sequence, line: line, lineOffset: start)
                }
            }
        } else {
            // Lines without a stated number are numbered by their place, from the start.
            _ = try readChanges(from: start, end: end, previous: start == 0 ? 0 : sequence - 1, since: sequence - 1) { change in
                found = change
                return false
            }
        }
        guard let found, found.sequence == sequence, UTF8Bytes.equal(found.id, id), found.kind != .removed else {
            throw .io(
                path: path, operation: "read", message: "no entry of ID \(StoreError.quote(id)) numbered \(sequence) (the index changed)")
        }
        return found.fieldsJSON
    }

    /// A line (without its newline) that states no number, written again with `sequence` (the
    /// number of its place): what a rewrite of the file writes for a line of before format 3,
    /// which a new file would otherwise number by its new place. `decoded` is the line's decoding,
    /// at `lineOffset`.
    /// Appends a line a rewrite keeps, and its newline, to `pending`: as it is, or numbered
    /// (`numberedLine`) while the lines have no `seq` (those of before format 3 come first;
    /// `numbersStated` turns true at the first that has one). `schema` names the documents' files.
    static func appendKept(
        _ bytes: UnsafeBufferPointer<UInt8>, lineOffset: Int, sequence: Int, numbersStated: inout Bool, to pending: inout [UInt8],
        schema: StoreSchema
    ) {
        if !numbersStated, let stated = try? decodeFull(bytes, lineOffset: lineOffset), stated.sequence == nil {
            pending.append(contentsOf: numberedLine(stated, bytes: bytes, lineOffset: lineOffset, sequence: sequence, schema: schema))
        } else {
            numbersStated = true
            pending.append(contentsOf: bytes)
        }
        pending.append(0x0A)
    }

    static func numberedLine(
        _ decoded: FullLine, bytes: UnsafeBufferPointer<UInt8>, lineOffset: Int, sequence: Int, schema: StoreSchema
    ) -> [UInt8] {
        func fields(_ reference: FieldsReference?) -> [UInt8]? {
            guard case .indexFile(let offset, let length)? = reference else { return nil }
            let start = offset - lineOffset
            guard start >= 0, start + length <= bytes.count else { return nil }
            return Array(bytes[start..<(start + length)])
        }
        switch decoded.line {
        case .entry(let entry):
            return entryLine(
                entry, sequence: sequence, fields: fields(entry.fields) ?? Array("{}".utf8),
                file: FileNames.documentPath(for: entry.id, in: schema))
        case .removal(let removal):
            return removalLine(
                id: removal.id, sequence: sequence, at: decoded.removedAt ?? Timestamp(milliseconds: 0),
                fields: fields(decoded.removedFields))
        }
    }
}
