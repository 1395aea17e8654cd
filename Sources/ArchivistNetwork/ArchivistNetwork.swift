import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// libArchivistNetwork.so: the project's only use of URLSession (and so of FoundationNetworking,
// libcurl and the forty-odd libraries they bring). It is a separate shared library so that an
// `archivist` process loads it only when it sends a request: `ArchivistClient`'s
// `URLSessionTransport` opens it with dlopen on first use and calls the two functions below. Every
// other command (help, count, stats, ...) starts without the network stack.
//
// The C ABI, version 1 (`ArchivistClient/URLSessionTransport.swift` holds the other side):
//
//     int32_t archivist_network_abi_version(void);
//     void archivist_network_get(const char *url, double timeout, void *context,
//         void (*completion)(void *context, int32_t status, const char *text,
//                            const uint8_t *body, intptr_t count));
//
// `archivist_network_get` copies `url` before it returns and calls `completion` exactly once, with
// the caller's `context`: usually later on a URLSession thread, or before it returns when the URL
// does not parse. `status` >= 0 is the HTTP status, `text` the Content-Type header (NULL when none
// was sent) and `body`/`count` the whole body. `status` < 0 means no HTTP answer, one of the
// `ArchivistNetworkFailure` kinds, and `text` the reason (NULL for a timeout or a dropped
// connection). `text` and `body` are valid only during the call. No reason ever includes the URL,
// which holds the API key.

/// The version of the C ABI this library exports; the loader refuses any other.
private let abiVersion: Int32 = 1

/// What a negative status passed to the completion means (part of the ABI: never renumber).
enum ArchivistNetworkFailure: Int32 {
    /// The connection could not be made (refused, host not found, no network, TLS); a reason is given.
    case cannotConnect = -1
    /// No answer within the timeout.
    case timedOut = -2
    /// The connection dropped before the whole answer arrived.
    case connectionLost = -3
    /// Anything else; a reason is given.
    case other = -4
}

/// The completion `archivist_network_get` calls: context, status or negative failure kind, content
/// type or reason, body, body byte count.
public typealias ArchivistNetworkCompletion =
    @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<UInt8>?, Int) -> Void

/// The ABI version, checked by the loader before anything else is called.
@_cdecl("archivist_network_abi_version")
public func archivistNetworkABIVersion() -> Int32 {
    abiVersion
}

/// Sends `GET url` with the whole-second `timeout` (at least 1 s) and calls `completion` once with
/// the answer or the failure; see the ABI comment at the top of this file.
@_cdecl("archivist_network_get")
public func archivistNetworkGet(
    _ url: UnsafePointer<CChar>, _ timeout: Double, _ context: UnsafeMutableRawPointer?,
    _ completion: ArchivistNetworkCompletion
) {
    let reply = Reply(context: context, completion: completion)
    guard let url = URL(string: String(cString: url)) else {
        reply.fail(.other, "bad URL")
        return
    }
    var request = URLRequest(url: url)
    request.timeoutInterval = max(1, timeout.rounded(.up))  // Linux truncates fractions
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    request.setValue("archivist", forHTTPHeaderField: "User-Agent")
    let task = session.dataTask(with: request) { data, response, error in
        if let error {
            let (kind, reason) = failure(for: error)
            reply.fail(kind, reason)
            return
        }
        guard let response else {
            reply.fail(.connectionLost, nil)  // neither an error nor an answer: as URLError.badServerResponse
            return
        }
        guard let http = response as? HTTPURLResponse else {
            reply.fail(.other, "not an HTTP response")
            return
        }
        let body = data ?? Data()
        if let length = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init), length > body.count {
            reply.fail(.connectionLost, nil)
            return
        }
        reply.answer(status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"), body: body)
    }
    task.resume()
}

/// The one session of the process: ephemeral, no cookies, no cache (so no URL with the key is
/// ever written to disk). Made on the first request.
private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    return URLSession(configuration: configuration)
}()

/// The caller's context and completion, carried to the URLSession thread that answers.
///
/// `@unchecked Sendable`: the context is the caller's, handed back untouched, and the completion
/// is a plain C function; the ABI says the completion may be called from any thread.
private struct Reply: @unchecked Sendable {
    let context: UnsafeMutableRawPointer?
    let completion: ArchivistNetworkCompletion

    /// Calls the completion with an HTTP answer.
    func answer(status: Int, contentType: String?, body: Data) {
        let status = Int32(clamping: status)
        body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            let base = bytes.bindMemory(to: UInt8.self).baseAddress
            if let contentType {
                contentType.withCString { completion(context, status, $0, base, bytes.count) }
            } else {
                completion(context, status, nil, base, bytes.count)
            }
        }
    }

    /// Calls the completion with a failure and its reason.
    func fail(_ kind: ArchivistNetworkFailure, _ reason: String?) {
        if let reason {
            reason.withCString { completion(context, kind.rawValue, $0, nil, 0) }
        } else {
            completion(context, kind.rawValue, nil, nil, 0)
        }
    }
}

/// Classifies a URLSession error by its code only (its message would hold the URL).
private func failure(for error: Error) -> (ArchivistNetworkFailure, String?) {
    guard let urlError = error as? URLError else { return (.other, "request failed") }
    switch urlError.code {
    case .cannotConnectToHost: return (.cannotConnect, "connection refused")
    case .cannotFindHost, .dnsLookupFailed: return (.cannotConnect, "host not found")
    case .notConnectedToInternet: return (.cannotConnect, "not connected to the internet")
    case .timedOut: return (.timedOut, nil)
    case .networkConnectionLost: return (.connectionLost, nil)
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
        .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
        return (.cannotConnect, "TLS handshake failed")
    case .badServerResponse: return (.connectionLost, nil)  // "empty reply from server"
    case .unknown: return (.connectionLost, nil)  // curl's "transfer closed with N bytes remaining"
    case .cancelled: return (.other, "cancelled")
    case .badURL, .unsupportedURL: return (.other, "bad URL")
    default: return (.other, "URL error \(urlError.code.rawValue)")
    }
}
