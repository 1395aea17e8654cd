import ArchivistBase

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading `index.jsonl` by sequence number, for the changes feed. The lines are in sequence order
/// (writers append ascending numbers, compaction keeps them in order), so the first line after a
/// number is found by a search over byte offsets (`firstLine`): a few reads of 8 KiB, not the file.
extension ChangeLog {
    /// A line found at an offset: where it starts and ends (its newline), and its sequence number
    /// when it states one (lines written before format 3 do not).
    struct LocatedLine {
        var start: Int
        var end: Int
        var sequence: Int?
    }

    /// The first complete line that starts at or after `offset` and before `end` (the end of
    /// the complete lines); nil when there is none. Blank and unreadable lines are passed over.
    func line(atOrAfter offset: Int, end: Int) throws(StoreError) -> LocatedLine? {
        // Most lines are a few KiB: one read finds the line and holds it (a probe of a binary
        // search costs a read of a few KiB, not three).
        if let found = try lineInOneWindow(atOrAfter: offset, end: end) { return found }
        var start = offset
        if start > 0 {
            // The line starts after the first newline at or after offset - 1.
            guard let newline = try firstNewline(from: start - 1, end: end) else { return nil }
            start = newline + 1
        }
        while start < end {
            guard let newline = try firstNewline(from: start, end: end) else { return nil }
            guard let bytes = try fileSystem.contents(of: path, from: start, limit: newline - start), bytes.count == newline - start
            else { return nil }
            let decoded = bytes.withUnsafeBufferPointer { try? Self.decodeFull($0, lineOffset: start) }
            if let decoded { return LocatedLine(start: start, end: newline, sequence: decoded.sequence) }
            start = newline + 1
        }
        return nil
    }

