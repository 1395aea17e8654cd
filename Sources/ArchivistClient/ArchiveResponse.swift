import ArchivistBase
import Foundation

/// One Archive API month as received: its hit count and every document, as ranges of the body.
///
/// The body is checked whole when it is read (a body cut off anywhere is refused before any
/// document is used), and the envelope is read as for Article Search (`response.meta` or
/// `response.metadata`, a fault or error body refused with the API's message). The documents are
/// not built then: a month can be 90 MB, so ``documents(_:)`` parses a few at a time, and only the
/// body and one batch are held.
public struct ArchiveResponse: Sendable {
    /// The month's hit count (`response.meta.hits`).
    public let hits: Int
    /// The body as received.
    public let body: [UInt8]
    /// Where each document of `response.docs` lies in ``body``.
    let ranges: [Range<Int>]

    /// The number of documents received (may differ from ``hits``).
    public var documentCount: Int { ranges.count }

    /// Reads a month's body; `source` names it in errors (`response from https://…&api-key=REDACTED`).
    ///
    /// - Throws: ``ClientError/invalidJSON(source:error:)`` when the body is not JSON (cut off, for
    ///   instance); ``ClientError/unexpectedShape(path:reason:)`` as ``SearchResponse`` reads an
    ///   envelope.
    public init(body: [UInt8], source: String) throws(ClientError) {
        let parsed: DeferredJSON
        do {
            parsed = try JSONParser.parse(body, deferringArrayAt: ["response", "docs"])
        } catch {
            throw .invalidJSON(source: source, error: error)
        }
        // The envelope with its docs left empty reads as a search page of no documents.
        let envelope = try SearchResponse(root: parsed.root)
        hits = envelope.hits
        self.body = body
        ranges = parsed.elements ?? []
    }

    /// Where a batch starting at document `start` ends: after `documents` documents, or before
    /// the one that would take the batch's bytes of the body past `bytes` (one document at least).
    public func batchEnd(from start: Int, documents: Int, bytes: Int) -> Int {
        var end = start
        var total = 0
        while end < ranges.count, end - start < documents {
            total += ranges[end].count
            if total > bytes, end > start { break }
            end += 1
        }
        return end
    }

    /// The documents at `positions` (a range within `0..<documentCount`), parsed; a document that
    /// cannot be stored (not an object, no `_id` string) is given as an error naming its place,
    /// `response.docs[17]`.
    public func documents(_ positions: Range<Int>) -> [Result<JSONValue, ClientError>] {
        positions.map { position -> Result<JSONValue, ClientError> in
            var path: String { "response.docs[\(position)]" }
            let value: JSONValue
            do {
                value = try JSONParser.parse(body[ranges[position]])
            } catch {
                // Checked when the body was read: only a bug gets here.
                return .failure(.unexpectedShape(path: path, reason: "\(error)"))
            }
            guard case .object = value else {
                return .failure(.unexpectedShape(path: path, reason: "expected a document (object), found \(value.typeName)"))
            }
            guard case .string(let id)? = value["_id"], !id.isEmpty else { return .failure(.missingID(path: path)) }
            return .success(value)
        }
    }
}
