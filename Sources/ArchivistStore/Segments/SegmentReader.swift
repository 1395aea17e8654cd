import ArchivistBase
import Synchronization

/// Why a snapshot file cannot be used. A snapshot is derived data: the store then answers from
/// `index.jsonl` and the next writer (or `repair`) builds a new one.
enum SegmentDamage: Error, Equatable, CustomStringConvertible {
    /// The file is not a snapshot, is of another version, or its footer or table do not check.
    case unreadable(String)
    /// A block of a section does not match its checksum.
    case corrupt(section: UInt32, block: Int)

    var description: String {
        switch self {
        case .unreadable(let reason): return reason
        case .corrupt(let section, let block): return "block \(block) of section kind \(section) does not match its checksum"
        }
    }
}

/// A snapshot file's bytes (mapped), with its footer and section table checked; each block of a
/// section is checked against its checksum the first time it is read (in layout 3, after the run
/// of checksums that holds its own).
final class SegmentReader: Sendable {
    /// The file's bytes; they live as long as this reader.
    let file: FileBytes
    /// The sections, in the table's order.
    let sections: [SegmentFile.Section]
    /// The footer, checked: the documents held, the part of `index.jsonl` covered, the schema's
    /// hash, and the checksum that names the file's contents (the manifest records it).
    let footer: SegmentFooter
    /// The size of the blocks checked one at a time (the last block of a section may be shorter).
    let blockSize: Int
    /// The file's layout version (1 to 4), which decides its checksum function and, from 4, what
    /// its entries hold.
    let layout: UInt32
    /// Where the block checksums start in the file.
    private let hashesOffset: Int
    /// Layout 3: where the checksums of the runs of block checksums start (checked at open with
    /// the footer); 0 in layouts 1 and 2, whose block checksums the footer's checksum covers.
    private let runsOffset: Int
    private let blockCount: Int
    private let verified: Mutex<Verified>
    /// Set once `verifyAll` has checked every block: reads then skip the lock of `verified`
    /// (`check` reads a segment from many threads after checking it whole).
    private let everyBlockChecked = Atomic<Bool>(false)

    /// The blocks and the runs of block checksums checked so far.
    private struct Verified {
        var blocks: OrdinalSet
        var runs: OrdinalSet
    }

    /// Checks the footer, the table and the checksum of what the footer covers (in layouts 1 and
    /// 2 every block checksum, in layout 3 one checksum per run of them); nothing else is read.
    init(_ file: FileBytes) throws(SegmentDamage) {
        self.file = file
        let raw = UnsafeRawBufferPointer(file.buffer)
        let reader = BinaryReader(buffer: raw)
        guard raw.count >= 8 + SegmentFooter.size, reader.uint64(at: 0) == SegmentFile.magic else {
            throw .unreadable("not a snapshot file")
        }
        let footer = try SegmentFooter(decoding: raw)
        self.footer = footer
        layout = footer.layout
        blockSize = footer.blockSize
        runsOffset = footer.runsOffset
        hashesOffset = footer.hashesOffset
        blockCount = footer.blockCount
        sections = try Self.readTable(
            reader, at: footer.tableOffset, count: footer.sectionCount, end: footer.sectionsEnd, blocks: footer.blockCount,
            blockSize: footer.blockSize)
        // Layouts 1 and 2 have no runs: the footer's checksum covered every block checksum.
        verified = Mutex(
            Verified(
                blocks: OrdinalSet(capacity: footer.blockCount),
                runs: OrdinalSet(capacity: SegmentFile.runCount(blocks: footer.blockCount), full: footer.layout <= 2)))
    }

    private static func readTable(
        _ reader: BinaryReader, at offset: Int, count: Int, end: Int,
        blocks: Int, blockSize: Int
    ) throws(SegmentDamage) -> [SegmentFile.Section] {
        var sections: [SegmentFile.Section] = []
        for row in 0..<count {
            let at = offset + row * SegmentFile.sectionRowSize
            guard let kind = reader.uint32(at: at), let field = reader.uint32(at: at + 4),
                let start = reader.uint64(at: at + 8), let length = reader.uint64(at: at + 16),
                let first = reader.uint64(at: at + 24),
                start >= 8, start <= UInt64(end), length <= UInt64(end) - start, first <= UInt64(blocks)
            else { throw .unreadable("section \(row) out of bounds") }
            let section = SegmentFile.Section(kind: kind, field: field, offset: Int(start), length: Int(length), firstBlock: Int(first))
            guard section.firstBlock + section.blockCount(blockSize: blockSize) <= blocks else {
                throw .unreadable("section \(row) has no checksums")
            }
            sections.append(section)
        }
        return sections
    }

    /// The first section of a kind (and field), or nil.
    func section(_ kind: SegmentFile.SectionKind, field: UInt32 = SegmentFile.noField) -> SegmentFile.Section? {
        sections.first { $0.kind == kind.rawValue && $0.field == field }
    }

