import ArchivistBase
import Testing

@testable import ArchivistStore

/// The footer of a segment file (`SegmentFooter`): what the writer encodes is what the reader
/// decodes, in every layout, and a footer that does not check is refused with what is wrong.
@Suite struct SegmentFooterTests {
    /// A small segment of `layout` (one section) and the footer its writer wrote.
    static func segment(layout: UInt32 = SegmentFile.version) throws -> (bytes: [UInt8], footer: SegmentFooter) {
        var footer: SegmentFooter?
        let bytes = try SegmentWriter.bytes(layout: layout) { (writer) throws(StoreError) in
            try writer.add(.fieldNames, Array("headline.main\npub_date".utf8))
            try writer.add(.idHeap, Array(repeating: 0x61, count: 5000))
            try writer.finish(
                documentCount: 3, documentBytes: 4321,
                coverage: SegmentFile.Coverage(identity: 77, offset: 1234, lines: 9, tailHash: 0xfeed, sequence: 12),
                schemaHash: 0xabcd, createdAt: Timestamp(milliseconds: 1_764_000_000_123))
            footer = writer.footer
        }
        return (bytes, try #require(footer))
    }

    /// The little-endian word at `offset` of the footer of `bytes`.
    static func word(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        let at = bytes.count - SegmentFooter.size + offset
        return bytes[at..<(at + 8)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    @Test("a footer written is the footer read, its 128 bytes the file's last", arguments: [UInt32(1), 2, 3, 4])
    func footersRoundTrip(layout: UInt32) throws {
        let (bytes, written) = try Self.segment(layout: layout)
        #expect(written.layout == layout && written.documentCount == 3 && written.coverage.sequence == 12)
        #expect(written.blockSize == SegmentFile.blockSize(writtenIn: layout))
        #expect(Array(bytes.suffix(SegmentFooter.size)) == written.encoded())
        let read = try bytes.withUnsafeBytes { raw throws(SegmentDamage) in try SegmentFooter(decoding: raw) }
        #expect(read == written)
        #expect(read.encoded() == written.encoded())
        #expect(Self.word(bytes, SegmentFooter.checksumOffset) == written.checksum)
        // The reader takes what the footer says.
        let reader = try SegmentReader(FileBytes(bytes))
        #expect(reader.footer == written && reader.layout == layout && reader.blockSize == written.blockSize)
    }

    @Test("the checksum covers the table and the footer's words: sealing again gives the same")
    func sealingIsTheChecksumOfTheTableAndTheWords() throws {
        let (bytes, written) = try Self.segment()
        var unsealed = written
        unsealed.checksum = 0
        let covered = Array(bytes[written.tableOffset..<(bytes.count - SegmentFooter.size)])
        #expect(unsealed.sealed(covering: covered) == written)
        #expect(unsealed.sealed(covering: covered + [0]).checksum != written.checksum)
    }

    @Test("a broken footer is refused with what is wrong in it")
    func brokenFootersAreRefused() throws {
        let (bytes, written) = try Self.segment()
        let footer = bytes.count - SegmentFooter.size
        func refusal(_ damaged: [UInt8]) -> SegmentDamage? {
            damaged.withUnsafeBytes { raw in
                do throws(SegmentDamage) {
                    _ = try SegmentFooter(decoding: raw)
                    return nil
                } catch {
                    return error
                }
            }
        }
        func setting(_ offset: Int, to value: UInt64, in bytes: [UInt8] = bytes) -> [UInt8] {
            var damaged = bytes
            withUnsafeBytes(of: value.littleEndian) { damaged.replaceSubrange((footer + offset)..<(footer + offset + 8), with: $0) }
            return damaged
        }
        #expect(refusal(Array(bytes.prefix(SegmentFooter.size))) == .unreadable("not a snapshot file"))
        #expect(refusal(Array(bytes.dropLast())) == .unreadable("no snapshot footer (the file is cut short)"))
        var version = bytes
        version[footer + 8] = 9
        #expect(refusal(version) == .unreadable("snapshot layout version 9, this archivist reads 1 to \(SegmentFile.version)"))
        #expect(refusal(setting(16, to: 1 << 63)) == .unreadable("footer value out of range"))
        #expect(refusal(setting(16, to: UInt64(written.tableOffset + 8))) == .unreadable("snapshot table out of bounds"))
        #expect(refusal(setting(32, to: UInt64(bytes.count))) == .unreadable("snapshot table out of bounds"))
        var table = bytes
        table[written.tableOffset] ^= 0x01
        #expect(refusal(table) == .unreadable("snapshot footer checksum mismatch"))
        #expect(refusal(setting(40, to: 4)) == .unreadable("snapshot footer checksum mismatch"), "the document count is covered")
        #expect(
            refusal(setting(SegmentFooter.checksumOffset, to: written.checksum ^ 1)) == .unreadable("snapshot footer checksum mismatch"))
        // Words out of range under a checksum that matches are still refused.
        var resealed = setting(40, to: 1 << 63)
        let checksum = Array(resealed[written.tableOffset..<(resealed.count - 8)]).withUnsafeBytes {
            WordHash.checksum(layout: written.layout, $0)
        }
        resealed = setting(SegmentFooter.checksumOffset, to: checksum, in: resealed)
        #expect(refusal(resealed) == .unreadable("footer value out of range"))
        let covered = Array(bytes[written.tableOffset..<footer])
        var wrongBlocks = written
        wrongBlocks.blockSize = 3000
        let blocks = Array(bytes[..<footer]) + wrongBlocks.sealed(covering: covered).encoded()
        #expect(refusal(blocks) == .unreadable("snapshot block size 3000 out of range"))
        #expect(throws: SegmentDamage.unreadable("snapshot block size 3000 out of range")) { _ = try SegmentReader(FileBytes(blocks)) }
    }
}
