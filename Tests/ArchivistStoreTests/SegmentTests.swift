import ArchivistBase
import ArchivistClient
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

/// Queries answered from the segments' structures and the log after them (not by the fallback):
/// the same answers as a store that reads the whole log.
@Suite("segment queries")
struct SegmentQueryTests {
    static let filters: [String] = [
        "section_name = Sports", "section_name in (Sports, World) and pub_date >= 2015-01-01",
        "pub_date >= 2015-01-01 and pub_date < 2016-01-01", "pub_date = 2015-07-01", "word_count > 500",
        "not section_name = Sports", "section_name = Sports or news_desk = Foreign", "keywords.value = 'Politics and Government'",
        "keywords.value != 'Politics and Government'", "headline.main ~ knicks", "section_name exists", "byline.original missing",
        #""election""#, #""election" and section_name = U.S."#, "section_name > M",
        "pub_date >= 2015-01-01", "pub_date < 2001-06-01", "pub_date > 2090-01-01", "word_count >= 800",
        "word_count >= 300 and word_count < 900",
    ]

    @Test("filters, orders, windows and facets come from the segments and agree with the log", arguments: StorageMode.allCases)
    func segmentsAgreeWithTheLog(_ mode: StorageMode) throws {
        guard mode != .logOnly else { return }
        let fixture = try QueryFixture(seed: 77, count: 600, mode: mode)
        let logOnly = try DocumentStore(folder: fixture.folder.data, schema: .nyt, options: StorageMode.logOnly.options)
        let store = fixture.store
        for text in Self.filters {
            let filter = try FilterParser.parse(text)
            let needed = QueryIndex.neededPaths(filter: filter, sort: [], textSearch: store.schema.textSearch)
            let segments = try #require(try store.segments(loading: needed.union(["pub_date", "word_count"])))
            // A field with arrays inside its values (a keyword whose value is a list) is answered the slow way.
            let nested = try filter.paths.contains { path in
                try segments.searchers.contains { try $0.snapshot.field(path)?.hasNestedArrays == true }
            }
            for query in [
                Query(filter: filter), Query(filter: filter, skip: 3, limit: 7),
                Query(filter: filter, sort: [SortKey("pub_date", descending: true)], limit: 10),
                Query(filter: filter, sort: [SortKey("pub_date")], skip: 5, limit: 5),
                Query(filter: filter, sort: [SortKey("word_count", descending: true)], limit: 12),
                Query(filter: filter, sort: [SortKey("word_count")], skip: 2, limit: 0),
            ] {
                if nested {
                    #expect(try store.segmentedFind(query, segments) == nil, "\(text)")
                    continue
                }
                let answered = try #require(try store.segmentedFind(query, segments), "\(text) was not answered from the segments")
                let expected = try logOnly.find(query)
                #expect(answered.ids == expected.ids, "\(text) \(query.sort) \(query.skip) \(String(describing: query.limit))")
                #expect(answered.total == expected.total, "\(text)")
            }
            #expect(try store.count(matching: filter).count == logOnly.count(matching: filter).count, "\(text)")
            // What stats reports of the documents does not depend on where the store starts from.
            let (fromSnapshot, fromLog) = (try store.statistics(), try logOnly.statistics())
            #expect(fromSnapshot.documents == fromLog.documents && fromSnapshot.documentBytes == fromLog.documentBytes)
            #expect(fromSnapshot.indexLines == fromLog.indexLines && fromSnapshot.deadEntries == fromLog.deadEntries)
            #expect(fromSnapshot.segments != nil && fromLog.segments == nil)
            for path in ["section_name", "keywords.value", "word_count"] {
                let facetSegments = try #require(try store.segments(loading: needed.union([path])))
                // A field with arrays inside its values (a keyword whose value is a list) is counted the slow way.
                if try nested || facetSegments.searchers.contains(where: { try #require(try $0.snapshot.field(path)).hasNestedArrays }) {
                    continue
                }
                let answered = try #require(try store.segmentedFacet(path, matching: filter, facetSegments), "facet \(path) \(text)")
                let expected = try logOnly.facet(path, matching: filter).values
                #expect(
                    answered.map { JSONWriter.compactString($0.value) } == expected.map { JSONWriter.compactString($0.value) },
                    "\(path) \(text)")
                #expect(answered.map(\.count) == expected.map(\.count), "\(path) \(text)")
            }
        }
    }
}

extension SegmentQueryTests {
    @Test(
        "a range on the field a query sorts by is answered by walking each segment's dictionary, with documents changed and removed in later segments and the tail",
        arguments: [
            ("pub_date >= 2015-01-01", "pub_date", true), ("pub_date < 2003-01-01", "pub_date", false),
            ("pub_date = 2015-07-01", "pub_date", true), ("word_count > 700", "word_count", true),
            ("word_count >= 200 and word_count <= 400", "word_count", false), ("pub_date > 2090-01-01", "pub_date", true),
            ("section_name = Sports and pub_date >= 2010-01-01", "pub_date", true),
            ("word_count > 300 and section_name in (World, Sports) and word_count < 2000", "word_count", false),
            (#""election" and pub_date < 2020-01-01"#, "pub_date", true),
        ])
    func rangesOnTheSortFieldWalkTheDictionary(text: String, path: String, descending: Bool) throws {
        let fixture = try QueryFixture(seed: 78, count: 400, mode: .manySegments)
        let logOnly = try DocumentStore(folder: fixture.folder.data, schema: .nyt, options: StorageMode.logOnly.options)
        let store = fixture.store
        let filter = try FilterParser.parse(text)
        let key = SortKey(path, descending: descending)
        let segments = try #require(
            try store.segments(loading: QueryIndex.neededPaths(filter: filter, sort: [key], textSearch: store.schema.textSearch)))
        for (skip, limit) in [(0, 10), (7, 3), (0, 1), (0, 100_000)] {
            let query = Query(filter: filter, sort: [key], skip: skip, limit: limit)
            for searcher in segments.searchers {
                let walked = try #require(try searcher.sortedRange(filter, by: key, needed: skip + limit), "\(text)")
                #expect(walked.found.count <= skip + limit)
            }
            let answered = try #require(try store.segmentedFind(query, segments))
            let expected = try logOnly.find(query)
            #expect(answered.ids == expected.ids, "\(text) skip \(skip) limit \(limit)")
            #expect(answered.total == expected.total, "\(text)")
        }
        try expectConsistent(store)
    }

