/// What the store needs from a file system. Paths are absolute or relative to the working folder.
///
/// The store reaches the disk only through this protocol, so a test can put a fault-injecting
/// implementation in its place (one that forgets every write not yet synced, as a power loss does).
public protocol FileSystem: Sendable {
    /// The whole contents of a file; `nil` when it does not exist.
    func contents(of path: String) throws(StoreError) -> [UInt8]?
    /// The bytes of a file from `offset` to its end; `nil` when it does not exist.
    func contents(of path: String, from offset: Int) throws(StoreError) -> [UInt8]?
    /// At most `limit` bytes of a file from `offset`; `nil` when it does not exist.
    func contents(of path: String, from offset: Int, limit: Int) throws(StoreError) -> [UInt8]?
    /// The whole file mapped into memory (or read, where mapping is not possible); nil when it
    /// does not exist.
    func mappedContents(of path: String) throws(StoreError) -> FileBytes?
    /// The whole file mapped, to be read here and there (no read-ahead of the whole file).
    func mappedContentsForRandomReads(of path: String) throws(StoreError) -> FileBytes?
    /// Creates or truncates a file and writes `bytes` (not synced).
    func write(_ bytes: [UInt8], to path: String) throws(StoreError)
    /// Appends `bytes` to a file, creating it when missing (not synced).
    func append(_ bytes: [UInt8], to path: String) throws(StoreError)
    /// Cuts a file to `size` bytes (not synced).
    func truncate(_ path: String, to size: Int) throws(StoreError)
    /// Renames a file, atomically replacing any file at `destination` (as rename(2)).
    func rename(_ source: String, to destination: String) throws(StoreError)
    /// Removes a file; returns false when there was none.
    @discardableResult
    func removeFile(_ path: String) throws(StoreError) -> Bool
    /// Creates a folder and any missing parents.
    func createFolder(_ path: String) throws(StoreError)
    /// The names in a folder (not `.` and `..`); `nil` when the folder does not exist.
    func entries(ofFolder path: String) throws(StoreError) -> [String]?
    /// The names in a folder with their inode numbers (0 where the file system has none), so that
    /// a reader of many files can read them in the order the disk holds them; `nil` when the
    /// folder does not exist.
    func inodeEntries(ofFolder path: String) throws(StoreError) -> [(name: String, inode: UInt64)]?
    /// Size, modification time and kind of a file; `nil` when it does not exist.
    func status(of path: String) throws(StoreError) -> FileStatus?
    /// Where a symbolic link points; nil when `path` is not one (or does not exist).
    func symbolicLinkTarget(of path: String) throws(StoreError) -> String?
    /// Makes one file's contents (or one folder's entries) durable, as fsync(2).
    func synchronize(_ path: String) throws(StoreError)
    /// Makes every write on the file system holding `path` durable, as syncfs(2).
    func synchronizeAll(containing path: String) throws(StoreError)
    /// Takes the exclusive lock on `path`, waiting at most `timeout` seconds. The lock is held
    /// until the returned token is released (or the process ends).
    func lockExclusively(_ path: String, timeout: Double) throws(StoreError) -> any FileLockToken
}

extension FileSystem {
    /// Every name with inode 0 (a file system without inode numbers).
    public func inodeEntries(ofFolder path: String) throws(StoreError) -> [(name: String, inode: UInt64)]? {
        try entries(ofFolder: path)?.map { ($0, 0) }
    }

    /// No links: a file system without them (the fault-injecting model).
    public func symbolicLinkTarget(of path: String) throws(StoreError) -> String? { nil }

    /// Reads the whole tail and keeps `limit` bytes (file systems that can seek do better).
    public func contents(of path: String, from offset: Int, limit: Int) throws(StoreError) -> [UInt8]? {
        guard let tail = try contents(of: path, from: offset) else { return nil }
        return tail.count > limit ? Array(tail[..<limit]) : tail
    }
}

extension FileSystem {
    /// Reads the file (file systems that can map do better).
    public func mappedContents(of path: String) throws(StoreError) -> FileBytes? {
        try contents(of: path).map(FileBytes.init)
    }

    /// As `mappedContents(of:)`.
    public func mappedContentsForRandomReads(of path: String) throws(StoreError) -> FileBytes? {
        try mappedContents(of: path)
    }
}
