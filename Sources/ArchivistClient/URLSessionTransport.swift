import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The real transport: URLSession, in the shared library `libArchivistNetwork.so` (target
/// `ArchivistNetwork`), which this transport loads with dlopen on its first request.
///
/// URLSession lives in FoundationNetworking, which brings libcurl and some forty more shared
/// libraries; linked into `archivist`, it would be loaded by every process, also those that never
/// fetch. So the library is looked for when a request is about to be sent, once per process: first
/// next to the running executable (`/proc/self/exe`), then by its plain name on the loader's search
/// path. When it is missing or exports another ABI version, every request fails with
/// `TransportFailure.unavailable` naming the library and the folder.
///
/// The session there is ephemeral (no cookies, no disk cache, so no URL with the key is ever
/// written to disk) and shared by every request of the process.
public final class URLSessionTransport: HTTPTransport {
    /// A transport. Nothing is loaded until the first request.
    public init() {
        maximumBodyBytes = URLSessionTransport.defaultMaximumBodyBytes
    }

    /// A transport that refuses bodies larger than `maximumBodyBytes`.
    public init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Loads the network library, if no request has yet, and throws `.unavailable` when it cannot.
    public func prepare() throws(TransportFailure) {
        _ = try NetworkLibrary.shared.get()
    }

    /// Fetches `url` with a whole-second timeout of at least 1 s (Linux truncates fractions).
    public func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        try await get(url, timeout: timeout, onProgress: { _, _ in })
    }

    /// Fetches `url`, telling `onProgress` the body's bytes so far as they arrive. A body larger
    /// than `maximumBodyBytes` is cut short and fails.
    public func get(
        _ url: URL, timeout: Double, onProgress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(TransportFailure) -> HTTPResponse {
        let library = try NetworkLibrary.shared.get()
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>) in
            let pending = PendingRequest(continuation, limit: maximumBodyBytes, onProgress: onProgress)
            let context = Unmanaged.passRetained(pending).toOpaque()
            url.absoluteString.withCString { text in
                library.get(
                    text, timeout, context,
                    { context, bytes, count, expected in
                        // Called for each piece, in order, on a URLSession thread; `bytes` dies when this returns.
                        guard let context else { return 0 }
                        let pending = Unmanaged<PendingRequest>.fromOpaque(context).takeUnretainedValue()
                        return pending.append(bytes, count: count, expected: expected) ? 1 : 0
                    },
                    { context, status, text in
                        // Called once, after the last piece; `text` dies when this returns.
                        guard let context else { return }
                        let pending = Unmanaged<PendingRequest>.fromOpaque(context).takeRetainedValue()
                        pending.finish(status: status, text: text)
                    })
            }
        }
        return try result.get()
    }

    /// The largest body accepted by default: an Archive API month is at most about 100 MB.
    public static let defaultMaximumBodyBytes = 1 << 30
    /// The largest body this transport accepts; a larger one fails with `.other`.
    public let maximumBodyBytes: Int
}

/// A request on its way through the library: the body so far and the continuation its completion
/// resumes. Retained for the library as the context and released by the completion.
///
/// The library calls `append` and then `finish` one at a time, in order (its delegate queue is
/// serial); the body is behind a mutex all the same.
private final class PendingRequest: Sendable {
    /// The body so far, and whether it went past the limit.
    private struct Body {
        var bytes: [UInt8] = []
        var tooLarge = false
    }

    let continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>
    let onProgress: @Sendable (Int, Int?) -> Void
    /// The largest body accepted.
    let limit: Int
    private let body = Mutex(Body())

    init(
        _ continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>, limit: Int,
        onProgress: @escaping @Sendable (Int, Int?) -> Void
    ) {
        self.continuation = continuation
        self.limit = limit
        self.onProgress = onProgress
    }

    /// Adds a piece of the body; false (stop the transfer) past `limit`.
    func append(_ bytes: UnsafePointer<UInt8>?, count: Int, expected: Int64) -> Bool {
        let announced = expected >= 0 ? Int(clamping: expected) : nil
        let received = body.withLock { body -> Int? in
            if body.bytes.count + count > limit {
                body.tooLarge = true
                return nil
            }
            if body.bytes.isEmpty, let announced, announced <= limit {
                body.bytes.reserveCapacity(announced)  // one allocation for the whole body when its length is known
            }
            if let bytes, count > 0 { body.bytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count)) }
            return body.bytes.count
        }
        guard let received else { return false }
        onProgress(received, announced)
        return true
    }

    /// Resumes the waiting request with the answer or the failure.
    func finish(status: Int32, text: UnsafePointer<CChar>?) {
        let (bytes, overflowed) = body.withLock { body -> ([UInt8], Bool) in
            let bytes = body.bytes
            body.bytes = []
            return (bytes, body.tooLarge)
        }
        if overflowed {
            continuation.resume(
                returning: .failure(.other("the body is larger than \(limit) bytes, the most accepted")))
            return
        }
        continuation.resume(returning: NetworkLibrary.result(status: status, text: text, body: bytes))
    }
}

