import ArchivistBase
import Dispatch
import Foundation

extension DocumentStore {
    /// The bytes of an entry's projected fields (from memory, or read from the index file, which
    /// must be the one the entry was loaded from).
    func fieldsBytes(of entry: IndexEntry) throws(StoreError) -> [UInt8] {
        try changeLog.fieldsBytes(of: entry)
    }

    /// The projected values of `paths` for each of `ids` (nil for an ID with no document, and for
    /// a path the projection lacks or the document does not have), read from each one's index
    /// line: what a listing of a few documents needs, without building any index.
    public func projectedValues(of ids: [String], paths: [String]) throws(StoreError) -> [[String: JSONValue]?] {
        let projected = paths.filter { projection.paths.contains($0) }
        let wanted = projected.map { Array($0.utf8) }
        var result: [[String: JSONValue]?] = []
        result.reserveCapacity(ids.count)
        for id in ids {
            guard let entry = try entry(forID: id) else {
                result.append(nil)
                continue
            }
            let bytes = try fieldsBytes(of: entry)
            var values = [JSONValue?](repeating: nil, count: wanted.count)
            if let problem = bytes.withUnsafeBufferPointer({ Self.extract(wanted, from: $0, into: &values) }) {
                throw .unreadableIndex(path: changeLog.path, error: problem)
            }
            var row: [String: JSONValue] = [:]
            for (path, value) in zip(projected, values) { if let value { row[path] = value } }
            result.append(row)
        }
        return result
    }

    /// The values of `paths` for each of `entries`, read with one pass over the index file (on
    /// all cores). The caller holds the state lock, with `entries` taken from the current state.
    func readColumns(_ paths: [String], of entries: [IndexEntry], _ state: inout State) throws(StoreError) -> [String: [JSONValue?]] {
        try readColumns(paths, of: entries, index: state.index)
    }

    /// `readColumns` of entries read from the index file at `index` (its identity and what was
    /// read of it): safe to call from any thread while the caller holds the state lock.
    func readColumns(_ paths: [String], of entries: [IndexEntry], index: ChangeLog.Position) throws(StoreError) -> [String: [JSONValue?]] {
        let indexPath = changeLog.path
        let needsFile = entries.contains { if case .indexFile = $0.fields { return true } else { return false } }
        // Read ahead when the entries are most of the file (the whole store); else only the
        // pages the entries' lines are on (the tail, a flush).
        let size = needsFile ? try fileSystem.status(of: indexPath)?.size ?? 0 : 0
        let mostOfTheFile = entries.count * 512 > size / 2
        let file =
            needsFile
            ? try (mostOfTheFile ? fileSystem.mappedContents(of: indexPath) : fileSystem.mappedContentsForRandomReads(of: indexPath))
                ?? FileBytes([]) : FileBytes([])
        if needsFile {
            // Another process may have replaced the index since it was loaded.
            guard try fileSystem.status(of: indexPath)?.identity == index.identity, file.buffer.count >= index.consumed else {
                throw .io(path: indexPath, operation: "read", message: "the index was replaced while it was read")
            }
        }
        let wanted = paths.map { Array($0.utf8) }
        let boxes = paths.map { _ in ParallelSlots<JSONValue?>(count: entries.count, initial: nil) }
        let failure = FailureBox()
        let workers = entries.count >= 4096 ? ProcessInfo.processInfo.activeProcessorCount : 1
        nonisolated(unsafe) let whole = file.buffer
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var values = [JSONValue?](repeating: nil, count: wanted.count)
            var ordinal = worker
            while ordinal < entries.count {
                for i in values.indices { values[i] = nil }
                switch entries[ordinal].fields {
                case .inline(let bytes):
                    if let problem = bytes.withUnsafeBufferPointer({ Self.extract(wanted, from: $0, into: &values) }) {
                        failure.record(problem)
                    }
                case .logLine:
                    // A segment's entry: its line found by its number (a binary search each).
                    guard let bytes = try? self.changeLog.fieldsBytes(of: entries[ordinal]) else {
                        failure.record(JSONSyntaxError(offset: 0, reason: "no line numbered \(entries[ordinal].sequence)"))
                        break
                    }
                    if let problem = bytes.withUnsafeBufferPointer({ Self.extract(wanted, from: $0, into: &values) }) {
                        failure.record(problem)
                    }
                case .indexFile(let offset, let length):
                    let problem =
                        offset + length <= whole.count
                        ? Self.extract(wanted, from: UnsafeBufferPointer(rebasing: whole[offset..<(offset + length)]), into: &values)
                        : JSONSyntaxError(offset: 0, reason: "fields beyond the end of the file")
                    if var problem {
                        // Offsets in the message count from the start of the index file.
                        problem.offset += offset
                        failure.record(problem)
                    }
                }
                for (i, value) in values.enumerated() { boxes[i].set(ordinal, value) }
                ordinal += workers
            }
        }
        if let problem = failure.first {
            throw .unreadableIndex(path: indexPath, error: problem)
        }
        var columns: [String: [JSONValue?]] = [:]
        for (path, box) in zip(paths, boxes) { columns[path] = box.values }
        return columns
    }

    /// Reads the members of a fields object whose keys are wanted (others are only skipped).
    static func extract(_ wanted: [[UInt8]], from buffer: UnsafeBufferPointer<UInt8>, into values: inout [JSONValue?]) -> JSONSyntaxError? {
        var reader = JSONParser.Reader(buffer)
        var found = 0
        do throws(JSONSyntaxError) {
            reader.skipWhitespace()
            guard reader.index < buffer.count, buffer[reader.index] == UInt8(ascii: "{") else { throw reader.fail("expected an object") }
            reader.index += 1
            reader.skipWhitespace()
            if reader.index < buffer.count, buffer[reader.index] == UInt8(ascii: "}") { return nil }
            repeat {
                let keySpan = try reader.memberKey()
                let key = UnsafeBufferPointer(rebasing: buffer[keySpan])
                var slot: Int?
                if key.contains(UInt8(ascii: "\\")) {
                    var keyReader = JSONParser.Reader(UnsafeBufferPointer(rebasing: buffer[(keySpan.lowerBound - 1)...]))
                    let decoded = Array(try keyReader.parseString().utf8)
                    slot = wanted.firstIndex(of: decoded)
                } else {
                    slot = nil
                    for (candidate, bytes) in wanted.enumerated() where bytes.count == key.count && bytes.first == key.first {
                        if bytes.elementsEqual(key) {
                            slot = candidate
                            break
                        }
                    }
                }
                if let slot {
                    values[slot] = try reader.parseValue()
                    found += 1
                    // Every wanted member is read: the rest of the object is not needed.
                    if found == wanted.count { return nil }
                } else {
                    try reader.skipValue()
                }
            } while try reader.memberSeparator()
            return nil
        } catch {
            return error
        }
    }
}
