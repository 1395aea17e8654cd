/// The container format of `index.snapshot` (`docs/FORMAT.md`, "index.snapshot"): sections of
/// little-endian binary data, each 8-byte aligned, the checksums of every block of the sections
/// (4 KiB in layout 3, 16 KiB in layout 2, 1 MiB in layout 1), the section table, and a fixed
/// footer that says what part of `index.jsonl` the file covers. As an SSTable of LevelDB the file
/// is written once, aside, and renamed into place; it is never changed after.
///
/// Everything in it is derived from `index.jsonl` and the documents: deleting it changes nothing but
/// speed. A reader trusts nothing it has not checked: the footer and the table are verified when the
/// file is opened, each block of a section when it is first read (in layout 3, with the 4 KiB run
/// of block checksums that holds its own, checked against the list of their checksums the footer
/// covers).
enum SegmentFile {
    /// `ARCSNAP1`, little-endian: the file's first eight bytes and the footer's.
    static let magic: UInt64 = 0x3150_414E_5343_5241
    /// The layout version this build writes: 4, a segment of `segments/` (entries carry their
    /// sequence number and a digest of their fields, with an ID filter and tombstones). It reads
    /// layouts 1 to 3 too: `index.snapshot` of formats 2 and 3, whose entries point into the log.
    static let version: UInt32 = 4
    /// Sections are verified in blocks of this many bytes in the files this build writes (the
    /// footer of a layout-2 or -3 file says its block size). A reader checks a whole block the
    /// first time it reads any byte of it: a query that reads a few bytes here and there (a binary
    /// search over the IDs, a date's dictionary rows) checks little more than it reads.
    static let blockSize = 1 << 12
    /// The block size layout 2 was written with.
    static let layout2BlockSize = 1 << 14
    /// The block size of layout 1, which has no field for it.
    static let layout1BlockSize = 1 << 20
    /// The block sizes a layout-2 or -3 footer may give.
    static let blockSizes = (1 << 12)...(1 << 24)
    /// In layout 3, the block checksums are checked in runs of this many (4 KiB), each against
    /// its own checksum in the list after the table, so an open reads none of them.
    static let hashesPerRun = 512

    /// How many runs of block checksums `blocks` checksums make in layout 3.
    static func runCount(blocks: Int) -> Int { blocks / hashesPerRun + (blocks % hashesPerRun == 0 ? 0 : 1) }

    /// The block size a writer of `layout` uses (the footer of layouts 2 and 3 records it).
    static func blockSize(writtenIn layout: UInt32) -> Int {
        switch layout {
        case 1: return layout1BlockSize
        case 2: return layout2BlockSize
        default: return blockSize
        }
    }
    /// A section table row's size in bytes.
    static let sectionRowSize = 32

    /// What part of `index.jsonl` a snapshot holds: its identity, the bytes and lines covered, and
    /// a checksum of the last bytes before `offset` (so a rewritten log is never mistaken for it).
    struct Coverage: Equatable, Sendable {
        /// The identity (inode) of `index.jsonl` when the snapshot was made.
        var identity: UInt64
        /// Bytes covered: the end of a complete line.
        var offset: Int
        /// Lines covered (blank lines not counted).
        var lines: Int
        /// `WordHash` of the up to 4096 bytes before `offset`.
        var tailHash: UInt64
        /// The sequence number of the last line covered (the footer's word after `block-size`;
        /// 0 there, as snapshots before format 3 wrote it, means the count of lines covered:
        /// lines without a number are numbered by their place).
        var sequence: Int = 0

        /// How many bytes before `offset` the tail checksum covers.
        static let tailLength = 4096
    }

    /// The kinds of section.
    enum SectionKind: UInt32, Sendable {
        /// `(N+1)` UInt64 offsets into `idHeap`, one per document in ID byte order.
        case idOffsets = 1
        /// The IDs' UTF-8 bytes, back to back.
        case idHeap = 2
        /// `N` rows of `EntryRow.size` bytes: what the index says of each document.
        case entries = 3
        /// The projected paths, one per line (`\n`), in the projection's order: field `k` is line `k`.
        case fieldNames = 4
        /// Layout 4: a blocked Bloom filter of the IDs (`IDFilter`).
        case idFilter = 5
        /// Layout 4: `(T+1)` UInt64 offsets into `tombstoneHeap`, one per removed ID in byte order.
        case tombstoneOffsets = 6
        /// Layout 4: the removed IDs' UTF-8 bytes.
        case tombstoneHeap = 7
        /// Layout 4: `T` rows of 24 bytes: the removal's sequence number, time and fields digest.
        case tombstoneRows = 8
        /// A field's dictionary: rows of `DictionaryRow.size` bytes, one per distinct value, in
        /// sort order.
        case dictionary = 16
        /// A field's distinct values: raw UTF-8 for strings, compact JSON for the rest.
        case dictionaryHeap = 17
        /// A field's postings: UInt32 ordinals, grouped by dictionary row, ascending in each group.
        case postings = 18
        /// The text index's terms: rows of `TermRow.size` bytes, in byte order of the terms.
        case terms = 32
        /// The terms' UTF-8 bytes.
        case termHeap = 33
        /// The text postings: (UInt32 ordinal, Float32 weight) pairs grouped by term, ascending.
        case textPostings = 34
    }

    /// A row of the section table.
    struct Section: Equatable, Sendable {
        var kind: UInt32
        /// The projected field the section belongs to (its line in `fieldNames`), or `UInt32.max`.
        var field: UInt32
        var offset: Int
        var length: Int
        /// The index of the section's first block checksum.
        var firstBlock: Int

        /// How many blocks of `blockSize` bytes the section spans.
        func blockCount(blockSize: Int = SegmentFile.blockSize) -> Int { (length + blockSize - 1) / blockSize }
    }

    /// No field: the section belongs to the whole snapshot.
    static let noField = UInt32.max
}

/// Little-endian binary output for the snapshot's sections.
struct BinaryWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    /// An empty writer, with room for `capacity` bytes.
    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: Int64) { append(UInt64(bitPattern: value)) }

    mutating func append(_ value: Float) { append(value.bitPattern) }

    mutating func append(_ value: UInt8) { bytes.append(value) }

    mutating func append<Bytes: Collection>(contentsOf data: Bytes) where Bytes.Element == UInt8 {
        bytes.append(contentsOf: data)
    }

    /// Pads with zeros to a multiple of `alignment`.
    mutating func align(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }
}

/// Bounds-checked little-endian reads from a buffer: a snapshot of any bytes is refused, never
/// read out of bounds.
struct BinaryReader {
    let buffer: UnsafeRawBufferPointer

    /// The UInt64 at `offset`, or nil past the end.
    @inline(__always)
    func uint64(at offset: Int) -> UInt64? {
        guard offset >= 0, offset <= buffer.count - 8 else { return nil }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The UInt32 at `offset`, or nil past the end.
    @inline(__always)
    func uint32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset <= buffer.count - 4 else { return nil }
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The byte at `offset`, or nil past the end.
    @inline(__always)
    func uint8(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < buffer.count else { return nil }
        return buffer[offset]
    }

    /// The `count` bytes at `offset`, or nil when they are not all inside the buffer.
    func bytes(at offset: Int, count: Int) -> UnsafeRawBufferPointer? {
        guard offset >= 0, count >= 0, offset <= buffer.count, count <= buffer.count - offset else { return nil }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
    }
}
