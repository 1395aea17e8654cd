import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The history file, in libedit's format (a `_HiStOrY_V2_` line, then one entry a line, encoded
/// as vis(3) does), read and written by Archivist itself rather than by libedit: libedit's reader
/// (3.1-20221030) overruns a buffer on some lines, found by fuzzing, and would block on a FIFO.
///
/// Reading decodes every escape libedit writes (`\040` octal, `\^A`, `\M-x`, `\M^A`, `\\`, and
/// C's `\n`, `\t`, `\s`...); an escape it does not know is kept as typed. Writing escapes the
/// backslash, white space and control characters in octal and keeps other text as it is, so `cat`
/// shows a history a person can read and libedit reads it too. The file is replaced whole
/// (written beside it, then renamed), with mode 0600.
enum HistoryFile {
    /// The first line of a history file.
    static let cookie = "_HiStOrY_V2_"
    /// The largest history file read.
    static let maximumBytes = 64 << 20

    /// What reading a history file gave.
    enum Loaded: Equatable {
        /// Its entries, oldest first.
        case entries([String])
        /// There is no file yet.
        case missing
        /// A file that is not read, nor written over: why, in a few words.
        case refused(String)
    }

    /// Reads the history at `path`, never blocking on it: a FIFO, a device, a folder or a file
    /// over ``maximumBytes`` is refused unread.
    static func load(_ path: String) -> Loaded {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return .missing }
            return .refused(String(cString: strerror(errno)).lowercased())
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .refused(String(cString: strerror(errno)).lowercased()) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .refused("not a regular file") }
        guard status.st_size <= maximumBytes else { return .refused("larger than \(maximumBytes >> 20) MiB") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        guard let entries = decode(bytes) else { return .refused("not a history file (its first line is not \(cookie))") }
        return .entries(entries)
    }

    /// The entries of a history file's bytes, or nil when it does not start with ``cookie``
    /// (an empty file has none).
    static func decode(_ bytes: [UInt8]) -> [String]? {
        guard !bytes.isEmpty else { return [] }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard let first = lines.first, first.elementsEqual(cookie.utf8) || first.elementsEqual((cookie + "\r").utf8) else {
            return nil
        }
        lines.removeFirst()
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { String(decoding: decodeLine($0), as: UTF8.self) }
    }

    /// One line of a history file, its escapes decoded as strunvis(3) decodes them.
    static func decodeLine(_ line: ArraySlice<UInt8>) -> [UInt8] {
        let bytes = Array(line)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        func at(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        func control(_ c: UInt8) -> UInt8 { c == UInt8(ascii: "?") ? 0x7F : c & 0x1F }
        while i < bytes.count {
            let c = bytes[i]
            guard c == UInt8(ascii: "\\"), let next = at(i + 1) else {
                out.append(c)
                i += 1
                continue
            }
            switch next {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = 0
                var digits = 0
                while digits < 3, let d = at(i + 1 + digits), (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(d) {
                    value = value * 8 + Int(d - UInt8(ascii: "0"))
                    digits += 1
                }
                out.append(UInt8(truncatingIfNeeded: value))
                i += 1 + digits
            case UInt8(ascii: "M") where at(i + 2) == UInt8(ascii: "-") && at(i + 3) != nil:
                out.append(bytes[i + 3] | 0x80)
                i += 4
            case UInt8(ascii: "M") where at(i + 2) == UInt8(ascii: "^") && at(i + 3) != nil:
                out.append(control(bytes[i + 3]) | 0x80)
                i += 4
            case UInt8(ascii: "^") where at(i + 2) != nil:
                out.append(control(bytes[i + 2]))
                i += 3
            default:
                let simple: [UInt8: UInt8] = [
                    UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
                    UInt8(ascii: "b"): 0x08, UInt8(ascii: "a"): 0x07, UInt8(ascii: "v"): 0x0B, UInt8(ascii: "f"): 0x0C,
                    UInt8(ascii: "s"): 0x20, UInt8(ascii: "E"): 0x1B,
                ]
                if let value = simple[next] {
                    out.append(value)
                    i += 2
                } else {
                    out.append(c)
                    i += 1
                }
            }
        }
        return out
    }

    /// The bytes of a history file holding `entries`, oldest first.
    static func encode(_ entries: [String]) -> [UInt8] {
        var out = Array((cookie + "\n").utf8)
        for entry in entries {
            for scalar in entry.unicodeScalars {
                let value = scalar.value
                if (0x21...0x7E).contains(value) && value != 0x5C || value >= 0xA0 {
                    out.append(contentsOf: String(scalar).utf8)
                } else {
                    for byte in String(scalar).utf8 {
                        out.append(UInt8(ascii: "\\"))
                        out.append(contentsOf: [byte >> 6, (byte >> 3) & 7, byte & 7].map { UInt8(ascii: "0") + $0 })
                    }
                }
            }
            out.append(0x0A)
        }
        return out
    }

    /// Writes `entries` to `path` in place of what it holds, as a `FileDestination` replaces a
    /// regular file (beside it, synced, renamed; through a symbolic link to its target; a new file
    /// with mode 0600, whatever the old file's). Returns false when the file could not be written, or when the path is not a
    /// regular file (a FIFO or a device is never written to): the history is then kept in memory.
    @discardableResult
    static func save(_ entries: [String], to path: String) -> Bool {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        guard let destination = try? FileDestination.resolve(path), !destination.isInPlace else { return false }
        do {
            try destination.write(encode(entries), permissions: 0o600, keepsMode: false)
            return true
        } catch {
            return false
        }
    }
}
