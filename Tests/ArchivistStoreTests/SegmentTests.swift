import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// A segment file (`segments/NNNNNN.seg`): its container refuses damaged bytes, and its
/// structures, read in place, answer exactly what the in-memory indexes answer.
@Suite("segment structures")
struct SegmentTests {
    /// A store of generated and awkward documents, its in-memory query index with every column
    /// loaded, and one segment of all of it opened from its bytes.
    final class Fixture {
        let fixture: QueryFixture
        let index: QueryIndex
        let bytes: [UInt8]
        let snapshot: MappedSegment

        init(seed: UInt64 = 11, count: Int = 1500) throws {
            fixture = try QueryFixture(seed: seed, count: count)
            let store = fixture.store
            index = try store.queryIndex(loading: Set(store.projection.paths))
            bytes = try store.segmentBytes()
            snapshot = try MappedSegment(SegmentReader(FileBytes(bytes)))
        }

        /// One fixture for the tests that only read it (building it is most of their time).
        nonisolated(unsafe) static let shared: Result<Fixture, any Error> = Result { try Fixture() }
    }

    @Test("IDs, entries and ordinals read back as the index holds them")
    func idsAndEntries() throws {
        let f = try Fixture.shared.get()
        #expect(f.snapshot.count == f.index.count)
        #expect(f.snapshot.paths == f.index.projection.paths)
        for ordinal in 0..<f.index.count {
            #expect(try f.snapshot.id(at: ordinal) == f.index.ids[ordinal])
            let entry = try f.snapshot.entry(at: ordinal)
            let indexed = f.index.entries[ordinal]
            #expect(
                entry.id == indexed.id && entry.hash == indexed.hash && entry.size == indexed.size && entry.storedAt == indexed.storedAt
                    && entry.updatedAt == indexed.updatedAt && entry.sequence == indexed.sequence && entry.sequence > 0)
            let fieldsBytes = try f.fixture.store.fieldsBytes(of: indexed)
            #expect(entry.fields == .logLine(digest: SegmentBuilder.fieldsDigest(fieldsBytes)))
            var id = indexed.id
            #expect(try f.snapshot.mayContain(idHash: id.withUTF8 { IDFilter.hash(UnsafeRawBufferPointer($0)) }))
            #expect(try f.snapshot.ordinal(of: f.index.ids[ordinal]) == ordinal)
        }
        #expect(try f.snapshot.ordinal(of: "no such id") == nil)
        #expect(try f.snapshot.ordinal(of: "") == nil)
    }

    @Test("each field's dictionary walks as the sorted index walks, both ways")
    func walksMatchTheSortedIndex() throws {
        let f = try Fixture.shared.get()
        for path in f.index.projection.paths {
            let sorted = f.index.sorted(path)
            let field = try #require(try f.snapshot.field(path))
            for descending in [false, true] {
                var expected: [UInt32] = []
                sorted.walk(descending: descending) {
                    expected.append(UInt32($0)); return true
                }
                var actual: [UInt32] = []
                try field.walk(descending: descending) {
                    actual.append($0); return true
                }
                #expect(actual == expected, "\(path) descending: \(descending)")
            }
            #expect(field.hasNestedArrays == sorted.hasNestedArrays, "\(path)")
            // A walk stops when asked.
            var visited = 0
            try field.walk(descending: true) { _ in
                visited += 1; return visited < 3
            }
            #expect(visited == min(3, f.index.count))
        }
    }

    @Test("equality rows give exactly the equality index's documents for every value held")
    func equalityMatchesTheHashIndex() throws {
        let f = try Fixture.shared.get()
        for path in f.index.projection.paths {
            let equality = f.index.equality(path)
            let field = try #require(try f.snapshot.field(path))
            guard !field.hasNestedArrays else { continue }
            let columns = f.index.columns
            var values: [JSONValue] = []
            for ordinal in 0..<f.index.count {
                values.append(contentsOf: Condition.candidates(f.index.resolve(path, ordinal, in: columns)))
            }
            for value in values.prefix(400) {
                guard let key = QueryIndex.equalityKey(value) else { continue }
                var found: [UInt32] = []
                for index in try field.rowIndexes(equalTo: value) { found.append(contentsOf: try field.ordinals(of: try field.row(index))) }
                #expect(found.sorted() == (equality[key] ?? []).map(UInt32.init), "\(path) = \(value)")
            }
        }
    }

    static let comparisons: [Condition] = [
        .gt(.number("500")), .gte(.number("879")), .lt(.number("0")), .lte(.number("450")), .eq(.number("879")),
        .gte(.string("2015-01-01")), .lt(.string("2016-01-01")), .eq(.string("2015-07-01")),
        .gt(.string("2019-02-15T05:00:00Z")), .lte(.string("2001-01-01")), .gt(.string("M")), .lt(.string("Sports")),
    ]

    @Test("ranges give the sorted index's candidates, as exactly", arguments: comparisons)
    func rangesMatchTheSortedIndex(_ condition: Condition) throws {
        let f = try Fixture.shared.get()
        for path in f.index.projection.paths {
            let sorted = f.index.sorted(path)
            let field = try #require(try f.snapshot.field(path))
            let expected = sorted.hasNestedArrays ? nil : sorted.range(condition)
            let actual = try field.range(condition)
            #expect((actual == nil) == (expected == nil), "\(path) \(condition)")
            guard let actual, let expected else { continue }
            #expect(actual.ordinals == Array(Set(expected.ordinals)).sorted().map(UInt32.init), "\(path) \(condition)")
            #expect(actual.isExact == expected.isExact, "\(path) \(condition)")
        }
    }

    @Test("the text index's terms and postings read back, weights included")
    func textIndexMatches() throws {
        let f = try Fixture.shared.get()
        let memory = f.index.text()
        let text = try f.snapshot.text()
        #expect(text.termCount == memory.allPostings.count)
        for (term, list) in memory.allPostings {
            let found = try text.postings(of: term)
            #expect(found.map { $0[0] } == list.map { UInt32($0.ordinal) }, "\(term)")
            #expect(found.map(SegmentText.weight) == list.map(\.weight), "\(term)")
        }
        #expect(try text.postings(of: "zzzz-no-such-term").isEmpty)
    }

    // MARK: Damage

    @Test("a truncated, foreign or empty file is refused at open")
    func truncatedOrForeignIsRefused() throws {
        let f = try Fixture(count: 200)
        for cut in [0, 7, 8, 100, f.bytes.count / 2, f.bytes.count - 1] {
            #expect(throws: SegmentDamage.self) { try SegmentReader(FileBytes(Array(f.bytes.prefix(cut)))) }
        }
        #expect(throws: SegmentDamage.self) { try SegmentReader(FileBytes(Array("{\"not\": \"a snapshot\"}".utf8))) }
        var wrongVersion = f.bytes
        wrongVersion[wrongVersion.count - SegmentFooter.size + 8] = 9
        #expect(throws: SegmentDamage.self) { try SegmentReader(FileBytes(wrongVersion)) }
    }

    @Test("a flipped byte anywhere is found: at open, or when its block is read")
    func flippedBytesAreFound() throws {
        let f = try Fixture(count: 200)
        var dice = SplitMix64(state: 5)
        for _ in 0..<300 {
            var damaged = f.bytes
            let position = Int(dice.next() % UInt64(damaged.count))
            damaged[position] ^= UInt8(1 << (dice.next() % 8))
            do {
                let reader = try SegmentReader(FileBytes(damaged))
                let found = try reader.verifyAll { offset, count in Array(damaged[offset..<min(damaged.count, offset + count)]) }
                #expect(found != nil, "byte \(position) of \(damaged.count)")
            } catch {
                // Refused at open: the footer, the table or their checksum.
            }
        }
    }

    /// The input the snapshot fuzz target found (`scripts/fuzz snapshot`): a footer whose block
    /// count is near Int.max, which overflowed the count of checksum runs and trapped.
    @Test("a footer with a block count near Int.max is refused")
    func hugeBlockCountIsRefused() {
        let hex =
            "415243534e415031000000000000415243534e415031030000002e0000009c2a010000000000dc28010000000000feffffffffffff7f2a00ffffffffffff371ef7000004000050a50000000000002a00000000000000a7c8a9bfe01b29183c566ee40aec0a7a69891637a201000002c4010000000000001000000000030000000100000000000701647ffc26efe7"
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        #expect(bytes.count == 142)
        #expect(throws: SegmentDamage.self) { try MappedSegment(SegmentReader(FileBytes(bytes))) }
    }

    @Test("random bytes are refused, never read out of bounds")
    func randomBytesAreRefused() {
        var dice = SplitMix64(state: 9)
        for length in [0, 1, 8, 127, 128, 136, 200, 4096] {
            for _ in 0..<20 {
                var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: dice.next()) }
                if length >= 8 { withUnsafeBytes(of: SegmentFile.magic.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) } }
                if length >= 136 {
                    withUnsafeBytes(of: SegmentFile.magic.littleEndian) {
                        bytes.replaceSubrange((length - 128)..<(length - 120), with: $0)
                    }
                }
                #expect(throws: SegmentDamage.self) { try MappedSegment(SegmentReader(FileBytes(bytes))) }
            }
        }
    }
}
