import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// libArchivistNetwork.so: the project's only use of URLSession (and so of FoundationNetworking,
// libcurl and the forty-odd libraries they bring). It is a separate shared library so that an
// `archivist` process loads it only when it sends a request: `ArchivistClient`'s
// `URLSessionTransport` opens it with dlopen on first use and calls the two functions below. Every
// other command (help, count, stats, ...) starts without the network stack.
//
// The C ABI, version 2 (`ArchivistClient/URLSessionTransport.swift` holds the other side):
//
//     int32_t archivist_network_abi_version(void);
//     void archivist_network_get(const char *url, double timeout, void *context,
//         int32_t (*receive)(void *context, const uint8_t *bytes, intptr_t count, int64_t expected),
//         void (*completion)(void *context, int32_t status, const char *text));
//
// `archivist_network_get` copies `url` before it returns. It calls `receive` for each piece of the
// body as it arrives, in order, with the length the server announced (`Content-Length`, or -1), and
// then `completion` exactly once, with the caller's `context`: usually later on a URLSession thread,
// or before it returns when the URL does not parse. `receive` returns 1 to go on, 0 to stop: the
// transfer is cancelled and `completion` reports the failure `other` with the reason "stopped by
// the receiver". `status` >= 0 is the HTTP status and `text` the Content-Type header (NULL when none
// was sent). `status` < 0 means no whole HTTP answer, one of the `ArchivistNetworkFailure` kinds,
// and `text` the reason (NULL for a timeout or a dropped connection). `bytes` and `text` are valid
// only during the call. No reason ever includes the URL, which holds the API key.

/// The version of the C ABI this library exports; the loader refuses any other.
private let abiVersion: Int32 = 2

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

/// The function `archivist_network_get` gives each piece of the body: context, bytes, byte count,
/// announced length or -1; returns 1 to go on, 0 to stop.
public typealias ArchivistNetworkReceive =
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int, Int64) -> Int32

/// The completion `archivist_network_get` calls: context, status or negative failure kind, content
/// type or reason.
public typealias ArchivistNetworkCompletion = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void

/// The ABI version, checked by the loader before anything else is called.
@_cdecl("archivist_network_abi_version")
public func archivistNetworkABIVersion() -> Int32 {
    abiVersion
}

/// Sends `GET url` with the whole-second `timeout` (at least 1 s), hands the body to `receive` as
/// it arrives and calls `completion` once; see the ABI comment at the top of this file.
@_cdecl("archivist_network_get")
public func archivistNetworkGet(
    _ url: UnsafePointer<CChar>, _ timeout: Double, _ context: UnsafeMutableRawPointer?,
    _ receive: ArchivistNetworkReceive, _ completion: ArchivistNetworkCompletion
) {
    let reply = Reply(context: context, receive: receive, completion: completion)
    guard let url = URL(string: String(cString: url)) else {
        reply.fail(.other, "bad URL")
        return
    }
    var request = URLRequest(url: url)
    request.timeoutInterval = max(1, timeout.rounded(.up))  // Linux truncates fractions
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    request.setValue("archivist", forHTTPHeaderField: "User-Agent")
    let task = session.dataTask(with: request)
    transfers.add(task.taskIdentifier, reply)
    task.resume()
}

/// The one session of the process: ephemeral, no cookies, no cache (so no URL with the key is
/// ever written to disk), its delegate handing each transfer's body to its caller. Made on the
/// first request.
private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1  // one delegate call at a time, in order
    return URLSession(configuration: configuration, delegate: transfers, delegateQueue: queue)
}()

/// The transfers in flight, by task identifier, and the session's delegate.
private let transfers = Transfers()

/// The session's delegate: passes each task's body pieces and end to its caller.
///
/// Its table is behind a mutex; the delegate queue is serial besides.
private final class Transfers: NSObject, URLSessionDataDelegate, Sendable {
    /// A transfer: its caller, and what is known of the answer so far.
    struct Transfer {
        var reply: Reply
        var expected: Int64 = -1
        var received: Int64 = 0
        var stopped = false
    }

    /// The transfers in flight, by task identifier.
    private let table = Mutex<[Int: Transfer]>([:])

    func add(_ identifier: Int, _ reply: Reply) {
        table.withLock { $0[identifier] = Transfer(reply: reply) }
    }

    private func with<T: Sendable>(_ identifier: Int, _ body: (inout Transfer) -> T) -> T? {
        table.withLock { table -> T? in
            guard var transfer = table[identifier] else { return nil }
            let result = body(&transfer)
            table[identifier] = transfer
            return result
        }
    }

    private func remove(_ identifier: Int) -> Transfer? {
        table.withLock { $0.removeValue(forKey: identifier) }
    }

    /// The `Content-Length` a task's answer announced, or -1.
    private static func announcedLength(of task: URLSessionTask) -> Int64 {
        (task.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? -1
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let announced = Transfers.announcedLength(of: dataTask)
        guard
            let (reply, expected, stopped) = with(
                dataTask.taskIdentifier,
                { transfer -> (Reply, Int64, Bool) in
                    transfer.expected = announced
                    transfer.received += Int64(data.count)
                    return (transfer.reply, transfer.expected, transfer.stopped)
                }), !stopped
        else { return }
        let goOn = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            reply.receive(reply.context, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, expected) != 0
        }
        if !goOn {
            _ = with(dataTask.taskIdentifier) { $0.stopped = true }
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let transfer = remove(task.taskIdentifier) else { return }
        let reply = transfer.reply
        if transfer.stopped {
            reply.fail(.other, "stopped by the receiver")
            return
        }
        if let error {
            let (kind, reason) = failure(for: error)
            reply.fail(kind, reason)
            return
        }
        guard let response = task.response else {
            reply.fail(.connectionLost, nil)  // neither an error nor an answer: as URLError.badServerResponse
            return
        }
        guard let http = response as? HTTPURLResponse else {
            reply.fail(.other, "not an HTTP response")
            return
        }
        let announced = Transfers.announcedLength(of: task)
        if announced >= 0, announced > transfer.received {
            reply.fail(.connectionLost, nil)
            return
        }
        reply.answer(status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"))
    }
}

/// The caller's context and functions, carried to the URLSession thread that answers.
///
/// `@unchecked Sendable`: the context is the caller's, handed back untouched, and the functions
/// are plain C functions; the ABI says they may be called from any thread.
private struct Reply: @unchecked Sendable {
    let context: UnsafeMutableRawPointer?
    let receive: ArchivistNetworkReceive
    let completion: ArchivistNetworkCompletion

    /// Calls the completion with an HTTP answer (its body went to `receive`).
    func answer(status: Int, contentType: String?) {
        let status = Int32(clamping: status)
        if let contentType {
            contentType.withCString { completion(context, status, $0) }
        } else {
            completion(context, status, nil)
        }
    }

    /// Calls the completion with a failure and its reason.
    func fail(_ kind: ArchivistNetworkFailure, _ reason: String?) {
        if let reason {
            reason.withCString { completion(context, kind.rawValue, $0) }
        } else {
            completion(context, kind.rawValue, nil)
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
