/// What `FileSystem.status(of:)` reports.
public struct FileStatus: Sendable, Equatable {
    /// Size in bytes.
    public var size: Int
    /// Modification time.
    public var modified: Timestamp
    /// Identity of the file (inode number), to notice when a file was replaced.
    public var identity: UInt64
    /// Whether this is a folder.
    public var isFolder: Bool

    /// Creates a status.
    public init(size: Int, modified: Timestamp, identity: UInt64, isFolder: Bool) {
        self.size = size
        self.modified = modified
        self.identity = identity
        self.isFolder = isFolder
    }
}
