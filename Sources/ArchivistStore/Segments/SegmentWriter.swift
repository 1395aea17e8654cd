import ArchivistBase

/// Assembles a snapshot file: its sections, then the block checksums, the section table, the
/// checksums of the block checksums' runs and the footer (`docs/FORMAT.md`, "index.snapshot";
/// layouts 1 and 2 put the table before the block checksums and have no runs). The bytes go to a
/// sink a block (4 KiB) at a time,
/// so a section of any size can be streamed (`begin`, `append`, `end`) without being held whole.
struct SegmentWriter {
    /// Where the bytes go, in order.
    typealias Sink = (_ bytes: [UInt8]) throws(StoreError) -> Void

    private let sink: Sink
    /// The layout version written, and its block size.
    private let layout: UInt32
    private let blockSize: Int
    /// Bytes not yet given to the sink (at most a block of the open section, or padding).
    private var pending = BinaryWriter()
    /// Bytes given to the sink.
    private var flushed = 0
    private var sections: [SegmentFile.Section] = []
    /// The checksums of the blocks written (none with `hashSpill`, which has them).
    private var blockHashes: [UInt64] = []
    /// Where the block checksums go instead, held up to its bound and spilled to a file past it (a
    /// merge's output has one per 4 KiB: a million for a segment of 4M documents).
    private let hashSpill: SpillBuffer?
    /// How many blocks were written.
    private var blockCount: Int { (hashSpill?.count ?? 0) / 8 + blockHashes.count }
    /// The open section: its kind, field, offset and first block, and where its current block starts.
    private var open: (kind: SegmentFile.SectionKind, field: UInt32, offset: Int, firstBlock: Int, blockStart: Int)?
    /// The footer `finish` wrote (nil before).
    private(set) var footer: SegmentFooter?

    /// A writer giving its bytes to `sink`, the file's leading magic first. Layouts 1 (1 MiB
    /// blocks, no block size in the footer) and 2 (16 KiB blocks, one chain of checksum steps)
    /// are written only by tests of reading old files.
    /// With `hashSpill` (layout 3 and later), the block checksums go there rather than to memory.
    init(layout: UInt32 = SegmentFile.version, hashSpill: SpillBuffer? = nil, sink: @escaping Sink) {
        precondition((1...SegmentFile.version).contains(layout), "unknown snapshot layout \(layout)")
        precondition(hashSpill == nil || layout > 2, "layouts 1 and 2 hold their block checksums")
        self.sink = sink
        self.hashSpill = hashSpill
        self.layout = layout
        blockSize = SegmentFile.blockSize(writtenIn: layout)
        pending.append(SegmentFile.magic)
    }

    /// The offset of the next byte in the file.
    private var offset: Int { flushed + pending.bytes.count }

    /// Adds a whole section.
    mutating func add(_ kind: SegmentFile.SectionKind, field: UInt32 = SegmentFile.noField, _ body: [UInt8]) throws(StoreError) {
        try begin(kind, field: field)
        try append(body)
        try end()
    }

    /// Starts a section (8-aligned); its bytes follow with `append`, and `end` closes it.
    mutating func begin(_ kind: SegmentFile.SectionKind, field: UInt32 = SegmentFile.noField) throws(StoreError) {
        precondition(open == nil, "a snapshot section is already open")
        pending.align(to: 8)
        try flush()
        open = (kind, field, offset, blockCount, offset)
    }

    /// Appends bytes to the open section; each full block is checksummed and written.
    mutating func append(_ bytes: [UInt8]) throws(StoreError) {
        guard var section = open else { preconditionFailure("no snapshot section is open") }
        var start = 0
        while start < bytes.count {
            let room = blockSize - (offset - section.blockStart)
            let end = min(bytes.count, start + room)
            pending.append(contentsOf: bytes[start..<end])
            start = end
            if offset - section.blockStart == blockSize {
                try record(pending.bytes.withUnsafeBytes { WordHash.checksum(layout: layout, $0) })
                try flush()
                section.blockStart = offset
            }
        }
        open = section
    }

    /// Appends the bytes of a binary writer to the open section.
    mutating func append(_ writer: BinaryWriter) throws(StoreError) {
        try append(writer.bytes)
    }

    /// Closes the open section: its last (partial) block is checksummed and written.
    mutating func end() throws(StoreError) {
        guard let section = open else { preconditionFailure("no snapshot section is open") }
        if offset > section.blockStart {
            try record(pending.bytes.withUnsafeBytes { WordHash.checksum(layout: layout, $0) })
        }
        sections.append(
            SegmentFile.Section(
                kind: section.kind.rawValue, field: section.field, offset: section.offset, length: offset - section.offset,
                firstBlock: section.firstBlock))
        open = nil
        try flush()
    }

