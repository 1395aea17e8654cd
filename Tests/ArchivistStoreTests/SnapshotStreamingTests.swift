import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

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
        let schema = StoreSchema.testArticles
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

/// What a merge keeps of its inputs and its output while it writes: each input's new ordinals
/// packed, and the new file's block checksums spilled to a file.
@Suite("a merge's bounded state")
struct MergeStateTests {
    @Test(
        "a packed map of new ordinals answers as the plain array it replaces, for any spread of the inputs",
        arguments: [(1, 1, 0.0), (1, 200, 0.0), (2, 1_000, 0.1), (3, 5_000, 0.5), (8, 3_000, 0.9), (5, 777, 1.0)])
    func packedOrdinalsMatchPlainArray(inputs: Int, size: Int, deadShare: Double) {
        var generator = SplitMix64(state: UInt64(inputs * 31 + size))
        func draw() -> Double { Double(generator.next() % 1_000_000) / 1_000_000 }
        // Each input's live set, then a merge order: a random interleaving of their members.
        var sets: [OrdinalSet] = []
        for input in 0..<inputs {
            let capacity = input == 0 ? size : Int(generator.next() % UInt64(size)) + 1
            var set = OrdinalSet(capacity: capacity)
            for ordinal in 0..<capacity where draw() >= deadShare { set.insert(ordinal) }
            sets.append(set)
        }
        var plain = sets.map { [UInt32](repeating: UInt32.max, count: $0.capacity) }
        var maps = sets.map { OrdinalMap(live: $0) }
        var cursors = sets.map { set in (0..<set.capacity).filter { set.contains($0) } }
        var next: UInt32 = 0
        while cursors.contains(where: { !$0.isEmpty }) {
            // Long runs from one input as well as alternation: the widths of the packed blocks vary.
            let candidates = cursors.indices.filter { !cursors[$0].isEmpty }
            let input = candidates[Int(generator.next() % UInt64(candidates.count))]
            let run = generator.next() % 4 == 0 ? Int(generator.next() % 300) + 1 : 1
            for _ in 0..<min(run, cursors[input].count) {
                let ordinal = cursors[input].removeFirst()
                plain[input][ordinal] = next
                maps[input].append(next)
                next += 1
            }
        }
        for index in maps.indices { maps[index].finish() }
        for (input, map) in maps.enumerated() {
            for ordinal in -1...(sets[input].capacity + 70) {
                let inside = ordinal >= 0 && ordinal < plain[input].count
                let expected = inside && plain[input][ordinal] != UInt32.max ? plain[input][ordinal] : nil
                #expect(map[ordinal] == expected, "input \(input), ordinal \(ordinal)")
            }
        }
    }

    @Test("a map of 1M documents from 8 inputs in turn holds under 2 bytes a document")
    func packedOrdinalsAreSmall() {
        let inputs = 8
        let each = 131_072
        var maps = (0..<inputs).map { _ in OrdinalMap(live: OrdinalSet(capacity: each, full: true)) }
        var next: UInt32 = 0
        for _ in 0..<each {
            for input in 0..<inputs {
                maps[input].append(next)
                next += 1
            }
        }
        for index in maps.indices { maps[index].finish() }
        let held = maps.reduce(0) { $0 + $1.heldBytes }
        #expect(held < 2 * inputs * each, "\(held) bytes for \(inputs * each) documents")
        #expect(maps[3][5] == UInt32(5 * inputs + 3) && maps[7][each - 1] == next - 1)
    }

    @Test(
        "a writer whose block checksums spill to a file writes the same bytes as one that holds them",
        arguments: [1, 100, 511, 512, 700])
    func spilledChecksumsWriteTheSameFile(held: Int) throws {
        let folder = try TemporaryFolder()
        let fileSystem = POSIXFileSystem()
        var generator = SplitMix64(state: UInt64(held))
        // About 1,300 blocks of 4 KiB over two sections: three runs of checksums.
        let body = (0..<(SegmentFile.blockSize * 1_300 + 77)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        func write(_ writer: inout SegmentWriter) throws(StoreError) {
            try writer.begin(.termHeap)
            try writer.append(Array(body[0..<(body.count / 3)]))
            try writer.end()
            try writer.begin(.idHeap)
            try writer.append(Array(body[(body.count / 3)...]))
            try writer.end()
            try writer.finish(
                documentCount: 0, documentBytes: 0, coverage: SegmentFile.Coverage(identity: 1, offset: 0, lines: 0, tailHash: 0),
                schemaHash: 7, createdAt: Timestamp(milliseconds: 1_000))
        }
        let whole = try SegmentWriter.bytes { (writer) throws(StoreError) in try write(&writer) }
        final class Buffer: @unchecked Sendable { var bytes: [UInt8] = [] }
        let buffer = Buffer()
        let spillPath = folder.root + "/checksums.spill"
        let spill = SpillBuffer(fileSystem: fileSystem, path: spillPath, limit: 8 * held)
        var writer = SegmentWriter(hashSpill: spill) { (bytes) throws(StoreError) in
            buffer.bytes.append(contentsOf: bytes)
        }
        try write(&writer)
        let same = buffer.bytes == whole
        #expect(same, "\(buffer.bytes.count) bytes written against \(whole.count)")
        #expect(!FileManager.default.fileExists(atPath: spillPath), "the spill file is removed once drained")
        let reader = try SegmentReader(FileBytes(buffer.bytes))
        #expect(try reader.verifyAll(reading: { offset, count in Array(buffer.bytes[offset..<(offset + count)]) }) == nil)
    }
}
