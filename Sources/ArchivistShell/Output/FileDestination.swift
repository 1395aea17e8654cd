import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A path the user named for output (`export --to FILE`, the history file), and how to write to
/// it without harming what it is.
///
/// A regular file, or a path where nothing is yet, is written whole: to a temporary file beside
/// it, synced, then renamed over it (its mode and owner kept), so it is never seen half-written.
/// Anything else is written where it is, never renamed over: a device (`/dev/null`), a FIFO
/// (opening it waits for a reader, as `cat > FIFO` does), a socket (connected to), and the
/// process's own descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, which are duplicated
/// as a shell's `>` does, so an append or a pipe behind them stays what it is). A symbolic link is
/// followed: its target is replaced or written, the link stays a link. A folder, a path whose
/// folder is missing, or a loop of links is an error.
struct FileDestination: Sendable, Equatable {
    /// How the bytes reach the destination.
    enum Route: Sendable, Equatable {
        /// Written to a temporary file beside `target`, synced, renamed over it.
        case replace(target: String)
        /// Opened (or connected to) and written in place.
        case inPlace(path: String, kind: Kind)
        /// A descriptor of this process, duplicated (`/dev/stdout`, `/dev/fd/N`).
        case descriptor(Int32)
    }

    /// What a path written in place is.
    enum Kind: String, Sendable, Equatable {
        case characterDevice = "character device"
        case blockDevice = "block device"
        case fifo = "FIFO"
        case socket
        /// A regular file that cannot be replaced by a rename (one of `/proc`'s or `/sys`'s).
        case specialFile = "special file"
    }