    /// `count` bytes of a section from `offset` in it, their blocks checked first; throws when
    /// they are out of the section or a block does not match its checksum.
    func bytes(of section: SegmentFile.Section, at offset: Int = 0, count: Int? = nil) throws(SegmentDamage) -> UnsafeRawBufferPointer {
        let count = count ?? (section.length - offset)
        guard offset >= 0, count >= 0, offset <= section.length, count <= section.length - offset else {
            throw .unreadable("read outside section kind \(section.kind)")
        }
        if count > 0 { try verify(section, from: offset / blockSize, through: (offset + count - 1) / blockSize) }
        return UnsafeRawBufferPointer(
            rebasing: UnsafeRawBufferPointer(file.buffer)[(section.offset + offset)..<(section.offset + offset + count)])
    }

    /// The checksum of block `index` (of the whole file's list), read where it lies; in layout 3
    /// the run that holds it must have been checked (`checkRun`).
    private func blockHash(_ index: Int) -> UInt64 {
        BinaryReader(buffer: UnsafeRawBufferPointer(file.buffer)).uint64(at: hashesOffset + index * 8) ?? 0
    }

    /// Layout 3: checks the run of block checksums that holds block `index`'s, once.
    private func checkRun(holding index: Int) throws(SegmentDamage) {
        let run = index / SegmentFile.hashesPerRun
        if verified.withLock({ $0.runs.contains(run) }) { return }
        let first = run * SegmentFile.hashesPerRun
        let count = min(SegmentFile.hashesPerRun, blockCount - first)
        let raw = UnsafeRawBufferPointer(file.buffer)
        let start = hashesOffset + first * 8
        let expected = BinaryReader(buffer: raw).uint64(at: runsOffset + run * 8) ?? 0
        guard WordHash.striped(UnsafeRawBufferPointer(rebasing: raw[start..<(start + count * 8)])) == expected else {
            throw .unreadable("the checksums of blocks \(first) to \(first + count - 1) do not match theirs")
        }
        verified.withLock { $0.runs.insert(run) }
    }

    /// How many blocks have been checked so far (each once).
    var checkedBlocks: Int { verified.withLock { $0.blocks.count } }

    /// Checks the blocks `first...last` of a section that are not checked yet.
    private func verify(_ section: SegmentFile.Section, from first: Int, through last: Int) throws(SegmentDamage) {
        if everyBlockChecked.load(ordering: .acquiring) { return }
        // Most reads fall in blocks already checked: that answer costs a lock and no allocation.
        let base = section.firstBlock
        let allChecked = verified.withLock { done in
            for block in first...last where !done.blocks.contains(base + block) { return false }
            return true
        }
        if allChecked { return }
        let pending = verified.withLock { done in (first...last).filter { !done.blocks.contains(base + $0) } }
        let raw = UnsafeRawBufferPointer(file.buffer)
        for block in pending {
            if layout > 2 { try checkRun(holding: base + block) }
            let start = section.offset + block * blockSize
            let end = min(section.offset + section.length, start + blockSize)
            guard WordHash.checksum(layout: layout, UnsafeRawBufferPointer(rebasing: raw[start..<end])) == blockHash(base + block)
            else {
                throw .corrupt(section: section.kind, block: block)
            }
        }
        verified.withLock { done in for block in pending { done.blocks.insert(base + block) } }
    }

    /// Checks every block of every section against bytes `read` gives (offset, count in the
    /// file) rather than through the mapping, so a check of a large snapshot does not keep the
    /// whole file in memory; nil from `read` means the file is shorter.
    func verifyAll(reading read: (_ offset: Int, _ count: Int) throws(StoreError) -> [UInt8]?) throws(StoreError) -> SegmentDamage? {
        // A MiB (or a block, when blocks are larger) at a time: one read for many small blocks.
        let blocksPerRead = max(1, (1 << 20) / blockSize)
        for section in sections where section.length > 0 {
            let blocks = section.blockCount(blockSize: blockSize)
            for firstBlock in stride(from: 0, to: blocks, by: blocksPerRead) {
                let start = section.offset + firstBlock * blockSize
                let count = min(section.offset + section.length, start + blocksPerRead * blockSize) - start
                guard let bytes = try read(start, count), bytes.count == count else { return .unreadable("the snapshot is cut short") }
                for block in firstBlock..<min(blocks, firstBlock + blocksPerRead) {
                    if layout > 2 {
                        do throws(SegmentDamage) { try checkRun(holding: section.firstBlock + block) } catch { return error }
                    }
                    let from = (block - firstBlock) * blockSize
                    let hash = bytes.withUnsafeBytes { raw in
                        WordHash.checksum(layout: layout, UnsafeRawBufferPointer(rebasing: raw[from..<min(count, from + blockSize)]))
                    }
                    if hash != blockHash(section.firstBlock + block) { return .corrupt(section: section.kind, block: block) }
                }
            }
        }
        everyBlockChecked.store(true, ordering: .releasing)
        return nil
    }
}
