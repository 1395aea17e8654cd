import ArchivistBase
import ArchivistStore
import Dispatch
import Foundation

/// Tells the shape of an import file (JSON Lines, a JSON array of documents, one document, or a
/// saved NYT API response with documents at `response.docs`) and splits the whole-value shapes
/// into documents; JSON Lines are read by `JSONLinesReader`.
public struct ImportReader: Sendable {
    /// One document read from the input, or why it could not be read.
    public struct Item: Sendable {
        /// Where it came from, for messages: `line 3`, `element 2`, `response.docs[4]`.
        public var location: String
        /// The document, or a message.
        public var document: Result<JSONValue, ImportFailure>
    }

    /// Why one item of an import failed.
    public struct ImportFailure: Error, Sendable {
        /// What was wrong.
        public var message: String
    }

    /// The shapes an input can have.
    public enum Shape: Sendable, Equatable {
        /// One JSON value per line.
        case jsonLines
        /// A JSON array of documents.
        case array
        /// One JSON object.
        case single
        /// An NYT Article Search response.
        case apiResponse
    }

    /// The input's shape.
    public let shape: Shape
    private let values: [JSONValue]
    private let labels: [String]

    /// Reads `bytes`; throws a message naming the line and column when the input as a whole is
    /// neither JSON Lines nor one JSON value.
    public init(bytes: [UInt8]) throws(ImportFailure) {
        let start = ImportReader.valueStart(in: bytes)
        guard start < bytes.count, bytes[start] == UInt8(ascii: "[") || bytes[start] == UInt8(ascii: "{") else {
            self.init(shape: .jsonLines)
            return
        }
        let parsed: Result<JSONValue, JSONSyntaxError>
        do throws(JSONSyntaxError) {
            parsed = .success(try JSONParser.parse(bytes))
        } catch {
            parsed = .failure(error)
        }
        switch parsed {
        case .success(.array(let elements)):
            self.init(shape: .array, values: elements, labels: elements.indices.map { "element \($0 + 1)" })
        case .success(let value) where value.isObject:
            self = try ImportReader(object: value)
        case .success:
            self.init(shape: .jsonLines)
        case .failure(let error):
            try ImportReader.checkLines(bytes, from: start, failing: error)
            self.init(shape: .jsonLines)
        }
    }

    private init(shape: Shape, values: [JSONValue] = [], labels: [String] = []) {
        self.shape = shape
        self.values = values
        self.labels = labels
    }

    /// One object: an NYT API response (documents at `response.docs`), an API error (a gateway
    /// fault, or a server error's body), or one document.
    private init(object value: JSONValue) throws(ImportFailure) {
        if let response = value["response"] {
            guard response.isObject else { throw ImportFailure(message: "response: expected an object, found \(response.typeName)") }
            switch response["docs"] {
            case .array(let docs)?:
                self.init(shape: .apiResponse, values: docs, labels: docs.indices.map { "response.docs[\($0)]" })
            case .null?:
                self.init(shape: .apiResponse)
            case let other?:
                throw ImportFailure(message: "response.docs: expected an array, found \(other.typeName)")
            case nil:
                throw ImportFailure(message: "response.docs: missing (not an NYT API response)")
            }
        } else if let fault = value["fault"] {
            let text = fault["faultstring"]?.stringValue ?? JSONWriter.compactString(fault)
            throw ImportFailure(message: "an API error, not documents: \(ImportReader.oneLine(text))")
        } else if let text = ImportReader.serverError(in: value) {
            throw ImportFailure(message: "an API error, not documents: \(ImportReader.oneLine(text))")
        } else {
            self.init(shape: .single, values: [value], labels: ["document"])
        }
    }

