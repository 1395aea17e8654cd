import ArchivistBase

/// The fixed 128 bytes that end a segment file (`docs/FORMAT.md`, "index.snapshot"): what the file
/// holds, where its table and checksums are, what part of the log it covers, and the checksum of
/// everything from the table to the footer's own words. The one encoder (`encoded()`, for
/// `SegmentWriter.finish`) and decoder (`init(decoding:)`, for `SegmentReader`) of its layout:
///
/// ```
/// offset  little-endian word
///      0  magic `ARCSNAP1`                    8  layout (UInt32), section count (UInt32)
///     16  table offset                       24  offset of the block checksums
///     32  block count                        40  document count
///     48  identity of index.jsonl            56  bytes of the log covered
///     64  lines of the log covered           72  checksum of the log's tail before them
///     80  schema hash                        88  creation time (Int64 ms)
///     96  document bytes                    104  block size (0 in layout 1)
///    112  last sequence number covered (0: the lines covered)
///    120  checksum (WordHash of the file from the table offset to here)
/// ```
struct SegmentFooter: Equatable, Sendable {
    /// The footer's size in bytes.
    static let size = 128
    /// Where the checksum lies in the footer: it covers the file's bytes from the table up to it.
    static let checksumOffset = 120

    /// The file's layout version (1 to `SegmentFile.version`).
    var layout: UInt32
    /// How many rows the section table has.
    var sectionCount: Int
    /// Where the section table starts.
    var tableOffset: Int
    /// Where the block checksums start.
    var hashesOffset: Int
    /// How many block checksums there are.
    var blockCount: Int
    /// How many documents the file holds.
    var documentCount: Int
    /// The part of `index.jsonl` it holds.
    var coverage: SegmentFile.Coverage
    /// The checksum of the schema it was built with.
    var schemaHash: UInt64
    /// When it was built.
    var createdAt: Timestamp
    /// The sum of the documents' sizes.
    var documentBytes: Int
    /// The size of the blocks checked one at a time (written 0 in layout 1, whose size is fixed).
    var blockSize: Int
    /// The checksum of the file from the table to the checksum's own offset in the footer (set by
    /// `sealed(covering:)`); it names the file's contents, and the manifest records it.
    var checksum: UInt64 = 0

    /// A footer, its checksum not set yet.
    init(
        layout: UInt32, sectionCount: Int, tableOffset: Int, hashesOffset: Int, blockCount: Int, documentCount: Int,
        coverage: SegmentFile.Coverage, schemaHash: UInt64, createdAt: Timestamp, documentBytes: Int, blockSize: Int
    ) {
        self.layout = layout
        self.sectionCount = sectionCount
        self.tableOffset = tableOffset
        self.hashesOffset = hashesOffset
        self.blockCount = blockCount
        self.documentCount = documentCount
        self.coverage = coverage
        self.schemaHash = schemaHash
        self.createdAt = createdAt
        self.documentBytes = documentBytes
        self.blockSize = blockSize
    }

    /// Where the sections end: at the table in layouts 1 and 2, at the block checksums from 3.
    var sectionsEnd: Int { layout <= 2 ? tableOffset : hashesOffset }

    /// Layout 3 on: where the checksums of the runs of block checksums start (after the table); 0
    /// in layouts 1 and 2, which have none.
    var runsOffset: Int { layout <= 2 ? 0 : tableOffset + sectionCount * SegmentFile.sectionRowSize }

    /// The footer's 128 bytes.
    func encoded() -> [UInt8] {
        var out = BinaryWriter(capacity: Self.size)
        out.append(SegmentFile.magic)
        out.append(layout)
        out.append(UInt32(sectionCount))
        out.append(UInt64(tableOffset))
        out.append(UInt64(hashesOffset))
        out.append(UInt64(blockCount))
        out.append(UInt64(documentCount))
        out.append(coverage.identity)
        out.append(UInt64(coverage.offset))
        out.append(UInt64(coverage.lines))
        out.append(coverage.tailHash)
        out.append(schemaHash)
        out.append(createdAt.milliseconds)
        out.append(UInt64(documentBytes))
        out.append(UInt64(layout == 1 ? 0 : blockSize))
        out.append(UInt64(coverage.sequence))
        out.append(checksum)
        precondition(out.bytes.count == Self.size, "a segment footer is \(Self.size) bytes")
        return out.bytes
    }

