#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The type bits of a path (`S_IFREG`, `S_IFLNK`, `S_IFIFO`, ...; a final symbolic link is not
/// followed), or nil when it does not exist.
public func fileKind(_ path: String) -> mode_t? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return status.st_mode & S_IFMT
}
