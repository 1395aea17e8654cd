#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much of this process's memory is pages of mapped files (Linux's `/proc/self/statm`, its
/// third field: resident pages backed by a file or shared): a pass that reads mappings at
/// random asks it now and then and lets the mappings' pages go only past a budget, since letting
/// them go costs a walk of the whole mapping and the faults to bring back what is read again.
public enum ResidentPages {
    /// Bytes of resident file-backed pages, or nil where the system does not say (no `/proc`).
    public static func fileBacked() -> Int? {
        #if os(Linux)
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "size resident shared text lib data dt", in pages.
        let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 3, let pages = Int(String(decoding: fields[2], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }
}