    /// The footer with its checksum set: that of `covered` (the file's bytes from the table to the
    /// footer) followed by the footer's words before the checksum.
    func sealed(covering covered: [UInt8]) -> SegmentFooter {
        var sealed = self
        let checked = covered + encoded()[..<Self.checksumOffset]
        sealed.checksum = checked.withUnsafeBytes { WordHash.checksum(layout: layout, $0) }
        return sealed
    }

    /// Reads and checks the footer at the end of `file` (a whole segment file): its magic and
    /// layout, that its words are in range, that the table and the checksums it places fit before
    /// it, its checksum over the bytes it covers, and its block size. Nothing else of the file is
    /// read. A footer of before layout 4 whose sequence word is 0 covers as many sequence numbers
    /// as lines (lines without a number were numbered by their place).
    init(decoding file: UnsafeRawBufferPointer) throws(SegmentDamage) {
        let reader = BinaryReader(buffer: file)
        let size = file.count
        guard size >= 8 + Self.size else { throw .unreadable("not a snapshot file") }
        let footer = size - Self.size
        guard reader.uint64(at: footer) == SegmentFile.magic else { throw .unreadable("no snapshot footer (the file is cut short)") }
        guard let version = reader.uint32(at: footer + 8), (1...SegmentFile.version).contains(version) else {
            throw .unreadable(
                "snapshot layout version \(reader.uint32(at: footer + 8) ?? 0), this archivist reads 1 to \(SegmentFile.version)")
        }
        func word(_ at: Int) throws(SegmentDamage) -> Int {
            guard let value = reader.uint64(at: footer + at), value <= UInt64(Int.max) else {
                throw .unreadable("footer value out of range")
            }
            return Int(value)
        }
        let sectionCount = Int(reader.uint32(at: footer + 12) ?? 0)
        let tableOffset = try word(16)
        let hashesOffset = try word(24)
        let blockCount = try word(32)
        if version <= 2 {
            guard tableOffset >= 8, tableOffset <= footer, sectionCount <= (footer - tableOffset) / SegmentFile.sectionRowSize,
                hashesOffset == tableOffset + sectionCount * SegmentFile.sectionRowSize,
                blockCount <= (footer - hashesOffset) / 8, hashesOffset + blockCount * 8 == footer
            else { throw .unreadable("snapshot table out of bounds") }
        } else {
            // A block count from a foreign or damaged footer may be anything: no more than the
            // file could hold checksums of (`scripts/fuzz snapshot` found one that overflowed).
            guard blockCount <= size / 8 else { throw .unreadable("snapshot table out of bounds") }
            let runs = SegmentFile.runCount(blocks: blockCount)
            guard hashesOffset >= 8, hashesOffset <= footer, blockCount <= (footer - hashesOffset) / 8,
                tableOffset == hashesOffset + blockCount * 8,
                sectionCount <= (footer - tableOffset) / SegmentFile.sectionRowSize,
                tableOffset + sectionCount * SegmentFile.sectionRowSize + runs * 8 == footer
            else { throw .unreadable("snapshot table out of bounds") }
        }
        guard let covered = reader.bytes(at: tableOffset, count: size - 8 - tableOffset),
            let checksum = reader.uint64(at: size - 8), WordHash.checksum(layout: version, covered) == checksum
        else { throw .unreadable("snapshot footer checksum mismatch") }
        let documentCount = try word(40)
        let lines = try word(64)
        let sequence = try word(112)
        let coverage = SegmentFile.Coverage(
            identity: reader.uint64(at: footer + 48) ?? 0, offset: try word(56),
            lines: lines, tailHash: reader.uint64(at: footer + 72) ?? 0, sequence: sequence == 0 ? lines : sequence)
        let blockSize: Int
        let documentBytes = try word(96)
        if version == 1 {
            blockSize = SegmentFile.layout1BlockSize
        } else {
            let size = try word(104)
            guard SegmentFile.blockSizes.contains(size), size.nonzeroBitCount == 1 else {
                throw .unreadable("snapshot block size \(size) out of range")
            }
            blockSize = size
        }
        self.init(
            layout: version, sectionCount: sectionCount, tableOffset: tableOffset, hashesOffset: hashesOffset, blockCount: blockCount,
            documentCount: documentCount, coverage: coverage, schemaHash: reader.uint64(at: footer + 80) ?? 0,
            createdAt: Timestamp(milliseconds: Int64(bitPattern: reader.uint64(at: footer + 88) ?? 0)), documentBytes: documentBytes,
            blockSize: blockSize)
        self.checksum = checksum
    }
}