    /// Why a destination cannot be used; each message names the path and is one line.
    struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The message: `PATH: is a folder`.
        let description: String
        /// Whether it is Ctrl-C stopping the wait for a FIFO's reader.
        var isInterruption = false
    }

    /// The path as given.
    let path: String
    /// How it is written.
    let route: Route

    /// Whether the destination is written in place (its bytes go out as they are written, so a
    /// failure or Ctrl-C leaves part of them sent).
    var isInPlace: Bool {
        if case .replace = route { return false }
        return true
    }

    /// Links followed at most, as the kernel's own limit (`ELOOP`).
    static let maximumLinks = 40

    /// Finds what `path` is and how to write to it, without changing anything.
    static func resolve(_ path: String) throws(Failure) -> FileDestination {
        guard !path.isEmpty else { throw Failure(description: "an empty path is not a file") }
        if let descriptor = ownDescriptor(path) { return FileDestination(path: path, route: .descriptor(descriptor)) }
        var current = path
        for _ in 0...maximumLinks {
            var status = stat()
            guard lstat(current, &status) == 0 else {
                guard errno == ENOENT || errno == ENOTDIR else { throw Failure(description: "\(path): \(systemErrorMessage())") }
                try requireFolder(of: current, for: path)
                return FileDestination(path: path, route: .replace(target: current))
            }
            switch status.st_mode & S_IFMT {
            case S_IFLNK:
                let folder = parentFolder(of: current)
                if let real = realFolder(folder), isPseudoFileSystem(real) {
                    // A magic link of /proc (a descriptor of another process, say): the kernel
                    // opens what it stands for; it is never renamed over.
                    if let descriptor = ownDescriptor(real + "/" + lastComponent(of: current)) {
                        return FileDestination(path: path, route: .descriptor(descriptor))
                    }
                    return FileDestination(path: path, route: .inPlace(path: current, kind: .specialFile))
                }
                guard let target = linkTarget(current) else { throw Failure(description: "\(path): \(systemErrorMessage())") }
                current = target.hasPrefix("/") ? target : folder + "/" + target
            case S_IFDIR:
                throw Failure(description: "\(path): is a folder, not a file")
            case S_IFREG:
                if let real = realFolder(parentFolder(of: current)), isPseudoFileSystem(real) {
                    return FileDestination(path: path, route: .inPlace(path: current, kind: .specialFile))
                }
                return FileDestination(path: path, route: .replace(target: current))
            case S_IFCHR: return FileDestination(path: path, route: .inPlace(path: current, kind: .characterDevice))
            case S_IFBLK: return FileDestination(path: path, route: .inPlace(path: current, kind: .blockDevice))
            case S_IFIFO: return FileDestination(path: path, route: .inPlace(path: current, kind: .fifo))
            case S_IFSOCK: return FileDestination(path: path, route: .inPlace(path: current, kind: .socket))
            default: throw Failure(description: "\(path): not a file that can be written")
            }
        }
        throw Failure(description: "\(path): too many levels of symbolic links")
    }

    /// Opens the destination for writing. `permissions` are a new file's (the umask applies); a
    /// replaced file keeps its own unless `keepsMode` is false. Opening a FIFO waits for its reader; `isInterrupted` is asked
    /// whenever a signal breaks the wait, and when it says so the open stops.
    func open(
        permissions: mode_t = 0o644, keepsMode: Bool = true, isInterrupted: () -> Bool = { false }
    ) throws(Failure) -> Writer {
        switch route {
        case .descriptor(let descriptor):
            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            guard copy >= 0 else { throw Failure(description: "\(path): \(systemErrorMessage())") }
            return Writer(destination: self, descriptor: copy, temporary: nil)
        case .inPlace(let target, .socket):
            return Writer(destination: self, descriptor: try connect(target), temporary: nil)
        case .inPlace(let target, let kind):
            let flags = O_WRONLY | O_CLOEXEC | (kind == .specialFile ? O_TRUNC : 0)
            while true {
                let descriptor = Glibc.open(target, flags)
                if descriptor >= 0 { return Writer(destination: self, descriptor: descriptor, temporary: nil) }
                guard errno == EINTR else { throw Failure(description: "\(path): cannot open: \(systemErrorMessage())") }
                if isInterrupted() {
                    throw Failure(description: "\(path): interrupted while waiting for a reader", isInterruption: true)
                }
            }
        case .replace(let target):
            return try openTemporary(beside: target, permissions: permissions, keepsMode: keepsMode)
        }
    }

    /// Writes `bytes` to the destination whole (see `open`).
    func write(_ bytes: [UInt8], permissions: mode_t = 0o644, keepsMode: Bool = true) throws(Failure) {
        let writer = try open(permissions: permissions, keepsMode: keepsMode)
        do {
            try writer.write(bytes)
            try writer.commit()
        } catch {
            writer.abandon()
            throw error
        }
    }

    // MARK: Opening

    /// A temporary file in `target`'s folder, with `target`'s owner (and mode, when `keepsMode`)
    /// when it exists.
    private func openTemporary(beside target: String, permissions: mode_t, keepsMode: Bool) throws(Failure) -> Writer {
        let folder = parentFolder(of: target)
        var existing = stat()
        let exists = stat(target, &existing) == 0
        for attempt in 0..<100 {
            let temporary = folder + "/." + lastComponent(of: target) + ".archivist-\(getpid())-\(attempt).tmp"
            let descriptor = Glibc.open(
                temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, exists && keepsMode ? 0o600 : permissions)
            if descriptor < 0, errno == EEXIST { continue }
            guard descriptor >= 0 else {
                throw Failure(description: "\(path): cannot create a temporary file in \(folder): \(systemErrorMessage())")
            }
            if exists {
                // As the file was: a root writing over someone's file leaves it theirs.
                if existing.st_uid != geteuid() || existing.st_gid != getegid() {
                    _ = fchown(descriptor, existing.st_uid, existing.st_gid)
                }
                if keepsMode { _ = fchmod(descriptor, existing.st_mode & 0o7777) }
            }
            return Writer(destination: self, descriptor: descriptor, temporary: temporary)
        }
        throw Failure(description: "\(path): cannot create a temporary file in \(folder): too many left over")
    }

    /// A stream (else datagram) connection to the Unix socket at `target`.
    private func connect(_ target: String) throws(Failure) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(target.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw Failure(description: "\(path): a socket's path is limited to \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        for type in [Int32(SOCK_STREAM.rawValue), Int32(SOCK_DGRAM.rawValue)] {
            let descriptor = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { break }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected == 0 { return descriptor }
            let failure = errno
            close(descriptor)
            errno = failure
            if failure != EPROTOTYPE { break }
        }
        throw Failure(description: "\(path): cannot connect to the socket: \(systemErrorMessage())")
    }

    // MARK: Paths

    /// The descriptor `path` names when it is one of this process's own: `/dev/stdout`,
    /// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`, `/proc/PID/fd/N` (this process's PID).
    static func ownDescriptor(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdin": return STDIN_FILENO
        case "/dev/stdout": return STDOUT_FILENO
        case "/dev/stderr": return STDERR_FILENO
        default: break
        }
        let prefixes = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/\(getpid())/fd/"]
        guard let prefix = prefixes.first(where: { path.hasPrefix($0) }) else { return nil }
        let number = path.dropFirst(prefix.count)
        guard !number.isEmpty, number.count < 10, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int32(number)
    }

    /// Fails unless the folder `path` would be created in exists.
    private static func requireFolder(of path: String, for given: String) throws(Failure) {
        let folder = parentFolder(of: path)
        var status = stat()
        guard stat(folder, &status) == 0 else {
            throw Failure(description: "\(given): folder \(folder) does not exist")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw Failure(description: "\(given): \(folder) is not a folder")
        }
    }

    /// Whether a canonical folder is in a kernel's pseudo file system, whose files are never renamed over.
    private static func isPseudoFileSystem(_ folder: String) -> Bool {
        ["/proc", "/sys"].contains { folder == $0 || folder.hasPrefix($0 + "/") }
    }

    /// The canonical path of a folder (links resolved), or nil.
    private static func realFolder(_ folder: String) -> String? {
        guard let resolved = realpath(folder, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// What a symbolic link points to, as written in it.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The folder a path is in (`.` for a bare name).
private func parentFolder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let folder = path[..<slash]
    return folder.isEmpty ? "/" : String(folder)
}

/// The last component of a path.
private func lastComponent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

extension FileDestination {
    /// An open destination: bytes are written to it, then `commit` puts them in place (a rename
    /// for a replaced file) or `abandon` drops them (a replaced file is left as it was).
    final class Writer: @unchecked Sendable {
        /// Where the bytes go.
        let destination: FileDestination
        /// The descriptor written to.
        let descriptor: Int32
        /// The temporary file renamed over the target at commit, nil when written in place.
        private let temporary: String?
        private var isClosed = false

        fileprivate init(destination: FileDestination, descriptor: Int32, temporary: String?) {
            self.destination = destination
            self.descriptor = descriptor
            self.temporary = temporary
        }

        /// Writes every byte, retrying interrupted and partial writes.
        func write(_ bytes: [UInt8]) throws(FileDestination.Failure) {
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "\(destination.path): cannot write: \(systemErrorMessage())")
                }
                offset += count
            }
        }

        /// Puts what was written in place: a replaced file is synced, renamed over its target and
        /// the folder synced; a destination written in place is closed. On failure a replaced
        /// file is left as it was and the temporary file removed.
        func commit() throws(FileDestination.Failure) {
            guard !isClosed else { return }
            isClosed = true
            guard let temporary, case .replace(let target) = destination.route else {
                close(descriptor)
                return
            }
            let synced = fsync(descriptor) == 0
            let syncError = errno
            let closed = close(descriptor) == 0
            guard synced, closed else {
                errno = synced ? errno : syncError
                let message = systemErrorMessage()
                unlink(temporary)
                throw Failure(description: "\(destination.path): cannot write: \(message)")
            }
            guard rename(temporary, target) == 0 else {
                let message = systemErrorMessage()
                unlink(temporary)
                throw Failure(description: "\(destination.path): cannot replace: \(message)")
            }
            // The rename is durable once the folder is synced.
            let folder = Glibc.open(parentFolder(of: target), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if folder >= 0 {
                _ = fsync(folder)
                close(folder)
            }
        }

        /// Closes without putting anything in place (a replaced file is left as it was).
        func abandon() {
            guard !isClosed else { return }
            isClosed = true
            close(descriptor)
            if let temporary { unlink(temporary) }
        }

        deinit { abandon() }
    }
}
