import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArchivistClient

/// A transport that answers Archive API requests from bodies by month (`/svc/archive/v1/Y/M.json`);
/// `intercept` may answer a call instead (by month and 1-based call number). A month without a
/// body answers 404.
final class ArchiveTransport: HTTPTransport {
    private let bodies: [ArchiveMonth: [UInt8]]
    private let intercept: @Sendable (_ month: ArchiveMonth?, _ call: Int) -> ScriptedTransport.Step?
    private let asked = Mutex<[ArchiveMonth?]>([])

    init(
        bodies: [ArchiveMonth: [UInt8]],
        intercept: @escaping @Sendable (_ month: ArchiveMonth?, _ call: Int) -> ScriptedTransport.Step? = { _, _ in nil }
    ) {
        self.bodies = bodies
        self.intercept = intercept
    }

    func get(_ url: URL, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        let parts = url.path.split(separator: "/")
        var month: ArchiveMonth?
        if parts.count == 5, let year = Int(parts[3]), parts[4].hasSuffix(".json"), let number = Int(parts[4].dropLast(5)) {
            month = ArchiveMonth(year: year, month: number)
        }
        let call = asked.withLock { asked in
            asked.append(month)
            return asked.count
        }
        if let step = intercept(month, call) {
            switch step {
            case .respond(let response): return response
            case .fail(let failure): throw failure
            }
        }
        guard let month, let body = bodies[month] else {
            return HTTPResponse(status: 404, contentType: "application/json", body: Array(#"{"fault":{"faultstring":"no"}}"#.utf8))
        }
        return HTTPResponse(status: 200, contentType: "application/json", body: body)
    }

    /// The months asked for, in order (nil for a path that is not a month).
    var months: [ArchiveMonth?] { asked.withLock { $0 } }
}

/// An Archive API body holding `documents`: `{"copyright":...,"response":{"docs":[...],"meta":{"hits":N}}}`.
func archiveBody(_ documents: [JSONValue], hits: Int? = nil) -> [UInt8] {
    var body = Array(#"{"copyright":"Copyright (c) 2020 The New York Times Company. All Rights Reserved.","response":{"docs":["#.utf8)
    body.append(contentsOf: documents.map { JSONWriter.compactBytes($0) }.joined(separator: [UInt8(ascii: ",")]))
    body.append(contentsOf: #"],"meta":{"hits":\#(hits ?? documents.count)}}}"#.utf8)
    return body
}

extension Result where Failure == ClientError {
    /// The error's message, for a failure.
    var failureMessage: String? {
        if case .failure(let error) = self { return error.errorDescription }
        return nil
    }
}
