import ArchivistBase

/// Bytes written in order and read back once, held in memory up to a bound and spilled to a
/// temporary file past it: a merge writes a field's postings straight into its segment while its
/// dictionary rows and values (as many as the documents, for a field such as a headline) wait
/// here, so the merge's memory does not grow with the store.
final class SpillBuffer {
    private let fileSystem: any FileSystem
    /// The temporary file the bytes spill to.
    private let path: String
    private var memory: [UInt8] = []
    private var spilled = 0
    /// The bytes held in memory before they spill.
    private let limit: Int

    /// A buffer spilling to `path` (created when first needed, removed by `discard`).
    init(fileSystem: any FileSystem, path: String, limit: Int = 4 << 20) {
        self.fileSystem = fileSystem
        self.path = path
        self.limit = limit
    }

    /// How many bytes it holds.
    var count: Int { spilled + memory.count }

    /// Appends bytes.
    func append(_ bytes: [UInt8]) throws(StoreError) {
        memory.append(contentsOf: bytes)
        if memory.count >= limit { try spill() }
    }

    /// Appends a binary writer's bytes.
    func append(_ writer: BinaryWriter) throws(StoreError) {
        try append(writer.bytes)
    }

    private func spill() throws(StoreError) {
        guard !memory.isEmpty else { return }
        if spilled == 0 { try fileSystem.write(memory, to: path) } else { try fileSystem.append(memory, to: path) }
        spilled += memory.count
        memory.removeAll(keepingCapacity: true)
    }

    /// Hands every byte, in order, to `body` a chunk at a time, then forgets them.
    func drain(_ body: ([UInt8]) throws(StoreError) -> Void) throws(StoreError) {
        var offset = 0
        while offset < spilled {
            guard let chunk = try fileSystem.contents(of: path, from: offset, limit: min(limit, spilled - offset)), !chunk.isEmpty else {
                throw .io(path: path, operation: "read", message: "the spill file is shorter than what was written to it")
            }
            try body(chunk)
            offset += chunk.count
        }
        if !memory.isEmpty { try body(memory) }
        discard()
    }

    /// Forgets the bytes and removes the spill file.
    func discard() {
        if spilled > 0 { _ = try? fileSystem.removeFile(path) }
        spilled = 0
        memory = []
    }

    deinit { discard() }
}
