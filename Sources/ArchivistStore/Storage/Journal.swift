import ArchivistBase

/// The owner of `journal.jsonl`, the write-ahead list of the IDs a batch touches
/// (`docs/FORMAT.md`, "journal.jsonl"): one `{"id":".."}` line per ID.
///
/// A writer makes it durable, with the batch's temporary files, before it replaces any document,
/// and removes it once the batch's renames and index lines are durable. Its presence at open means
/// a writer crashed mid-batch: replaying it rederives the index entries of exactly those IDs from
/// their files. A torn last line (the crash came while it was written) is skipped: no document
/// was touched yet.
struct Journal {
    /// The file system the journal lives on.
    let fileSystem: any FileSystem
    /// The journal's path.
    let path: String

    /// The journal of a data folder.
    init(folder: String, fileSystem: any FileSystem) {
        self.fileSystem = fileSystem
        self.path = folder + "/" + FileNames.journal
    }

    /// The journal's bytes for a batch touching `ids`, in their order.
    static func encode(_ ids: [DocumentID]) -> [UInt8] {
        var bytes: [UInt8] = []
        for id in ids {
            bytes.append(contentsOf: JSONWriter.compactBytes(.object([JSONMember(key: "id", value: .string(id.rawValue))])))
            bytes.append(0x0A)
        }
        return bytes
    }

    /// The IDs a journal's lines name. A line that is not `{"id": STRING}` (a torn last line, or
    /// garbage) names nothing.
    static func decode(_ bytes: [UInt8]) -> Set<DocumentID> {
        var ids: Set<DocumentID> = []
        for line in bytes.split(separator: 0x0A) {
            if case .string(let id)? = (try? JSONParser.parse(Array(line)))?["id"], !id.isEmpty {
                ids.insert(DocumentID(id))
            }
        }
        return ids
    }

    /// Writes the journal of a batch (not synced: the writer syncs it with the temporary files).
    func write(_ ids: [DocumentID]) throws(StoreError) {
        try fileSystem.write(Self.encode(ids), to: path)
    }

    /// Whether a journal is present.
    var exists: Bool {
        get throws(StoreError) { try fileSystem.status(of: path) != nil }
    }

    /// The IDs of the journal present, or nil when there is none.
    func read() throws(StoreError) -> Set<DocumentID>? {
        try fileSystem.contents(of: path).map(Self.decode)
    }

    /// Hands each ID of the journal present to `rederive`, in byte order of the IDs; nothing when
    /// there is no journal. Returns whether there was one. The journal is left in place: the caller
    /// removes it once what `rederive` wrote is durable.
    @discardableResult
    func replay(_ rederive: (DocumentID) throws(StoreError) -> Void) throws(StoreError) -> Bool {
        guard let ids = try read() else { return false }
        for id in ids.sorted() { try rederive(id) }
        return true
    }

    /// Removes the journal (once the batch it names is durable).
    func remove() throws(StoreError) {
        try fileSystem.removeFile(path)
    }
}
