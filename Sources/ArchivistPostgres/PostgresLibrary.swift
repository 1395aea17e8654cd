import CLibPQ
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// libpq, opened with dlopen on first use (`CLibPQ/shim.h`): commands that never talk to
/// PostgreSQL do not load it, nor the TLS and Kerberos libraries it brings.
struct PostgresLibrary: @unchecked Sendable {
    /// libpq's functions.
    let functions: archivist_pq

    /// The process's libpq, loaded on the first call; the reason when it cannot be.
    static func shared() throws(PostgresError) -> PostgresLibrary {
        switch loaded {
        case .success(let library): return library
        case .failure(let error): throw error
        }
    }

    /// `ARCHIVIST_LIBPQ` names another file (a test's or a build's own); else the soname.
    private static let loaded: Result<PostgresLibrary, PostgresError> = {
        let name = ProcessInfo.processInfo.environment["ARCHIVIST_LIBPQ"].flatMap { $0.isEmpty ? nil : $0 } ?? "libpq.so.5"
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "cannot open \(name)"
            return .failure(.libraryUnavailable(reason: reason))
        }
        var table = archivist_pq()
        if let missing = archivist_pq_load(handle, &table) {
            return .failure(.libraryUnavailable(reason: "\(name) has no \(String(cString: missing))"))
        }
        return .success(PostgresLibrary(functions: table))
    }()
}
