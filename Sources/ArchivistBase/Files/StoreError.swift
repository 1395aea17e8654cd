import Foundation

/// Everything the store can fail with. Each case names what was wrong and where.
public enum StoreError: Error, LocalizedError, Sendable, Equatable {
    /// A file-system call failed: the path, the operation and the system's message.
    case io(path: String, operation: String, message: String)
    /// A file holds text that is not valid JSON.
    case invalidJSON(path: String, error: JSONSyntaxError)
    /// A document was refused: its ID (or where it came from) and why.
    case invalidDocument(source: String, reason: String)
    /// An ID cannot be used.
    case invalidID(id: String, reason: String)
    /// No document has this ID.
    case notFound(id: String)
    /// The data folder was written by a newer Archivist.
    case newerFormat(path: String, found: Int, supported: Int)
    /// A file is valid JSON but not what it should hold (the metadata, a side file): the file, and
    /// what is wrong where (`searches.jury.from: '2020-13-01' is not a YYYY-MM-DD date`).
    case invalidFile(path: String, reason: String)
    /// The index names a document whose file is gone (the index is stale): the file and the ID.
    case staleIndex(path: String, id: String)
    /// The projected fields in the index file are not valid JSON.
    case unreadableIndex(path: String, error: JSONSyntaxError)
    /// Another process holds the write lock.
    case locked(path: String, holder: String, waitedSeconds: Double)
    /// The data folder path is not a folder.
    case notAFolder(path: String)
    /// The snapshot of the index (`index.snapshot`, derived data) is damaged: the store answers
    /// from the log instead.
    case damagedSnapshot(path: String, reason: String)
    /// A filter could not be read: where (`column 17`, `$in at section_name`) and what was expected.
    case invalidFilter(String)
    /// Changes after `since` were asked for, but the feed is whole only after `start`: `compact`
    /// dropped removals, or a rebuild of the index renumbered every document (the index's path).
    case feedCompacted(path: String, since: Int, start: Int)

    /// A one-line, lowercase message that starts with its subject.
    public var errorDescription: String? {
        switch self {
        case .io(let path, let operation, let message):
            return "\(path): cannot \(operation): \(message)"
        case .invalidJSON(let path, let error):
            return "\(path): \(error.description)"
        case .invalidDocument(let source, let reason):
            return "\(source): \(reason)"
        case .invalidID(let id, let reason):
            return "ID \(StoreError.quote(id)): \(reason)"
        case .notFound(let id):
            return "ID \(StoreError.quote(id)): no such document"
        case .newerFormat(let path, let found, let supported):
            return "\(path): format version \(found) is newer than this archivist supports (\(supported))"
        case .invalidFile(let path, let reason):
            return "\(path): \(reason)"
        case .staleIndex(let path, let id):
            return "\(path): no such file, though the index lists ID \(StoreError.quote(id)) (the index is stale)"
        case .unreadableIndex(let path, let error):
            return "\(path): projected fields: \(error.description)"
        case .locked(let path, let holder, let waited):
            return "\(path): locked by \(holder); gave up after \(String(format: "%.1f", waited)) s"
        case .notAFolder(let path):
            return "\(path): not a folder"
        case .damagedSnapshot(let path, let reason):
            return "\(path): \(reason)"
        case .invalidFilter(let message):
            return "filter: \(message)"
        case .feedCompacted(let path, let since, let start):
            return
                "\(path): the changes feed starts after seq \(start) (compact dropped removals or a rebuild renumbered the documents up to it), so the changes after \(since) are not all there: read the documents again and follow from \(start)"
        }
    }

    /// An ID quoted for messages, clipped so a huge ID does not flood the terminal.
    package static func quote(_ id: String) -> String {
        let clipped = id.count > 80 ? String(id.prefix(77)) + "..." : id
        return "'" + clipped + "'"
    }
}