/// `libArchivistNetwork.so`, loaded: the function that sends a request. Its C ABI (version 2) is
/// described in `Sources/ArchivistNetwork/ArchivistNetwork.swift`.
///
/// `@unchecked Sendable`: it holds a C function pointer into a library that is never unloaded,
/// and the library is safe to call from any thread.
struct NetworkLibrary: @unchecked Sendable {
    /// `int32_t (*)(void *context, const uint8_t *bytes, intptr_t count, int64_t expected)`.
    typealias Receive = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int, Int64) -> Int32
    /// `void (*)(void *context, int32_t status, const char *text)`.
    typealias Completion = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void
    /// `void archivist_network_get(const char *url, double timeout, void *context, Receive, Completion)`.
    typealias Get = @convention(c) (UnsafePointer<CChar>, Double, UnsafeMutableRawPointer?, Receive, Completion) -> Void
    /// `int32_t archivist_network_abi_version(void)`.
    typealias Version = @convention(c) () -> Int32

    /// The library's file name.
    static let fileName = "libArchivistNetwork.so"
    /// The ABI version this client speaks.
    static let abiVersion: Int32 = 2

    /// Where the library was loaded from.
    let path: String
    /// `archivist_network_get`.
    let get: Get

    /// The library of this process, loaded on first use (a global's initialiser runs once,
    /// thread-safely), or why it could not be.
    static let shared: Result<NetworkLibrary, TransportFailure> = load(nextTo: executableFolder())

    /// Loads the library from `folder` when it is there, else (when `searchPath` is true) by its
    /// plain name through the loader's search (`LD_LIBRARY_PATH`, the executable's run path, the
    /// system's folders).
    static func load(nextTo folder: String?, searchPath: Bool = true) -> Result<NetworkLibrary, TransportFailure> {
        if let folder {
            let path = folder + "/" + fileName
            if access(path, F_OK) == 0 {
                guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                    return .failure(.unavailable("network library \(path) cannot be loaded: \(loaderError())"))
                }
                return bind(handle, path: path)
            }
        }
        if searchPath, let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) {
            return bind(handle, path: fileName)
        }
        return .failure(.unavailable("network library \(fileName) not found next to \(folder ?? "the executable")"))
    }

    /// Looks up the library's functions and checks its ABI version. A library that fails stays
    /// loaded (a Swift library cannot be safely unloaded); nothing of it is called again.
    private static func bind(_ handle: UnsafeMutableRawPointer, path: String) -> Result<NetworkLibrary, TransportFailure> {
        guard let versionSymbol = dlsym(handle, "archivist_network_abi_version"), let getSymbol = dlsym(handle, "archivist_network_get")
        else {
            return .failure(.unavailable("network library \(path) is not archivist's: it lacks archivist_network_get"))
        }
        let version = unsafeBitCast(versionSymbol, to: Version.self)()
        guard version == abiVersion else {
            return .failure(.unavailable("network library \(path) has ABI version \(version); this archivist needs \(abiVersion)"))
        }
        return .success(NetworkLibrary(path: path, get: unsafeBitCast(getSymbol, to: Get.self)))
    }

    /// The folder of the running executable (`/proc/self/exe`, which the kernel keeps resolved).
    static func executableFolder() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes {
            readlink("/proc/self/exe", $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count)
        }
        guard count > 0, count < buffer.count else { return nil }
        let path = String(decoding: buffer[..<count], as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// dlerror's message, on one line.
    private static func loaderError() -> String {
        guard let text = dlerror() else { return "unknown error" }
        return String(cString: text).replacingOccurrences(of: "\n", with: " ")
    }

    /// What the completion's arguments say: an answer with `body` for a status >= 0, else the
    /// failure kind (-1 cannot connect, -2 timed out, -3 connection lost, -4 other) with its reason.
    static func result(status: Int32, text: UnsafePointer<CChar>?, body: [UInt8]) -> Result<HTTPResponse, TransportFailure> {
        let text = text.map { String(cString: $0) }
        if status >= 0 { return .success(HTTPResponse(status: Int(status), contentType: text, body: body)) }
        switch status {
        case -1: return .failure(.cannotConnect(text ?? "cannot connect"))
        case -2: return .failure(.timedOut)
        case -3: return .failure(.connectionLost)
        default: return .failure(.other(text ?? "request failed"))
        }
    }
}