    /// What a server error's body says, nil for any other object. The body is Spring Boot's
    /// `{"timestamp": ..., "status": 500, "error": "Internal Server Error", "message": ..., "path": ...}`,
    /// as the Article Search API has answered with an HTTP 5xx: an HTTP error status with its
    /// reason, and no `_id`.
    static func serverError(in value: JSONValue) -> String? {
        guard value["_id"] == nil, case .number(let literal)? = value["status"], let status = Int(literal),
            (400...599).contains(status), let reason = value["error"]?.stringValue
        else { return nil }
        let message = value["message"]?.stringValue ?? ""
        return "HTTP \(status) \(reason)" + (message.isEmpty ? "" : ": \(message)")
    }

    /// `text` on one line: line breaks (a server's message may hold some) as spaces.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Input that is not one JSON value: several values (JSON Lines) or a broken line are read line
    /// by line, but when even the first line is not a value of its own the file is broken JSON.
    private static func checkLines(_ bytes: [UInt8], from start: Int, failing error: JSONSyntaxError) throws(ImportFailure) {
        let firstLineEnd = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
        if error.reason != "unexpected data after the value",
            (try? JSONParser.parse(Array(bytes[start..<firstLineEnd]))) == nil
        {
            let (line, column) = ImportReader.lineAndColumn(of: error.offset, in: bytes)
            throw ImportFailure(message: "invalid JSON at line \(line), column \(column): \(error.reason)")
        }
    }

    /// Where the input's first value starts: after a UTF-8 byte order mark and white space
    /// (`bytes.count` when there is none).
    static func valueStart(in bytes: [UInt8]) -> Int {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[start]) { start += 1 }
        return start
    }

    /// Whether input starting with `prefix` is JSON Lines: its first line is a whole JSON value and
    /// more follows it. (A single line holding one document is read whole, as one document.)
    static func isJSONLines(_ prefix: [UInt8]) -> Bool {
        let start = valueStart(in: prefix)
        guard start < prefix.count else { return false }
        guard prefix[start] == UInt8(ascii: "{") || prefix[start] == UInt8(ascii: "[") else { return true }
        guard let newline = prefix[start...].firstIndex(of: 0x0A) else { return false }
        if (try? JSONParser.parse(Array(prefix[start..<newline]))) != nil {
            return prefix[(newline + 1)...].contains { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        }
        // A broken first line: still JSON Lines when one of the next lines is a whole object
        // (no line of a pretty-printed document or array is).
        let following = prefix[(newline + 1)...].split(separator: 0x0A, maxSplits: 3).prefix(2)
        return following.contains { line in
            if case .object? = try? JSONParser.parse(Array(line)) { return true }
            return false
        }
    }

    /// How many documents the input holds (JSON Lines are read with `JSONLinesReader`).
    public var count: Int { values.count }

    /// Items `range` of an array, a single document or an API response.
    public func items(_ range: Range<Int>) -> [Item] {
        range.map { index in
            let value = values[index]
            if shape == .apiResponse, value.isObject, value["_id"] == nil {
                return Item(location: labels[index], document: .failure(ImportFailure(message: "no _id in the document")))
            }
            return Item(location: labels[index], document: .success(value))
        }
    }

    /// Parses lines of a buffer on all cores; each item is named by its line number.
    static func parseLines(_ buffer: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>], numbers: [Int]) -> [Item] {
        let results = ParallelSlots<Item?>(count: ranges.count, initial: nil)
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, max(1, ranges.count / 256))
        nonisolated(unsafe) let buffer = buffer
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var index = worker
            while index < ranges.count {
                let line = UnsafeBufferPointer(rebasing: buffer[ranges[index]])
                let location = "line \(numbers[index])"
                do throws(JSONSyntaxError) {
                    results.set(index, Item(location: location, document: .success(try JSONParser.parse(line))))
                } catch {
                    results.set(index, Item(location: location, document: .failure(ImportFailure(message: error.description))))
                }
                index += workers
            }
        }
        return results.values.map { $0! }
    }

    static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return (line, offset - lineStart + 1)
    }
}