    @Test(
        "a count of ranges on one field of one value per document is the postings' span, as the log counts it",
        arguments: [
            ("pub_date >= 2015-01-01 and pub_date < 2016-01-01", true), ("word_count > 500", true), ("pub_date = 2015-07-01", true),
            ("word_count >= 900 and word_count < 100", true), ("section_name = Sports", false),
            ("keywords.value = 'Politics and Government'", false), ("pub_date >= 2015-01-01 and section_name = Sports", false),
        ])
    func countsOfRangesAreSpans(text: String, answered: Bool) throws {
        // Generated documents only: each holds one value of each field counted here.
        let folder = TemporaryFolder()
        let writer = try DocumentStore(folder: folder.data, schema: .nyt, options: StorageMode.oneSegment.options)
        var generator = ArticleGenerator(seed: 80)
        let documents = generator.documents(300)
        for result in try writer.upsert(documents) { _ = try result.outcome.get() }
        try writer.merge()
        let filter = try FilterParser.parse(text)
        for changed in [false, true] {
            if changed {
                // A document removed after the segment would make the span one too many: not answered so.
                try writer.remove([try #require(documents[0]["_id"]?.stringValue)])
            }
            let store = try DocumentStore(folder: folder.data, schema: .nyt, options: StorageMode.oneSegment.options)
            let logOnly = try DocumentStore(folder: folder.data, schema: .nyt, options: StorageMode.logOnly.options)
            let segments = try #require(try store.segments(loading: filter.paths))
            let span = try segments.searchers[0].countOfRange(filter)
            #expect((span != nil) == (answered && !changed), "\(text) changed: \(changed)")
            if let span { #expect(span == (try logOnly.count(matching: filter).count), "\(text)") }
            #expect(try store.count(matching: filter).count == logOnly.count(matching: filter).count, "\(text) changed: \(changed)")
            try expectConsistent(store)
        }
    }

    @Test(
        "a filter the dictionary walk cannot answer exactly is left to the other ways",
        arguments: [
            "section_name = Sports", "pub_date >= 2015-01-01 or pub_date < 2001-01-01", "keywords.value = 'Politics and Government'",
            "pub_date != 2015-07-01", "pub_date exists",
        ])
    func otherFiltersAreNotWalked(text: String) throws {
        let fixture = try QueryFixture(seed: 79, count: 120, mode: .oneSegment)
        let filter = try FilterParser.parse(text)
        let segments = try #require(try fixture.store.segments(loading: ["pub_date", "keywords.value"]))
        for path in ["pub_date", "keywords.value"] {
            #expect(try segments.searchers[0].sortedRange(filter, by: SortKey(path), needed: 10) == nil, "\(text) by \(path)")
        }
    }
}

/// The streaming pieces of a segment's container, at sizes the other tests do not reach.
@Suite("segment container")
struct SnapshotStreamingTests {
    @Test(
        "a section of several blocks, appended in uneven pieces, reads back whole with every block checked (layouts 1, 2 and 3)",
        arguments: [
            (UInt32(1), SegmentFile.layout1BlockSize), (UInt32(2), SegmentFile.layout2BlockSize),
            (SegmentFile.version, SegmentFile.blockSize),
        ])
    func sectionsOfSeveralBlocks(layout: UInt32, blockSize: Int) throws {
        let size = blockSize * 2 + blockSize / 2 + 3
        var generator = SplitMix64(state: 5)
        let body = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let small: [UInt8] = [1, 2, 3]
        let bytes = try SegmentWriter.bytes(layout: layout) { (writer) throws(StoreError) in
            try writer.add(.fieldNames, small)
            try writer.begin(.termHeap)
            var start = 0
            var piece = 1
            while start < body.count {
                let end = min(body.count, start + piece)
                try writer.append(Array(body[start..<end]))
                start = end
                piece = piece * 7 % 900_001 + 1
            }
            try writer.end()
            try writer.add(.idHeap, small)
            try writer.finish(
                documentCount: 0, documentBytes: 0, coverage: SegmentFile.Coverage(identity: 1, offset: 0, lines: 0, tailHash: 0),
                schemaHash: 7, createdAt: .now())
        }
        let reader = try SegmentReader(FileBytes(bytes))
        #expect(reader.blockSize == blockSize)
        let section = try #require(reader.section(.termHeap))
        #expect(section.length == size && section.blockCount(blockSize: blockSize) == 3)
        #expect(Array(try reader.bytes(of: section)) == body)
        #expect(Array(try reader.bytes(of: try #require(reader.section(.idHeap)))) == small)
        #expect(try reader.verifyAll(reading: { offset, count in Array(bytes[offset..<(offset + count)]) }) == nil)
        // A flipped byte in the middle block is found there.
        var flipped = bytes
        flipped[section.offset + blockSize + 10] ^= 1
        let damaged = try SegmentReader(FileBytes(flipped))
        #expect(throws: SegmentDamage.corrupt(section: section.kind, block: 1)) {
            _ = try damaged.bytes(of: section, at: blockSize, count: 20)
        }
        // The blocks on either side of it still read.
        #expect(try damaged.bytes(of: section, at: 0, count: 20).count == 20)
        #expect(try damaged.bytes(of: section, at: 2 * blockSize, count: 20).count == 20)
    }

    @Test("a footer that gives a block size out of range or not a power of two is refused", arguments: [0, 3000, 1 << 11, 1 << 25, 65_537])
    func blockSizeOutOfRange(size: Int) throws {
        var bytes = try SegmentWriter.bytes { (writer) throws(StoreError) in
            try writer.add(.fieldNames, [1, 2, 3])
            try writer.finish(
                documentCount: 0, documentBytes: 0, coverage: SegmentFile.Coverage(identity: 1, offset: 0, lines: 0, tailHash: 0),
                schemaHash: 7, createdAt: .now())
        }
        let footer = bytes.count - SegmentFooter.size
        withUnsafeBytes(of: UInt64(size).littleEndian) { bytes.replaceSubrange((footer + 104)..<(footer + 112), with: $0) }
        let tableOffset = Int(bytes[(footer + 16)..<(footer + 24)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let hash = Array(bytes[tableOffset..<(bytes.count - 8)]).withUnsafeBytes { WordHash.checksum(layout: SegmentFile.version, $0) }
        withUnsafeBytes(of: hash.littleEndian) { bytes.replaceSubrange((bytes.count - 8)..<bytes.count, with: $0) }
        #expect(throws: SegmentDamage.unreadable("snapshot block size \(size) out of range")) { _ = try SegmentReader(FileBytes(bytes)) }
    }

    @Test("layout 3 checks a run of block checksums when a block it covers is first read, not at open")
    func runsOfBlockChecksumsAreCheckedWhenUsed() throws {
        let blockSize = SegmentFile.blockSize
        let runs = 2
        let size = blockSize * SegmentFile.hashesPerRun * (runs - 1) + 5 * blockSize
        var generator = SplitMix64(state: 9)
        var body: [UInt8] = []
        body.reserveCapacity(size)
        while body.count < size { withUnsafeBytes(of: generator.next()) { body.append(contentsOf: $0) } }
        body.removeLast(body.count - size)
        let bytes = try SegmentWriter.bytes { (writer) throws(StoreError) in
            try writer.add(.termHeap, body)
            try writer.finish(
                documentCount: 0, documentBytes: 0, coverage: SegmentFile.Coverage(identity: 1, offset: 0, lines: 0, tailHash: 0),
                schemaHash: 7, createdAt: .now())
        }
        let footer = bytes.count - SegmentFooter.size
        func word(_ at: Int) -> Int { Int(bytes[(footer + at)..<(footer + at + 8)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
        let hashesOffset = word(24)
        #expect(word(32) == SegmentFile.hashesPerRun * (runs - 1) + 5)
        #expect(hashesOffset >= 8 + size && word(16) == hashesOffset + word(32) * 8, "the block checksums come before the table")
        #expect(
            try SegmentReader(FileBytes(bytes)).verifyAll(reading: { offset, count in Array(bytes[offset..<(offset + count)]) }) == nil)
        // The checksum of the last block, in the second run, is damaged: the file still opens,
        // the blocks of the first run still read, and the second run is refused where it is used.
        var damaged = bytes
        damaged[hashesOffset + (word(32) - 1) * 8] ^= 0x01
        let reader = try SegmentReader(FileBytes(damaged))
        let section = try #require(reader.section(.termHeap))
        #expect(Array(try reader.bytes(of: section, at: 0, count: 64)) == Array(body[0..<64]))
        let lastRun = SegmentFile.hashesPerRun * (runs - 1)
        let expected = SegmentDamage.unreadable("the checksums of blocks \(lastRun) to \(lastRun + 4) do not match theirs")
        #expect(throws: expected) { _ = try reader.bytes(of: section, at: size - 10, count: 10) }
        #expect(try reader.verifyAll(reading: { offset, count in Array(damaged[offset..<(offset + count)]) }) == expected)
        // A damaged run checksum (covered by the footer's) is refused at open.
        var runDamaged = bytes
        runDamaged[footer - 8] ^= 0x01
        #expect(throws: SegmentDamage.unreadable("snapshot footer checksum mismatch")) { _ = try SegmentReader(FileBytes(runDamaged)) }
    }

    @Test("the checksums keep the values the snapshot files on disk were written with", arguments: [0, 5, 8, 31, 32, 100])
    func checksumsKeepTheirValues(count: Int) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let pinned: [Int: (hash: UInt64, striped: UInt64)] = [
            0: (10_417_342_739_281_038_054, 321_668_953_483_151_603),
            5: (11_032_975_669_923_077_760, 14_119_887_063_495_633_024),
            8: (9_276_893_666_592_898_387, 4_701_295_491_713_561_004),
            31: (11_741_426_808_141_304_651, 6_162_132_783_307_446_929),
            32: (1_974_601_020_194_848_327, 2_398_327_175_370_722_553),
            100: (6_653_473_598_384_853_031, 8_572_246_806_581_436_548),
        ]
        #expect(WordHash.hash(bytes) == pinned[count]?.hash)
        #expect(WordHash.striped(bytes) == pinned[count]?.striped)
    }

    @Test(
        "the striped checksum changes with every single flipped bit and with the length",
        arguments: [0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 100])
    func stripedChecksumSeesEveryBit(count: Int) {
        var generator = SplitMix64(state: UInt64(count) + 1)
        let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let hash = WordHash.striped(bytes)
        #expect(hash == WordHash.striped(bytes))
        #expect(hash != WordHash.striped(bytes + [0]), "a zero byte more")
        var seen: Set<UInt64> = [hash]
        for bit in 0..<(count * 8) {
            var flipped = bytes
            flipped[bit / 8] ^= 1 << UInt8(bit % 8)
            seen.insert(WordHash.striped(flipped))
        }
        #expect(seen.count == count * 8 + 1, "every flip gives its own checksum")
        // Zeros of different lengths differ, as the length is in the seed.
        #expect(WordHash.striped([UInt8](repeating: 0, count: count)) != WordHash.striped([UInt8](repeating: 0, count: count + 8)))
    }

    @Test("the text index read a few documents at a time is the one read all at once")
    func textIndexInChunks() throws {
        var generator = ArticleGenerator(seed: 8)
        let documents = generator.documents(50)
        let schema = StoreSchema.nyt
        let paths = schema.textSearch.paths.filter(schema.projection.paths.contains)
        var reads: [Range<Int>] = []
        let columns: SegmentBuilder.Columns = { (wanted, positions) throws(StoreError) in
            reads.append(positions)
            let projection = Projection(paths: wanted, longPaths: [])
            var result: [String: [JSONValue?]] = [:]
            let rows = documents[positions].map(projection.values(of:))
            for (index, path) in wanted.enumerated() { result[path] = rows.map { $0[index] } }
            return result
        }
        let whole = try SegmentBuilder.textIndex(
            count: documents.count, textSearch: schema.textSearch, projection: schema.projection, columns: columns)
        #expect(reads == [0..<50])
        reads = []
        let chunked = try SegmentBuilder.textIndex(
            count: documents.count, textSearch: schema.textSearch, projection: schema.projection, columns: columns, chunk: 7)
        #expect(reads == stride(from: 0, to: 50, by: 7).map { $0..<min(50, $0 + 7) })
        #expect(!paths.isEmpty && !whole.allPostings.isEmpty)
        #expect(Set(chunked.allPostings.keys) == Set(whole.allPostings.keys))
        for (term, list) in whole.allPostings {
            let other = chunked.allPostings[term] ?? []
            #expect(other.map(\.ordinal) == list.map(\.ordinal) && other.map(\.weight) == list.map(\.weight), "\(term)")
        }
    }
}

// MARK: - Segments in a folder: flushes, check, repair

/// The segments of a folder as writers leave them: the tail flushed at its threshold, `check`
/// reading every block and comparing the segments with the whole log, `repair` building them again.
@Suite("segments in a folder")
struct SegmentFolderTests {
    static func store(_ folder: TemporaryFolder, flushThreshold: Int = 1, mergeFactor: Int = 8) throws -> DocumentStore {
        try DocumentStore(folder: folder.data, schema: .nyt, options: .init(flushThreshold: flushThreshold, mergeFactor: mergeFactor))
    }

    /// The live documents the segments hold (nil: the store read the whole log).
    static func segmentDocuments(_ store: DocumentStore) throws -> Int? {
        try store.statistics().segments.map { $0.reduce(0) { $0 + $1.documents - $1.deletedDocuments } }
    }

    /// A segment file of the folder (the newest when there are several).
    static func segmentFile(_ folder: TemporaryFolder) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.segments)
        let name = try #require(names.filter { $0.hasSuffix(".seg") }.sorted().last)
        return folder.data + "/" + FileNames.segments + "/" + name
    }

    @Test("the tail is written into a segment when it reaches the threshold, and the log after it is read at open")
    func flushAtTheThreshold() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 4)
        for n in 0..<3 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        #expect(try Self.segmentDocuments(store) == nil)
        try store.put(try json(#"{"section_name": "S3"}"#), id: "d3")
        #expect(try Self.segmentDocuments(store) == 4)
        #expect(try store.statistics().changesAfterSegments == 0)
        try store.put(try json(#"{"section_name": "late"}"#), id: "d0")
        let reopened = try Self.store(folder, flushThreshold: 4)
        #expect(try reopened.statistics().changesAfterSegments == 1)
        #expect(try reopened.document(withID: "d0")?["section_name"] == .string("late"))
        #expect(try reopened.count(matching: ["section_name": "S0"]).count == 0)
        #expect(try reopened.count == 4)
        try expectConsistent(reopened)
    }

    @Test("a clean folder passes check; a flipped byte in a segment is a damaged-segments problem, and repair builds them again")
    func damagedSegmentIsReportedAndRepaired() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<5 { try store.put(try json(#"{"section_name": "S\#(n)", "headline": {"main": "H \#(n)"}}"#), id: "d\(n)") }
        #expect(try Self.segmentDocuments(store) == 5)
        try expectConsistent(store)
        let path = try Self.segmentFile(folder)
        var bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        bytes[100] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let problems = try Self.store(folder).check()
        #expect(problems.map(\.kind) == [.damagedSnapshot], "\(problems)")
        // The damaged segment is not trusted: the answers come from the log.
        let reopened = try Self.store(folder)
        #expect(try reopened.count(matching: ["section_name": "S3"]).count == 1)
        #expect(try reopened.document(withID: "d4")?["headline"]?["main"] == .string("H 4"))
        let report = try reopened.repair()
        #expect(report.rebuiltIndex)
        try expectConsistent(try Self.store(folder))
        #expect(try Self.segmentDocuments(try Self.store(folder)) == 5)
    }

    @Test("a log line changed by hand near the end of the part the segments cover is found by check")
    func logChangedUnderTheSegmentsIsFound() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<5 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        let indexPath = folder.data + "/" + FileNames.index
        var text = try String(contentsOfFile: indexPath, encoding: .utf8)
        // Same length, another section: the bytes near the end of the covered part are unchanged.
        text = text.replacingOccurrences(of: #""section_name":"S0""#, with: #""section_name":"X0""#)
        try text.write(toFile: indexPath, atomically: false, encoding: .utf8)
        // The log's last bytes changed: the segments are stale, not used, and rebuilt by the next
        // writer; the document no longer agrees with its line.
        let problems = try Self.store(folder).check()
        #expect(problems.map(\.file) == [FileNames.documentPath(for: "d0", in: .nyt)], "\(problems)")
    }

    @Test("an entry of the log changed by hand, far enough from the end for the segments to stay current, is found by check")
    func entryChangedUnderTheSegmentsIsFound() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 0)
        for n in 0..<60 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        try store.merge()
        #expect(try Self.store(folder, flushThreshold: 0).check().isEmpty)
        let indexPath = folder.data + "/" + FileNames.index
        var lines = try String(contentsOfFile: indexPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains(#""id":"d0""#) })
        let hash = try #require(lines[line].range(of: #""hash":""#))
        var changed = String(lines[line])
        let digit = changed.index(changed.startIndex, offsetBy: changed.distance(from: lines[line].startIndex, to: hash.upperBound))
        changed.replaceSubrange(digit...digit, with: changed[digit] == "0" ? "1" : "0")
        lines[line] = Substring(changed)
        try lines.joined(separator: "\n").write(toFile: indexPath, atomically: false, encoding: .utf8)
        let problems = try Self.store(folder, flushThreshold: 0).check()
        #expect(problems.contains { $0.kind == .damagedSnapshot && $0.detail.contains("differs from the log") }, "\(problems)")
    }

    @Test("repair builds the segments again when they were deleted by hand, and answers stay the same")
    func repairRebuildsDeletedSegments() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<6 { try store.put(try json(#"{"section_name": "S\#(n % 2)"}"#), id: "d\(n)") }
        #expect(try Self.segmentDocuments(store) == 6)
        try FileManager.default.removeItem(atPath: folder.data + "/" + FileNames.segments)
        let reopened = try Self.store(folder)
        #expect(try Self.segmentDocuments(reopened) == nil)
        #expect(try reopened.count(matching: ["section_name": "S1"]).count == 3)
        let report = try reopened.repair()
        #expect(report.problems.isEmpty && !report.rebuiltIndex)
        let repaired = try Self.store(folder)
        #expect(try Self.segmentDocuments(repaired) == 6)
        #expect(try repaired.statistics().changesAfterSegments == 0)
        #expect(try repaired.count(matching: ["section_name": "S1"]).count == 3)
        try expectConsistent(repaired)
    }

    @Test("repair of a folder whose segments are sound leaves them sound")
    func repairWithSoundSegments() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder)
        for n in 0..<5 { try store.put(try json(#"{"section_name": "S\#(n)"}"#), id: "d\(n)") }
        let report = try store.repair()
        #expect(report.problems.isEmpty && !report.rebuiltIndex)
        try expectConsistent(store)
        #expect(try Self.segmentDocuments(store) == 5)
    }

    @Test("check reports its progress through every document folder")
    func checkReportsProgress() throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .nyt)
        let documents = try (0..<40).map { try json(#"{"_id": "d\#($0)", "section_name": "S\#($0 % 3)"}"#) }
        for result in try store.upsert(documents) { _ = try result.outcome.get() }
        var reports: [(Int, Int)] = []
        #expect(try store.check { reports.append(($0, $1)) }.isEmpty)
        let buckets = try FileManager.default.contentsOfDirectory(atPath: folder.data + "/" + FileNames.documents).count
        #expect(reports.count == buckets && reports.last.map { $0 == (buckets, buckets) } == true)
        #expect(reports.map(\.0) == Array(1...buckets))
    }

    @Test("one ID changed in many segments is live once, as its last change; its older copies are deleted")
    func updatesAcrossSegments() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 0, mergeFactor: 1_000)
        for round in 0..<6 {
            try store.put(try json(#"{"section_name": "Round \#(round)", "word_count": \#(round)}"#), id: "same")
            try store.put(try json(#"{"section_name": "Other"}"#), id: "other\(round)")
            if round == 3 { try store.remove(["same"]) }
            try store.merge()
        }
        let reopened = try Self.store(folder, flushThreshold: 0, mergeFactor: 1_000)
        let stats = try reopened.statistics()
        #expect(stats.segments?.count == 6)
        #expect(stats.documents == 7)
        #expect(try reopened.document(withID: "same")?["section_name"] == .string("Round 5"))
        #expect(try reopened.count(matching: try FilterParser.parseAny("section_name = 'Round 2'")).count == 0)
        #expect(try reopened.find(Query(filter: .all)).ids.filter { $0 == "same" }.count == 1)
        try expectConsistent(reopened)
    }

    @Test("a listing a page at a time, and the IDs of a prefix, walk the segments and the tail as one list in ID order")
    func pagesAndPrefixes() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 0, mergeFactor: 1_000)
        var all: [String] = []
        for round in 0..<5 {
            for n in 0..<40 {
                let id = "p\(n % 7)-\(round)-\(n)"
                try store.put(try json(#"{"n": \#(n)}"#), id: id)
                all.append(id)
            }
            let removed = all[round * 13]
            try store.remove([removed])
            all.removeAll { $0 == removed }
            if round < 4 { try store.merge() }
        }
        let expected = all.sorted { UTF8Bytes.precedes($0, $1) }
        #expect(try store.entries().map(\.id) == expected)
        for size in [1, 7, 64, 500] {
            var paged: [String] = []
            var last: String?
            while true {
                let page = try store.entries(after: last, limit: size).map(\.id)
                paged += page
                guard page.count == size, let end = page.last else { break }
                last = end
            }
            #expect(paged == expected, "pages of \(size)")
        }
        for prefix in ["p3", "p3-2", "p", "q", "", "p6-4-4"] {
            #expect(try store.ids(startingWith: prefix, limit: 1_000) == expected.filter { $0.hasPrefix(prefix) }, "\(prefix)")
        }
        #expect(try store.ids(startingWith: "p", limit: 5) == Array(expected.prefix(5)))
    }

    @Test("flushes and merges keep the segments few: under the merge factor per size class")
    func mergesKeepSegmentsFew() throws {
        let folder = TemporaryFolder()
        let store = try Self.store(folder, flushThreshold: 8, mergeFactor: 3)
        var generator = ArticleGenerator(seed: 9)
        for document in generator.documents(300) { _ = try store.add(document) }
        let stats = try store.statistics()
        let segments = try #require(stats.segments)
        let policy = MergePolicy(factor: 3, base: 8)
        let classes = Dictionary(grouping: segments, by: { policy.sizeClass($0.documents - $0.deletedDocuments) })
        #expect(classes.values.allSatisfy { $0.count < 3 }, "\(segments.map(\.documents))")
        #expect(stats.documents == 300)
        #expect(try store.count(matching: .all).count == 300)
        try expectConsistent(store)
    }
}

// MARK: - Merges

/// The k-way merge: segments merged are the segment a build of their live documents writes.
@Suite("segment merges")
struct SegmentMergeTests {
    /// A segment's bytes with its creation time and the footer's checksum (which covers it) zeroed.
    static func comparable(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        guard bytes.count >= SegmentFooter.size else { return bytes }
        let footer = bytes.count - SegmentFooter.size
        for offset in (footer + 88)..<(footer + 96) { bytes[offset] = 0 }
        for offset in (bytes.count - 8)..<bytes.count { bytes[offset] = 0 }
        return bytes
    }

    /// A segment's bytes as `comparable` gives them, with each field's flags and the block
    /// checksums (which cover the flags) zeroed too.
    static func comparableButFlags(_ bytes: [UInt8]) throws -> [UInt8] {
        let reader = try SegmentReader(FileBytes(bytes))
        var bytes = comparable(bytes)
        for section in reader.sections where section.kind == SegmentFile.SectionKind.dictionary.rawValue {
            let trailer = section.offset + section.length - 32
            for offset in trailer..<(trailer + 8) { bytes[offset] = 0 }
        }
        let footer = bytes.count - SegmentFooter.size
        let hashesOffset = bytes.withUnsafeBytes { Int(BinaryReader(buffer: $0).uint64(at: footer + 24) ?? 0) }
        for offset in hashesOffset..<footer { bytes[offset] = 0 }
        return bytes
    }

    /// The live tombstones of a store's segments, in ID order.
    static func liveTombstones(_ store: DocumentStore) throws -> [MappedSegment.Tombstone] {
        let segments = store.state.withLock { $0.entries.segments }
        var tombstones: [MappedSegment.Tombstone] = []
        for segment in segments {
            for index in 0..<segment.mapped.tombstoneCount where !segment.isDeleted(segment.mapped.count + index) {
                tombstones.append(try segment.mapped.tombstone(at: index))
            }
        }
        return tombstones.sorted { UTF8Bytes.precedes($0.id, $1.id) }
    }

    /// Merges every segment and requires the merged file to be what a build of the live entries
    /// and tombstones writes; with `flagsMayStay`, but for the fields' flags (a merge keeps a
    /// field's "arrays somewhere" flags after the documents that set them are gone, which only
    /// sends queries on the field to the slower exact path).
    static func expectMergeEqualsBuild(
        _ store: DocumentStore, folder: TemporaryFolder, _ context: String, flagsMayStay: Bool = false
    ) throws {
        let number = try #require(store.state.withLock { $0.manifest?.nextNumber })
        let built = try store.segmentBytes(number: number, tombstones: try liveTombstones(store))
        try store.mergeSegments()
        let merged = try #require(
            FileManager.default.contents(atPath: folder.data + "/" + FileNames.segments + "/" + Manifest.fileName(number: number))
                .map { [UInt8]($0) })
        #expect(try store.statistics().segments?.count == 1, "\(context)")
        #expect(merged.count == built.count, "\(context): merged \(merged.count) bytes, built \(built.count)")
        let (a, b) =
            flagsMayStay ? (try comparableButFlags(merged), try comparableButFlags(built)) : (comparable(merged), comparable(built))
        if a != b {
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            let (x, y) = (try MappedSegment(SegmentReader(FileBytes(merged))), try MappedSegment(SegmentReader(FileBytes(built))))
            let section = x.reader.sections.first { $0.offset <= first && first < $0.offset + $0.length }
            var entry = ""
            for ordinal in 0..<min(x.count, y.count) where try x.entry(at: ordinal) != y.entry(at: ordinal) {
                entry = "; entry \(ordinal): merged \(try x.entry(at: ordinal)), built \(try y.entry(at: ordinal))"
                break
            }
            Issue.record(
                "\(context): the merged segment differs from the built one from byte \(first) of \(b.count) (section kind \(section?.kind ?? 0))\(entry)"
            )
        }
        try expectConsistent(store)
    }

    @Test(
        "a merge of segments with additions, changes (new spellings, arrays, missing fields) and removals across them writes what a build writes",
        arguments: [UInt64(3), 17, 2024])
    func mergeEqualsBuild(seed: UInt64) throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(
            folder: folder.data, schema: .nyt, options: .init(lockTimeout: 5, flushThreshold: 0, mergeFactor: 1_000))
        var generator = ArticleGenerator(seed: seed)
        let generated = generator.documents(600)
        let ids = generated.compactMap { $0["_id"]?.stringValue }
        for result in try store.upsert(Array(generated[..<300])) { _ = try result.outcome.get() }
        try store.merge()
        for result in try store.upsert(Array(generated[300...])) { _ = try result.outcome.get() }
        try store.merge()

        // A third segment: awkward new documents, changed ones, removed ones, and a value whose
        // every document goes (its dictionary row must go too).
        for result in try store.upsert(QueryEdgeDocuments.edgeDocuments) { _ = try result.outcome.get() }
        let changed = stride(from: 0, to: ids.count, by: 7).map { index in
            generated[index].setting("section_name", to: .string(index % 2 == 0 ? "Changed After" : "Sports"))
                .setting("word_count", to: index % 3 == 0 ? .number("879.0") : .string("879"))
                .setting("abstract", to: .string("merged text \(index) zyzzyva"))
        }
        for result in try store.upsert(changed) { _ = try result.outcome.get() }
        _ = try store.remove(stride(from: 3, to: ids.count, by: 11).map { ids[$0] })
        let sections = Dictionary(grouping: generated, by: { $0["section_name"]?.stringValue ?? "" })
        if let (_, members) = sections.min(by: { $0.value.count < $1.value.count }) {
            _ = try store.remove(members.compactMap { $0["_id"]?.stringValue })
        }
        try store.merge()
        #expect(try store.statistics().segments?.count == 3)
        try Self.expectMergeEqualsBuild(store, folder: folder, "seed \(seed), first merge", flagsMayStay: true)

        // A second merge on top of a merged segment, with edge documents changed and removed.
        let edgeIDs = QueryEdgeDocuments.edgeDocuments.compactMap { $0["_id"]?.stringValue }
        _ = try store.remove(Array(edgeIDs.prefix(5)))
        let again = QueryEdgeDocuments.edgeDocuments.suffix(6).map { $0.setting("news_desk", to: .string("Late Desk")) }
        for result in try store.upsert(again) { _ = try result.outcome.get() }
        try store.put(try json(#"{"section_name": "Zzz Last", "abstract": "aardvark zyzzyva"}"#), id: "zzz-last")
        try store.put(try json(#"{"section_name": "   ", "pub_date": "1851-09-18"}"#), id: "!first")
        try store.merge()
        try Self.expectMergeEqualsBuild(store, folder: folder, "seed \(seed), second merge", flagsMayStay: true)

        // Everything removed: the merge keeps only the tombstones.
        _ = try store.remove(try store.entries().map(\.id))
        try store.merge()
        try Self.expectMergeEqualsBuild(store, folder: folder, "seed \(seed), all removed", flagsMayStay: true)
        #expect(try store.count == 0)
    }

    @Test("a segment built with its text index on another thread is the one a build on one thread writes")
    func buildOnTwoThreadsEqualsBuildOnOne() throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .nyt, options: .init(lockTimeout: 5, flushThreshold: 0))
        var generator = ArticleGenerator(seed: 5)
        // A flush of 4,096 documents or more builds its text index on a second thread.
        for result in try store.upsert(generator.documents(4_200) + QueryEdgeDocuments.edgeDocuments) { _ = try result.outcome.get() }
        let onOneThread = try store.segmentBytes(number: 1)
        try store.merge()
        let written = try #require(
            FileManager.default.contents(atPath: folder.data + "/" + FileNames.segments + "/" + Manifest.fileName(number: 1))
                .map { [UInt8]($0) })
        #expect(Self.comparable(written) == Self.comparable(onOneThread))
        try expectConsistent(store)
    }

    @Test("a merge that finds a segment damaged builds the segments again from the log, and the writes that follow merge again")
    func mergeOverADamagedSegmentBuildsFromTheLog() throws {
        let folder = TemporaryFolder()
        // Two segments of one size class (below 200 documents), merged by the second merge().
        let options = DocumentStore.Options(lockTimeout: 5, flushThreshold: 100, mergeFactor: 2)
        let store = try DocumentStore(folder: folder.data, schema: .nyt, options: options)
        for n in 0..<40 {
            try store.put(try json(#"{"section_name": "S\#(n % 5)", "abstract": "word\#(n) common"}"#), id: "d\(n)")
        }
        try store.merge()
        // Flip a byte of the text postings, which opening and writing never read but a merge does.
        let path = folder.data + "/" + FileNames.segments + "/" + Manifest.fileName(number: 1)
        var bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        let reader = try SegmentReader(FileBytes(bytes))
        let postings = try #require(reader.section(.textPostings))
        bytes[postings.offset + postings.length / 2] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let writer = try DocumentStore(folder: folder.data, schema: .nyt, options: options)
        for n in 40..<44 { try writer.put(try json(#"{"section_name": "Late", "abstract": "late\#(n)"}"#), id: "d\(n)") }
        try writer.merge()
        #expect(try writer.statistics().documents == 44)
        #expect(try writer.statistics().changesAfterSegments == 0)
        try expectConsistent(writer)
        for n in 44..<48 { try writer.put(try json(#"{"section_name": "Later"}"#), id: "d\(n)") }
        try writer.merge()
        let fresh = try DocumentStore(folder: folder.data, schema: .nyt, options: options)
        #expect(try fresh.count(matching: try FilterParser.parseAny("\"common\"")).count == 40)
        #expect(try fresh.count(matching: try FilterParser.parseAny("section_name = Late")).count == 4)
        try expectConsistent(fresh)
    }
}

// MARK: - The files beside the segments

/// The manifest, the deletes files, the ID filter and the merge policy, each on its own.
@Suite("segment manifest, deletions, filter and policy")
struct SegmentFileTests {
    static let manifest = Manifest(
        schemaHash: 0x1234_5678_9abc_def0,
        coverage: .init(identity: 77, offset: 4096, lines: 12, sequence: 15, tailHash: 0xfeed),
        nextNumber: 9,
        segments: [
            .init(
                number: 3, documents: 10, tombstones: 2, bytes: 5000, firstSequence: 1, lastSequence: 12, footerHash: 42, liveBytes: 800,
                deletedDocuments: 2, deletedTombstones: 1, deletesGeneration: 4),
            .init(number: 8, documents: 3, tombstones: 0, bytes: 900, firstSequence: 13, lastSequence: 15, footerHash: 7, liveBytes: 300),
        ])

    @Test("a manifest written and read back is the same, and reads as JSON a person can follow")
    func manifestRoundTrips() throws {
        let bytes = Self.manifest.encoded()
        #expect(try Manifest.decode(bytes, path: "m") == Self.manifest)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""file": "000003.seg""#) && text.contains(#""deletes": "000003-4.del""#))
    }

    @Test(
        "a manifest that is not one is refused naming the key path",
        arguments: [
            (#"[]"#, "expected a JSON object"),
            (#"{"format": 2}"#, "format: manifest format 2"),
            (#"{"format": 1, "log": 3}"#, "log: missing or not an object"),
            (#"{"format": 1, "log": {"identity": 1, "offset": 0, "lines": 0, "seq": 0, "tail_hash": "zz"}}"#, "log.tail_hash"),
            (
                #"{"format": 1, "log": {"identity": 1, "offset": 0, "lines": 0, "seq": 0, "tail_hash": "0000000000000000"}, "segments": [{"number": 0}]}"#,
                "segments[0].number"
            ),
        ])
    func badManifestsAreRefused(text: String, message: String) {
        do {
            _ = try Manifest.decode(Array(text.utf8), path: "segments/manifest.json")
            Issue.record("\(text) was read")
        } catch {
            #expect(error.errorDescription?.contains(message) == true, "\(error.errorDescription ?? "")")
        }
    }

    @Test("deletes written and read back are the same; a flipped byte or another segment's file is refused")
    func deletesRoundTrip() throws {
        let deletes = SegmentDeletes(segment: 3, ordinals: [1, 5, 9]).adding([7, 5, 2])
        #expect(deletes.ordinals == [1, 2, 5, 7, 9])
        var bytes = deletes.encoded()
        #expect(try SegmentDeletes.decode(bytes, segment: 3, limit: 12) == deletes)
        #expect(throws: SegmentDamage.self) { try SegmentDeletes.decode(bytes, segment: 4, limit: 12) }
        #expect(throws: SegmentDamage.self) { try SegmentDeletes.decode(bytes, segment: 3, limit: 8) }
        bytes[26] ^= 1
        #expect(throws: SegmentDamage.self) { try SegmentDeletes.decode(bytes, segment: 3, limit: 12) }
    }

    @Test("the ID filter lets every ID it holds through and few it does not")
    func idFilterHasNoFalseNegatives() {
        var random = SplitMix64(state: 5)
        func id() -> [UInt8] { Array("nyt://article/\(random.next())-\(random.next())".utf8) }
        let held = (0..<20_000).map { _ in id() }
        let filter = IDFilter.build(held.map { $0.withUnsafeBytes { IDFilter.hash($0) } })
        let passed = filter.withUnsafeBytes { raw in
            held.allSatisfy { $0.withUnsafeBytes { IDFilter.mayContain(IDFilter.hash($0), in: raw) } }
        }
        #expect(passed)
        let others = (0..<20_000).map { _ in id() }
        let falsePositives = filter.withUnsafeBytes { raw in
            others.filter { $0.withUnsafeBytes { IDFilter.mayContain(IDFilter.hash($0), in: raw) } }.count
        }
        #expect(falsePositives < 20_000 / 25, "\(falsePositives) of 20,000")
    }

    @Test(
        "the merge policy merges a full size class, smallest first, and rewrites a segment mostly deleted",
        arguments: [
            ([10, 10, 10], [Int]?.some([1, 2, 3])), ([10, 10], nil), ([100, 10, 10, 10], [2, 3, 4]), ([40, 40, 40, 10, 10], [1, 2, 3]),
        ])
    func mergePolicyPicks(sizes: [Int], expected: [Int]?) {
        let segments = sizes.enumerated().map { index, size in
            Manifest.Segment(
                number: index + 1, documents: size, tombstones: 0, bytes: 0, firstSequence: 0, lastSequence: 0, footerHash: 0, liveBytes: 0)
        }
        #expect(MergePolicy(factor: 3, base: 8).nextMerge(segments) == expected)
        var dead = segments
        dead[0].deletedDocuments = dead[0].documents
        if sizes.count < 3 { #expect(MergePolicy(factor: 3, base: 8).nextMerge(dead) == [1]) }
    }
}

// MARK: - Relevance

/// Ranked text search: one scoring function with the whole store's term statistics, so the order
/// does not depend on how the documents are split into segments.
@Suite("relevance across segments")
struct RelevanceTests {
    /// The same documents stored in `chunks` flushes (with a tail after the last), or in none.
    static func store(_ documents: [JSONValue], chunks: Int?, folder: TemporaryFolder) throws -> DocumentStore {
        let options: DocumentStore.Options =
            chunks == nil
            ? .init(lockTimeout: 5, flushThreshold: 0, usesSegments: false) : .init(lockTimeout: 5, flushThreshold: 0, mergeFactor: 1_000)
        let store = try DocumentStore(folder: folder.data, schema: .nyt, options: options)
        let size = max(1, documents.count / max(1, chunks ?? 1))
        for start in stride(from: 0, to: documents.count, by: size) {
            for result in try store.upsert(Array(documents[start..<min(documents.count, start + size)])) { _ = try result.outcome.get() }
            if let chunks, chunks > 1, start + size < documents.count - 40 { try store.merge() }
        }
        return store
    }

    @Test("the ranked order of text searches is the same from the log alone, one segment, and seven segments with a tail")
    func rankingDoesNotDependOnSegments() throws {
        var generator = ArticleGenerator(seed: 41)
        let documents = generator.documents(900)
        let searches = ["election", "budget storm", "museum festival", "strike", "court water", "brooklyn market"]
        var rankings: [[String]] = []
        for chunks in [nil, 1, 7] as [Int?] {
            let folder = TemporaryFolder()
            let store = try Self.store(documents, chunks: chunks, folder: folder)
            if chunks == 7 { #expect(try store.statistics().segments?.count ?? 0 >= 6) }
            var ranking: [String] = []
            for search in searches {
                ranking += try store.find(Query(filter: .text(search), limit: 25)).ids
                ranking.append("|")
            }
            rankings.append(ranking)
        }
        #expect(rankings[0] == rankings[1], "one segment ranks otherwise than the log")
        #expect(rankings[0] == rankings[2], "seven segments and a tail rank otherwise than the log")
        #expect(rankings[0].filter { $0 != "|" }.count > 20)
    }

    @Test("a word few documents hold counts for more than one most hold")
    func rareWordsWeighMore() throws {
        let folder = TemporaryFolder()
        let store = try DocumentStore(folder: folder.data, schema: .nyt, options: .init(lockTimeout: 5, flushThreshold: 0))
        // "common" is in every headline; "rare" in one document's; each of the two first
        // documents holds one of them twice, in its abstract.
        try store.put(try json(#"{"headline": {"main": "common rare"}, "abstract": "common common"}"#), id: "a-common-twice")
        try store.put(try json(#"{"headline": {"main": "common rare"}, "abstract": "rare rare"}"#), id: "b-rare-twice")
        for n in 0..<30 { try store.put(try json(#"{"headline": {"main": "common \#(n)"}}"#), id: "filler-\(n)") }
        try store.merge()
        #expect(try store.find(Query(filter: .text("common rare"), limit: 2)).ids == ["b-rare-twice", "a-common-twice"])
        let statistics = Relevance.Statistics(documents: 32, frequencies: ["common": 32, "rare": 2])
        #expect(statistics.inverseFrequency(of: "rare") > statistics.inverseFrequency(of: "common"))
        #expect(statistics.inverseFrequency(of: "common") > 0)
    }
}
