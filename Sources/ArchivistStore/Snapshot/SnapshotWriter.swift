/// Assembles a snapshot file: its sections, then the section table, the block checksums and the
/// footer (`docs/FORMAT.md`, "index.snapshot").
struct SnapshotWriter {
    private var output = BinaryWriter()
    private var sections: [SnapshotFile.Section] = []
    private var blockHashes: [UInt64] = []

    /// A writer with the file's leading magic written.
    init() {
        output.append(SnapshotFile.magic)
    }

    /// Adds a section.
    mutating func add(_ kind: SnapshotFile.SectionKind, field: UInt32 = SnapshotFile.noField, _ body: [UInt8]) {
        output.align(to: 8)
        let offset = output.bytes.count
        output.append(contentsOf: body)
        let section = SnapshotFile.Section(
            kind: kind.rawValue, field: field, offset: offset, length: body.count,
            firstBlock: blockHashes.count)
        body.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(raw.count, start + SnapshotFile.blockSize)
                blockHashes.append(WordHash.hash(UnsafeRawBufferPointer(rebasing: raw[start..<end])))
                start = end
            }
        }
        sections.append(section)
    }

    /// The whole file: the sections written, then the table, the block checksums and the footer.
    mutating func finish(
        documentCount: Int, documentBytes: Int, coverage: SnapshotFile.Coverage, schemaHash: UInt64,
        createdAt: Timestamp
    ) -> [UInt8] {
        output.align(to: 8)
        let tableOffset = output.bytes.count
        for section in sections {
            output.append(section.kind)
            output.append(section.field)
            output.append(UInt64(section.offset))
            output.append(UInt64(section.length))
            output.append(UInt64(section.firstBlock))
        }
        let hashesOffset = output.bytes.count
        for hash in blockHashes { output.append(hash) }
        let footerStart = output.bytes.count
        output.append(SnapshotFile.magic)
        output.append(SnapshotFile.version)
        output.append(UInt32(sections.count))
        output.append(UInt64(tableOffset))
        output.append(UInt64(hashesOffset))
        output.append(UInt64(blockHashes.count))
        output.append(UInt64(documentCount))
        output.append(coverage.identity)
        output.append(UInt64(coverage.offset))
        output.append(UInt64(coverage.lines))
        output.append(coverage.tailHash)
        output.append(schemaHash)
        output.append(createdAt.milliseconds)
        output.append(UInt64(documentBytes))
        for _ in 0..<2 { output.append(UInt64(0)) }
        let checked = output.bytes[tableOffset..<output.bytes.count]
        output.append(checked.withUnsafeBytes { WordHash.hash($0) })
        precondition(output.bytes.count - footerStart == SnapshotFile.footerSize)
        return output.bytes
    }
}