    /// Keeps a block's checksum (in `hashSpill`, if the writer has one).
    private mutating func record(_ hash: UInt64) throws(StoreError) {
        guard let hashSpill else { return blockHashes.append(hash) }
        var bytes = BinaryWriter(capacity: 8)
        bytes.append(hash)
        try hashSpill.append(bytes)
    }

    private mutating func flush() throws(StoreError) {
        guard !pending.bytes.isEmpty else { return }
        let bytes = pending.bytes
        flushed += bytes.count
        pending = BinaryWriter()
        try sink(bytes)
    }

    /// Writes the block checksums, the table, the runs' checksums and the footer (layouts 1 and
    /// 2: the table, the block checksums and the footer), which `footer` then holds.
    mutating func finish(
        documentCount: Int, documentBytes: Int, coverage: SegmentFile.Coverage, schemaHash: UInt64,
        createdAt: Timestamp
    ) throws(StoreError) {
        precondition(open == nil, "a snapshot section is still open")
        // Counted before the spill is drained (and emptied).
        let blockCount = blockCount
        pending.align(to: 8)
        try flush()
        var table = BinaryWriter()
        for section in sections {
            table.append(section.kind)
            table.append(section.field)
            table.append(UInt64(section.offset))
            table.append(UInt64(section.length))
            table.append(UInt64(section.firstBlock))
        }
        let tableOffset: Int
        let hashesOffset: Int
        var tail = BinaryWriter()
        if layout <= 2 {
            var hashes = BinaryWriter()
            for hash in blockHashes { hashes.append(hash) }
            tableOffset = offset
            hashesOffset = tableOffset + table.bytes.count
            tail.append(contentsOf: table.bytes)
            tail.append(contentsOf: hashes.bytes)
        } else {
            // The block checksums come first, outside what the footer's checksum covers: an open
            // checks the table and one checksum per run of them, and each run when it is first used.
            // They go out a run at a time, not copied whole: a segment of 4M documents has a
            // million blocks.
            hashesOffset = offset
            // The checksums' bytes are cut into runs as they come (from the spill, or from memory).
            var runs = BinaryWriter()
            let runBytes = SegmentFile.hashesPerRun * 8
            var run: [UInt8] = []
            func add(_ bytes: [UInt8]) throws(StoreError) {
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + runBytes - run.count)
                    run.append(contentsOf: bytes[start..<end])
                    start = end
                    if run.count == runBytes { try endRun() }
                }
            }
            func endRun() throws(StoreError) {
                guard !run.isEmpty else { return }
                run.withUnsafeBytes { runs.append(WordHash.striped($0)) }
                pending.append(contentsOf: run)
                try flush()
                run.removeAll(keepingCapacity: true)
            }
            if let hashSpill {
                try hashSpill.drain { (chunk) throws(StoreError) in try add(chunk) }
            } else {
                var held = BinaryWriter(capacity: blockHashes.count * 8)
                for hash in blockHashes { held.append(hash) }
                try add(held.bytes)
            }
            try endRun()
            tableOffset = offset
            tail.append(contentsOf: table.bytes)
            tail.append(contentsOf: runs.bytes)
        }
        let footer = SegmentFooter(
            layout: layout, sectionCount: sections.count, tableOffset: tableOffset, hashesOffset: hashesOffset,
            blockCount: blockCount, documentCount: documentCount, coverage: coverage, schemaHash: schemaHash,
            createdAt: createdAt, documentBytes: documentBytes, blockSize: blockSize
        ).sealed(covering: tail.bytes)
        tail.append(contentsOf: footer.encoded())
        pending = tail
        try flush()
        self.footer = footer
    }
}

extension SegmentWriter {
    /// The bytes of a snapshot assembled in memory by `body` (for small snapshots and tests).
    static func bytes(
        layout: UInt32 = SegmentFile.version, _ body: (inout SegmentWriter) throws(StoreError) -> Void
    ) throws(StoreError) -> [UInt8] {
        final class Buffer: @unchecked Sendable { var bytes: [UInt8] = [] }
        let buffer = Buffer()
        var writer = SegmentWriter(layout: layout) { (bytes) throws(StoreError) in buffer.bytes.append(contentsOf: bytes) }
        try body(&writer)
        return buffer.bytes
    }
}
