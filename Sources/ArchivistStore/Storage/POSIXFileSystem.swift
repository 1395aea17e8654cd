import ArchivistBase
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system, through POSIX calls (no `FileManager`, whose writes fsync every file).
public struct POSIXFileSystem: FileSystem {
    /// Creates the real file system.
    public init() {}

    static func failure(_ path: String, _ operation: String, _ code: Int32 = errno) -> StoreError {
        .io(path: path, operation: operation, message: String(cString: strerror(code)).lowercased())
    }

    /// Reads a whole file.
    public func contents(of path: String) throws(StoreError) -> [UInt8]? {
        try contents(of: path, from: 0)
    }

    /// Reads a file from an offset to its end.
    public func contents(of path: String, from offset: Int) throws(StoreError) -> [UInt8]? {
        try contents(of: path, from: offset, limit: Int.max)
    }

    /// Opens a file to read it and stats it; nil when it does not exist, an error for a folder
    /// or anything else that is not a regular file (a FIFO, a device, a socket: opened without
    /// blocking, and never read, so a FIFO put in a document's place cannot hang a command).
    /// The caller closes the descriptor.
    func openForReading(_ path: String) throws(StoreError) -> (Int32, stat)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Self.failure(path, "open")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = Self.failure(path, "stat")
            close(fd)
            throw error
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw StoreError.io(path: path, operation: "read", message: "is a folder")
        }
        if (info.st_mode & S_IFMT) != S_IFREG {
            close(fd)
            throw StoreError.io(path: path, operation: "read", message: "is not a regular file (a FIFO, a device or a socket)")
        }
        return (fd, info)
    }

    /// mmap(2) of a whole file, read-only (the pages stay the page cache's: nothing is copied).
    public func mappedContents(of path: String) throws(StoreError) -> FileBytes? {
        try map(path, advice: Int32(MADV_WILLNEED))  // read ahead: fewer, larger faults
    }

    /// mmap(2) of a whole file with no read-ahead: only the pages read are loaded.
    public func mappedContentsForRandomReads(of path: String) throws(StoreError) -> FileBytes? {
        try map(path, advice: Int32(MADV_RANDOM))
    }

    private func map(_ path: String, advice: Int32) throws(StoreError) -> FileBytes? {
        guard let (fd, info) = try openForReading(path) else { return nil }
        defer { close(fd) }
        let size = Int(info.st_size)
        if size == 0 { return FileBytes([]) }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
            return try contents(of: path).map(FileBytes.init)
        }
        _ = madvise(address, size, advice)
        let buffer = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: size)
        nonisolated(unsafe) let mapped = address
        return FileBytes(buffer: buffer, isMapped: true) { munmap(mapped, size) }
    }

    /// Reads at most `limit` bytes of a file from an offset.
    public func contents(of path: String, from offset: Int, limit: Int) throws(StoreError) -> [UInt8]? {
        guard let (fd, info) = try openForReading(path) else { return nil }
        defer { close(fd) }
        if offset > 0 { guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else { throw Self.failure(path, "seek") } }
        let wanted = min(max(Int(info.st_size) - offset, 0), limit)
        var capacity = limit == Int.max ? wanted + 1 : max(wanted, 1)
        // Read straight into uninitialized storage (zero-filling a large file first costs as much
        // as reading it).
        var failure: StoreError?
        var bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            var count = 0
            while count < capacity {
                let n = read(fd, buffer.baseAddress! + count, capacity - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = Self.failure(path, "read")
                    break
                }
                if n == 0 { break }
                count += n
            }
            initialized = count
        }
        if let failure { throw failure }
        // The file grew while it was read: read on in chunks.
        while bytes.count == capacity && bytes.count < limit {
            var chunk = [UInt8](unsafeUninitializedCapacity: min(1 << 20, limit - bytes.count)) { buffer, initialized in
                var n: Int
                repeat { n = read(fd, buffer.baseAddress!, buffer.count) } while n < 0 && errno == EINTR
                initialized = max(n, 0)
            }
            if chunk.isEmpty { break }
            bytes.append(contentsOf: chunk)
            chunk.removeAll()
            if bytes.count < capacity { break }
            capacity = bytes.count
        }
        return bytes
    }

    func writeAll(_ fd: Int32, _ bytes: [UInt8], _ path: String) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, bytes.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.failure(path, "write")
            }
            offset += n
        }
    }

    /// Creates or truncates a file and writes to it.
    public func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure(path, "create") }
        defer { close(fd) }
        try writeAll(fd, bytes, path)
    }

    /// Appends to a file.
    public func append(_ bytes: [UInt8], to path: String) throws(StoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure(path, "open for appending") }
        defer { close(fd) }
        try writeAll(fd, bytes, path)
    }

    /// truncate(2).
    public func truncate(_ path: String, to size: Int) throws(StoreError) {
        guard Glibc.truncate(path, off_t(size)) == 0 else { throw Self.failure(path, "truncate") }
    }

    /// rename(2).
    public func rename(_ source: String, to destination: String) throws(StoreError) {
        guard Glibc.rename(source, destination) == 0 else { throw Self.failure(destination, "rename \(source) to") }
    }

    /// unlink(2).
    public func removeFile(_ path: String) throws(StoreError) -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw Self.failure(path, "remove")
    }

    /// mkdir -p.
    public func createFolder(_ path: String) throws(StoreError) {
        if mkdir(path, 0o755) == 0 { return }
        let code = errno
        if code == EEXIST {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw StoreError.notAFolder(path: path)
        }
        if code == ENOENT {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path {
                try createFolder(parent)
                if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
            }
        }
        throw Self.failure(path, "create folder", code)
    }

    /// Lists a folder with readdir (much faster than FileManager's enumerator).
    public func entries(ofFolder path: String) throws(StoreError) -> [String]? {
        try inodeEntries(ofFolder: path)?.map(\.name)
    }

    /// readdir(3), with each entry's `d_ino`.
    public func inodeEntries(ofFolder path: String) throws(StoreError) -> [(name: String, inode: UInt64)]? {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return nil }
            if errno == ENOTDIR { throw StoreError.notAFolder(path: path) }
            throw Self.failure(path, "list")
        }
        defer { closedir(dir) }
        var names: [(name: String, inode: UInt64)] = []
        // The name is read in place, up to its NUL: a dirent is only as long as its `d_reclen`, so
        // copying the whole 256-byte `d_name` out of it (`entry.pointee.d_name`) read past the end
        // of readdir's buffer (found by AddressSanitizer).
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let inodeOffset = MemoryLayout<dirent>.offset(of: \dirent.d_ino)!
        while let entry = readdir(dir) {
            let start = UnsafeRawPointer(entry)
            let name = String(cString: (start + nameOffset).assumingMemoryBound(to: CChar.self))
            let inode = (start + inodeOffset).loadUnaligned(as: ino_t.self)
            if name != "." && name != ".." { names.append((name, UInt64(inode))) }
        }
        return names
    }

    /// lstat(2) and readlink(2).
    public func symbolicLinkTarget(of path: String) throws(StoreError) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { throw Self.failure(path, "read the link") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// stat(2).
    public func status(of path: String) throws(StoreError) -> FileStatus? {
        var info = stat()
        if stat(path, &info) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Self.failure(path, "stat")
        }
        let ms = Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
        return FileStatus(
            size: Int(info.st_size), modified: Timestamp(milliseconds: ms),
            identity: UInt64(info.st_ino), isFolder: (info.st_mode & S_IFMT) == S_IFDIR)
    }

    /// fsync(2) on a file or folder.
    public func synchronize(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(path, "open for sync") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Self.failure(path, "sync") }
    }

    typealias SyncFS = @convention(c) (Int32) -> Int32
    static let syncfsFunction: SyncFS? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: SyncFS.self)
    }()

    /// syncfs(2) (reached through dlsym; Glibc's module map does not export it), else sync(2).
    public func synchronizeAll(containing path: String) throws(StoreError) {
        guard let syncfs = Self.syncfsFunction else {
            Glibc.sync()
            return
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(path, "open for sync") }
        defer { close(fd) }
        guard syncfs(fd) == 0 else { throw Self.failure(path, "sync") }
    }

    /// flock(2) with LOCK_NB, retried until the timeout; the holder's pid is written into the file.
    public func lockExclusively(_ path: String, timeout: Double) throws(StoreError) -> any FileLockToken {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure(path, "open lock file") }
        let start = Date()
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let error = Self.failure(path, "lock")
                close(fd)
                throw error
            }
            let waited = Date().timeIntervalSince(start)
            if waited >= timeout {
                let holder =
                    (try? contents(of: path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                close(fd)
                throw StoreError.locked(path: path, holder: holder.isEmpty ? "another process" : "pid \(holder)", waitedSeconds: waited)
            }
            usleep(20_000)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, pid.count, 0) }
        return POSIXLock(fd: fd)
    }
}
