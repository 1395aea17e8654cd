import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The grammar of `index.jsonl` and `journal.jsonl` lines (docs/FORMAT.md), decoded alone.
@Suite("change log and journal lines")
struct ChangeLogTests {
    static let stamp = "2026-11-29T19:25:56.123Z"

    static func decode(_ text: String, offset: Int = 0) throws -> ChangeLog.Line? {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
            try ChangeLog.decode(UnsafeBufferPointer(buffer), lineOffset: offset)
        }
    }

    static let entry =
        #"{"id":"a1","file":"docs/3f/a1.json","hash":"00ff00ff00ff00ff","size":12,"stored_at":"\#(stamp)","updated_at":"\#(stamp)","fields":{"section_name":"Sports"}}"#

    @Test("an entry line decodes to its ID, hash, size, times and the span of its fields in the file")
    func entryLineDecodes() throws {
        guard case .entry(let entry)? = try Self.decode(Self.entry, offset: 1000) else {
            Issue.record("not an entry")
            return
        }
        #expect(entry.id == "a1" && entry.hash == 0x00ff_00ff_00ff_00ff && entry.size == 12)
        #expect(entry.storedAt.description == Self.stamp && entry.updatedAt.description == Self.stamp)
        let fieldsStart = Array(Self.entry.utf8).count - 1 - #"{"section_name":"Sports"}"#.utf8.count
        #expect(entry.fields == .indexFile(offset: 1000 + fieldsStart, length: #"{"section_name":"Sports"}"#.utf8.count))
    }

    @Test("encoding an entry and decoding it gives it back, fields located where they were written")
    func entryRoundTrips() throws {
        let original = IndexEntry(
            id: "nyt://article/ü \"q\"", hash: 42, size: 7, storedAt: Timestamp(milliseconds: 1),
            updatedAt: Timestamp(milliseconds: 2), fields: .inline(Array(#"{"a":[1,{"b":"}"}]}"#.utf8)))
        var batch = ChangeLog.Batch(firstSequence: 1)
        batch.append(original, fields: Array(#"{"a":[1,{"b":"}"}]}"#.utf8), file: FileNames.documentPath(for: original.id, in: .nyt))
        batch.appendRemoval(of: "gone", at: Timestamp(milliseconds: 3))
        #expect(batch.count == 2 && batch.bytes.last == 0x0A)
        let chunk = try ChangeLog.decodeLines(batch.bytes, baseOffset: 0, firstLine: 1).get()
        #expect(chunk.consumed == batch.bytes.count && chunk.lines.count == 2)
        guard case .entry(let decoded) = chunk.lines[0], case .removal(let removed) = chunk.lines[1] else {
            Issue.record("unexpected lines \(chunk.lines)")
            return
        }
        #expect(removed.id == "gone" && removed.sequence == 2)
        #expect(decoded.id == original.id && decoded.hash == 42 && decoded.size == 7 && decoded.sequence == 1)
        guard case .indexFile(let offset, let length) = decoded.fields else {
            Issue.record("fields not located")
            return
        }
        #expect(Array(batch.bytes[offset..<(offset + length)]) == Array(#"{"a":[1,{"b":"}"}]}"#.utf8))
        #expect(batch.fieldSpans.first.map { ($0.offset, $0.length) } ?? (0, 0) == (offset, length))
    }

    @Test("a line's fields are found by its number (a binary search of one read a probe) whether lines are short or longer than the reads")
    func fieldsFoundByNumber() throws {
        let folder = try TemporaryFolder()
        var batch = ChangeLog.Batch(firstSequence: 1)
        var expected: [(id: String, fields: [UInt8])] = []
        for n in 0..<300 {
            // Mostly short lines; every 37th past the 8 KiB window, every 101st past 16 KiB.
            let padding = n % 101 == 0 ? 20_000 : n % 37 == 0 ? 9_000 : n % 5
            let fields = Array(#"{"abstract":"\#(String(repeating: "x", count: padding))","n":\#(n)}"#.utf8)
            let entry = IndexEntry(
                id: "id-\(n)", hash: UInt64(n), size: 10, storedAt: Timestamp(milliseconds: 1), updatedAt: Timestamp(milliseconds: 2),
                fields: .inline(fields))
            batch.append(entry, fields: fields, file: FileNames.documentPath(for: entry.id, in: .nyt))
            if n % 50 == 7 { batch.appendRemoval(of: "id-\(n - 1)", at: Timestamp(milliseconds: 3)) }
            expected.append((entry.id, fields))
        }
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        try Data(batch.bytes).write(to: URL(fileURLWithPath: folder.data + "/" + FileNames.index))
        let log = ChangeLog(folder: folder.data, fileSystem: POSIXFileSystem())
        // The numbers: the entries' lines count the removals' lines between them.
        var sequence = 0
        for (n, item) in expected.enumerated() {
            sequence += 1
            #expect(try log.fieldsBytes(ofLine: sequence, id: item.id) == item.fields, "line \(sequence)")
            if n % 50 == 7 { sequence += 1 }
        }
        #expect(throws: StoreError.self) { try log.fieldsBytes(ofLine: 9, id: "id-8") }
        #expect(throws: StoreError.self) { try log.fieldsBytes(ofLine: 8_000, id: "id-1") }
    }

    @Test(
        "a line's fields are found by its number in a few reads (interpolated between the numbers found), whatever the lines' lengths and gaps in the numbers"
    )
    func fieldsFoundInFewReads() throws {
        let fileSystem = FaultInjectingFileSystem()
        var random = SplitMix64(state: 2026)
        var batch = ChangeLog.Batch(firstSequence: 1)
        var expected: [(sequence: Int, id: String, fields: [UInt8])] = []
        var sequence = 0
        for n in 0..<20_000 {
            // Lines of 300 to 2,300 bytes, as an index's lines vary; a removal now and then
            // between two entries (a number between theirs).
            let padding = 200 + Int(random.next() % 2_000)
            let fields = Array(#"{"abstract":"\#(String(repeating: "x", count: padding))","n":\#(n)}"#.utf8)
            let entry = IndexEntry(
                id: "id-\(n)", hash: UInt64(n), size: 10, storedAt: Timestamp(milliseconds: 1), updatedAt: Timestamp(milliseconds: 2),
                fields: .inline(fields))
            batch.append(entry, fields: fields, file: FileNames.documentPath(for: entry.id, in: .nyt))
            sequence += 1
            expected.append((sequence, entry.id, fields))
            if random.next() % 10 == 0 {
                batch.appendRemoval(of: "gone-\(n)", at: Timestamp(milliseconds: 3))
                sequence += 1
            }
        }
        try fileSystem.createFolder("/data")
        try fileSystem.write(batch.bytes, to: "/data/" + FileNames.index)
        let log = ChangeLog(folder: "/data", fileSystem: fileSystem)
        var lookups = 0
        for index in stride(from: 0, to: expected.count, by: 97) + [expected.count - 1] {
            let item = expected[index]
            #expect(try log.fieldsBytes(ofLine: item.sequence, id: item.id) == item.fields, "line \(item.sequence)")
            lookups += 1
        }
        let reads = fileSystem.readCounts["/data/" + FileNames.index] ?? 0
        // A bisection of the 26 MB takes some 25 reads a look-up (measured); interpolating, about 10.
        #expect(reads <= lookups * 12, "\(reads) reads for \(lookups) look-ups")
    }

    @Test("members in any order, unknown members and white space are accepted")
    func lenientMemberOrder() throws {
        let line =
            #" { "size" : 3 , "extra": [1, 2], "hash":"AbC", "id":"x", "updated_at":"\#(Self.stamp)", "stored_at":"\#(Self.stamp)" } "#
        guard case .entry(let entry)? = try Self.decode(line) else {
            Issue.record("not an entry")
            return
        }
        #expect(entry.id == "x" && entry.hash == 0xabc && entry.size == 3)
        #expect(entry.fields == .inline(Array("{}".utf8)))
    }

    @Test("a line with removed_at is a removal whatever else it holds")
    func removalLines() throws {
        guard case .removal(let removal)? = try Self.decode(#"{"id":"gone","removed_at":"\#(Self.stamp)"}"#) else {
            Issue.record("not a removal")
            return
        }
        #expect(removal.id == "gone")
        guard case .removal? = try Self.decode(#"{"id":"gone","hash":"1","size":1,"removed_at":"x"}"#) else {
            Issue.record("not a removal")
            return
        }
    }

    static let notIndexLines: [String] = [
        "[]", "42", "\"text\"", "null", "{}",
        #"{"id":"","removed_at":"x"}"#,
        #"{"id":7,"removed_at":"x"}"#,
        #"{"id":"a","hash":"00ff","size":1,"stored_at":"\#(stamp)"}"#,
        #"{"id":"a","hash":"xyz","size":1,"stored_at":"\#(stamp)","updated_at":"\#(stamp)"}"#,
        #"{"id":"a","hash":"12345678901234567","size":1,"stored_at":"\#(stamp)","updated_at":"\#(stamp)"}"#,
        #"{"id":"a","hash":"1","size":"1","stored_at":"\#(stamp)","updated_at":"\#(stamp)"}"#,
        #"{"id":"a","hash":"1","size":1,"stored_at":"yesterday","updated_at":"\#(stamp)"}"#,
        #"{"id":"a","hash":1,"size":1,"stored_at":"\#(stamp)","updated_at":"\#(stamp)"}"#,
        #"{"id":"a","hash":"1","size":1,"stored_at":"\#(stamp)","updated_at":"\#(stamp)","fields":[1]}"#,
    ]

    @Test("valid JSON that is not an entry or a removal is not an index line", arguments: notIndexLines)
    func notAnIndexLine(_ line: String) throws {
        #expect(try Self.decode(line) == nil)
    }

    /// A size or sequence number as a line may hold it, and what JSON makes of it: the digits a
    /// writer writes are read in place, anything else as JSON reads it (nil: not an index line).
    static let integers: [(text: String, size: Int??)] = [
        ("12", 12), ("12 ", 12), (" 7", 7), ("0", 0), ("-5", -5), ("123456789012345", 123_456_789_012_345),
        ("1234567890123456", 1_234_567_890_123_456), ("12.0", .some(nil)), ("1e3", .some(nil)), ("0012", nil), ("12x", nil),
        ("1.", nil),
    ]

    @Test("a size is read in place when it is plain digits and as JSON otherwise, with JSON's answer", arguments: integers)
    func sizesReadAsJSONWould(text: String, size: Int??) throws {
        let line = #"{"id":"a","hash":"1","size":\#(text),"stored_at":"\#(Self.stamp)","updated_at":"\#(Self.stamp)"}"#
        guard let size else {
            #expect(throws: JSONSyntaxError.self) { try Self.decode(line) }
            return
        }
        guard let size else {
            #expect(try Self.decode(line) == nil)
            return
        }
        guard case .entry(let entry)? = try Self.decode(line) else {
            Issue.record("\(text): not an entry")
            return
        }
        #expect(entry.size == size)
    }

    @Test(
        "a sequence number is a positive integer up to 2^53, read in place or as JSON",
        arguments: [
            ("5", 5), ("9007199254740992", 9_007_199_254_740_992), ("0", nil), ("9007199254740993", nil), ("5.0", nil), ("-5", nil),
        ])
    func sequenceNumbersAreChecked(text: String, sequence: Int?) throws {
        let line = #"{"id":"a","hash":"1","size":1,"stored_at":"\#(Self.stamp)","updated_at":"\#(Self.stamp)","seq":\#(text)}"#
        var bytes = Array(line.utf8)
        let full = try bytes.withUnsafeMutableBufferPointer { buffer throws(JSONSyntaxError) in
            try ChangeLog.decodeFull(UnsafeBufferPointer(buffer), lineOffset: 0)
        }
        #expect(full?.sequence == sequence)
        #expect((full == nil) == (sequence == nil))
    }

    static let invalidJSON: [String] = [
        "{", #"{"id":"a""#, #"{"id":"a",}"#, "garbage", #"{"id":"a"} trailing"#, "\u{1}",
    ]

    @Test("invalid JSON throws", arguments: invalidJSON)
    func invalidJSONThrows(_ line: String) {
        #expect(throws: JSONSyntaxError.self) { try Self.decode(line) }
    }

    @Test("the fields object is located, not parsed: a query that reads it finds its syntax error")
    func fieldsAreCheckedWhenRead() throws {
        let folder = try TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: StoreSchema(projection: Projection(paths: ["a"])))
        try store.put(try json(#"{"a":1}"#), id: "x")
        let indexPath = folder.data + "/" + FileNames.index
        var text = try String(contentsOfFile: indexPath, encoding: .utf8)
        text = text.replacingOccurrences(of: #""fields":{"a":1}"#, with: #""fields":{"a":}"#)
        try text.write(toFile: indexPath, atomically: false, encoding: .utf8)
        let reopened = try DocumentStore(folder: folder.data, schema: StoreSchema(projection: Projection(paths: ["a"])))
        #expect(try reopened.count == 1)
        #expect(throws: StoreError.self) { try reopened.count(matching: ["a": 1]) }
        do {
            _ = try reopened.count(matching: ["a": 1])
        } catch {
            guard case .unreadableIndex(let path, _) = error else { Issue.record("\(error)"); return }
            #expect(path == indexPath)
        }
    }

    @Test("a chunk's final line without its newline is left for later, and blank lines are skipped")
    func tornLastLineIsLeft() throws {
        let text = Self.entry + "\n\n   \n" + #"{"id":"gone","removed_at":"x"}"# + "\n" + #"{"id":"b","hash":"1""#
        let chunk = try ChangeLog.decodeLines(Array(text.utf8), baseOffset: 0, firstLine: 1).get()
        #expect(chunk.lines.count == 2)
        #expect(chunk.consumed == text.utf8.count - #"{"id":"b","hash":"1""#.utf8.count)
    }

    @Test("a garbage line makes the chunk unreadable at its line number, counting blank lines")
    func garbageLineNamesItsLine() {
        let text = Self.entry + "\n\n" + "not json\n" + Self.entry + "\n"
        guard case .failure(.unreadable(let line, let reason)) = ChangeLog.decodeLines(Array(text.utf8), baseOffset: 0, firstLine: 10)
        else {
            Issue.record("the garbage line was accepted")
            return
        }
        #expect(line == 12)
        #expect(reason.contains("byte"))
        guard case .failure(.unreadable(let other, let why)) = ChangeLog.decodeLines(Array("{}\n".utf8), baseOffset: 0, firstLine: 1) else {
            Issue.record("an empty object was accepted")
            return
        }
        #expect(other == 1 && why == "not an index entry")
    }

    @Test("many lines decode on several threads in order")
    func manyLinesInOrder() throws {
        var batch = ChangeLog.Batch(firstSequence: 1)
        for n in 0..<10_000 {
            batch.append(
                IndexEntry(
                    id: "id\(n)", hash: UInt64(n), size: n, storedAt: Timestamp(milliseconds: 0),
                    updatedAt: Timestamp(milliseconds: 0), fields: .inline([])), fields: Array(#"{"n":\#(n)}"#.utf8),
                file: FileNames.documentPath(for: "id\(n)", in: .nyt))
        }
        let chunk = try ChangeLog.decodeLines(batch.bytes, baseOffset: 0, firstLine: 1).get()
        let ids = chunk.lines.map { line -> String in
            if case .entry(let entry) = line { return entry.id }
            return "?"
        }
        #expect(ids == (0..<10_000).map { "id\($0)" })
    }

    // MARK: Journal

    @Test("a journal lists the batch's IDs, one JSON line each, and reads them back")
    func journalRoundTrips() {
        let ids = ["a", "nyt://article/x", "with \"quote\"", "ünï"].map(DocumentID.init)
        let bytes = Journal.encode(ids)
        #expect(String(decoding: bytes, as: UTF8.self).split(separator: "\n").first == #"{"id":"a"}"#)
        #expect(Journal.decode(bytes) == Set(ids))
    }

    static let brokenJournals: [(text: String, ids: [String])] = [
        ("{\"id\":\"a\"}\n{\"id\":\"b", ["a"]),  // torn last line
        ("{\"id\":\"a\"}\ngarbage\n{\"id\":\"c\"}\n", ["a", "c"]),
        ("{\"id\":7}\n{\"id\":\"\"}\n[\"a\"]\n", []),
        ("", []),
        ("\n\n", []),
    ]

    @Test("a torn or garbage journal line names nothing; the others still count", arguments: brokenJournals)
    func brokenJournalLines(_ journal: (text: String, ids: [String])) {
        #expect(Journal.decode(Array(journal.text.utf8)) == Set(journal.ids.map(DocumentID.init)))
    }

    @Test("replay hands each ID to the store in byte order and leaves the journal for the caller")
    func replayOrder() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        let journal = Journal(folder: folder.data, fileSystem: POSIXFileSystem())
        #expect(try journal.replay { _ in Issue.record("no journal, nothing to replay") } == false)
        try journal.write(["b", "a", "c"].map(DocumentID.init))
        var seen: [String] = []
        #expect(try journal.replay { seen.append($0.rawValue) } == true)
        #expect(seen == ["a", "b", "c"])
        #expect(try journal.exists)
        try journal.remove()
        #expect(try !journal.exists)
    }
}