    /// `line(atOrAfter:end:)` when the line and the newline before it are in the 8 KiB from
    /// `offset - 1` and the line is an index line; nil otherwise (the caller reads it the long way).
    private func lineInOneWindow(atOrAfter offset: Int, end: Int) throws(StoreError) -> LocatedLine? {
        let from = max(0, offset - 1)
        guard from < end, let bytes = try fileSystem.contents(of: path, from: from, limit: min(8 << 10, end - from)) else {
            return nil
        }
        return bytes.withUnsafeBufferPointer { buffer -> LocatedLine? in
            guard let base = buffer.baseAddress else { return nil }
            var lineStart = 0
            if offset > 0 {
                guard let hit = memchr(base, 0x0A, buffer.count) else { return nil }
                lineStart = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
            }
            guard lineStart < buffer.count, let hit = memchr(base + lineStart, 0x0A, buffer.count - lineStart) else { return nil }
            let lineEnd = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])
            guard let decoded = try? Self.decodeFull(line, lineOffset: from + lineStart) else { return nil }
            return LocatedLine(start: from + lineStart, end: from + lineEnd, sequence: decoded.sequence)
        }
    }

    /// The offset of the first newline at or after `offset`, before `end`.
    private func firstNewline(from offset: Int, end: Int) throws(StoreError) -> Int? {
        var window = 16 << 10
        var at = offset
        while at < end {
            let limit = min(window, end - at)
            guard let bytes = try fileSystem.contents(of: path, from: at, limit: limit), !bytes.isEmpty else { return nil }
            if let found = bytes.withUnsafeBufferPointer({ buffer -> Int? in
                guard let base = buffer.baseAddress, let hit = memchr(base, 0x0A, buffer.count) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }) {
                return at + found
            }
            at += bytes.count
            window = min(window * 2, 16 << 20)
        }
        return nil
    }

    /// The first line in `low..<end` for which `holds` is true of its stated sequence number (it
    /// must be false for a prefix of the lines and true for the rest), or nil when there is none.
    ///
    /// With `target` (the first number for which `holds` is true, the lines numbered densely and
    /// in order), a probe interpolates between the numbers found at the range's two ends, a
    /// line and a half short of the estimate, as the lines of an index are of similar lengths (a
    /// test's 20,000 lines of 300 to 2,300 bytes: about 8 probes a look-up instead of a
    /// bisection's 21). A probe that does not cut the range to a quarter is followed by a
    /// bisection, so the worst case stays about twice a bisection's.
    private func firstLine(
        from low: Int, end: Int, target: Int? = nil, numberBefore: Int? = nil, where holds: (Int?) -> Bool
    ) throws(StoreError) -> LocatedLine? {
        var low = low
        var high = end
        // The numbers of the last line before `low` and of the first line at or after `high`,
        // and that line when a probe found it.
        var lowNumber = numberBefore
        var highNumber: Int?
        var highLine: LocatedLine?
        var interpolates = true
        while low < high {
            var middle = low + (high - low) / 2
            var interpolated = false
            if interpolates, let target, let before = lowNumber, let after = highNumber, after > before + 1 {
                let lines = Double(after - before)
                let lineBytes = Double(high - low) / lines
                let estimate = Double(low) + Double(target - before - 1) * lineBytes - 1.5 * lineBytes
                middle = min(max(low, Int(estimate)), high - 1)
                interpolated = true
            }
            let width = high - low
            guard let found = try line(atOrAfter: middle, end: end) else {
                high = middle
                highNumber = nil
                highLine = nil
                continue
            }
            if holds(found.sequence) {
                high = middle
                highNumber = found.sequence
                highLine = found
            } else {
                low = found.end + 1
                lowNumber = found.sequence
            }
            interpolates = !interpolated || (high - low) * 4 <= width
        }
        // The first line at or after `high` is the one the probe that last moved it found.
        if let highLine { return highLine }
        return try line(atOrAfter: low, end: end)
    }

    /// Where to start reading for the changes after sequence number `since`, in the first `end`
    /// bytes: the first line numbered above it; or 0 when lines without a stated number (before
    /// format 3, numbered by their place) may be among them.
    func offset(after since: Int, end: Int) throws(StoreError) -> Int {
        try line(after: since, end: end)?.start ?? end
    }

    /// The first line numbered above `since` in the first `end` bytes (nil: none); when lines
    /// without a stated number (before format 3) may be among those before it, the first line.
    func line(after since: Int, end: Int) throws(StoreError) -> LocatedLine? {
        guard let first = try line(atOrAfter: 0, end: end) else { return nil }
        let isAfter = { (number: Int?) in (number ?? 0) > since }
        if let number = first.sequence {
            if since < number { return first }
            return try firstLine(from: 0, end: end, target: since + 1, numberBefore: number - 1, where: isAfter)
        }
        // The unnumbered lines are a prefix, numbered 1 ... stated - 1: find the first numbered one.
        guard let numbered = try firstLine(from: 0, end: end, where: { $0 != nil }), let stated = numbered.sequence else {
            return first
        }
        if since < stated - 1 { return first }
        if since < stated { return numbered }
        return try firstLine(from: numbered.start, end: end, target: since + 1, numberBefore: stated - 1, where: isAfter)
    }

    /// Reads the lines from `offset` (a line's start) up to `end`, numbering them (a line without
    /// a number has the one after the previous line's: `previous` before the first), and hands
    /// each change numbered above `since` to `each`, which returns false to stop. Returns the
    /// number of the last line read.
    func readChanges(
        from offset: Int, end: Int, previous: Int, since: Int, each: (Change) -> Bool
    ) throws(StoreError) -> Int {
        var sequence = previous
        _ = try forEachCompleteLine(from: offset, end: end) { line, lineOffset in
            guard let decoded = try? Self.decodeFull(line, lineOffset: lineOffset) else { return true }
            sequence = decoded.sequence ?? sequence + 1
            if sequence > since, let change = Self.change(decoded, sequence: sequence, line: line, lineOffset: lineOffset) {
                return each(change)
            }
            return true
        }
        return sequence
    }

    /// Reads the complete lines from `offset` (a line's start) up to `end`, a window at a time,
    /// numbering them as `readChanges` does, and hands each index line, its bytes (without the
    /// newline), its number and its offset in the file to `each`, which returns false to stop. Blank lines are passed
    /// over; a line that is not an index line is handed to `invalid` with its line number (from
    /// `firstLine`), which returns false to stop. Returns the position after the last line read.
    func forEachLine(
        from offset: Int = 0, end: Int, previous: Int = 0, firstLine: Int = 1,
        invalid: (Int, String) -> Bool = { _, _ in false },
        _ each: (Line, UnsafeBufferPointer<UInt8>, Int, Int) -> Bool
    ) throws(StoreError) -> Position {
        var position = Position(identity: try fileSystem.status(of: path)?.identity, consumed: offset, lines: 0, sequence: previous)
        var lineNumber = firstLine
        let consumed = try forEachCompleteLine(from: offset, end: end) { line, lineOffset in
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return true }
            let number = lineNumber
            lineNumber += 1
            let decoded: FullLine?
            do throws(JSONSyntaxError) {
                decoded = try Self.decodeFull(line, lineOffset: lineOffset)
            } catch {
                return invalid(number, error.description)
            }
            guard let decoded else { return invalid(number, "not an index entry") }
            let sequence = decoded.sequence ?? position.sequence + 1
            position.sequence = sequence
            position.lines += 1
            return each(decoded.line.numbered(sequence), line, sequence, lineOffset)
        }
        position.consumed = consumed
        return position
    }

    /// Hands each complete line from `offset` (a line's start) up to `end` to `body`: its bytes
    /// (without the newline) and its offset in the file, read a window at a time (a line longer
    /// than the window doubles it, up to `maximumLineBytes`); `body` returns false to stop.
    /// Returns the position after the last line handed over (an unfinished last line is not).
    private func forEachCompleteLine(
        from offset: Int, end: Int, _ body: (UnsafeBufferPointer<UInt8>, Int) -> Bool
    ) throws(StoreError) -> Int {
        var at = offset
        var window = 1 << 20
        var stop = false
        while at < end, !stop {
            let limit = min(window, end - at)
            guard let bytes = try fileSystem.contents(of: path, from: at, limit: limit), !bytes.isEmpty else { break }
            let consumed = bytes.withUnsafeBufferPointer { buffer -> Int in
                var lineStart = 0
                while !stop, lineStart < buffer.count, let base = buffer.baseAddress,
                    let hit = memchr(base + lineStart, 0x0A, buffer.count - lineStart)
                {
                    let newline = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    if !body(UnsafeBufferPointer(rebasing: buffer[lineStart..<newline]), at + lineStart) { stop = true }
                    lineStart = newline + 1
                }
                return lineStart
            }
            if consumed == 0 {
                // A line longer than the window, or an unfinished last line.
                guard window < Self.maximumLineBytes, limit == window else { break }
                window = min(window * 2, Self.maximumLineBytes)
                continue
            }
            at += consumed
        }
        return at
    }

    /// The change a decoded line records.
    static func change(_ decoded: FullLine, sequence: Int, line: UnsafeBufferPointer<UInt8>, lineOffset: Int) -> Change? {
        func bytes(_ reference: FieldsReference?) -> [UInt8] {
            guard case .indexFile(let offset, let length)? = reference else { return Array("{}".utf8) }
            let start = offset - lineOffset
            guard start >= 0, start + length <= line.count else { return Array("{}".utf8) }
            return Array(line[start..<(start + length)])
        }
        switch decoded.line {
        case .entry(let entry):
            return Change(
                sequence: sequence, id: entry.id, kind: entry.updatedAt > entry.storedAt ? .updated : .added, time: entry.updatedAt,
                fieldsJSON: bytes(entry.fields))
        case .removal(let removal):
            return Change(
                sequence: sequence, id: removal.id, kind: .removed, time: decoded.removedAt ?? Timestamp(milliseconds: 0),
                fieldsJSON: bytes(decoded.removedFields))
        }
    }
}
