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
        var shape = Shape.jsonLines
        var values: [JSONValue] = []
        var labels: [String] = []
        if start < bytes.count, bytes[start] == UInt8(ascii: "[") || bytes[start] == UInt8(ascii: "{") {
            let parsed: Result<JSONValue, JSONSyntaxError>
            do throws(JSONSyntaxError) {
                parsed = .success(try JSONParser.parse(bytes))
            } catch {
                parsed = .failure(error)
            }
            switch parsed {
            case .success(let value):
                switch value {
                case .array(let elements):
                    shape = .array
                    values = elements
                    labels = elements.indices.map { "element \($0 + 1)" }
                case .object:
                    if let response = value["response"] {
                        shape = .apiResponse
                        guard response.isObject else { throw ImportFailure(message: "response: expected an object, found \(response.typeName)") }
                        switch response["docs"] {
                        case .array(let docs)?:
                            values = docs
                            labels = docs.indices.map { "response.docs[\($0)]" }
                        case .null?:
                            break
                        case let other?:
                            throw ImportFailure(message: "response.docs: expected an array, found \(other.typeName)")
                        case nil:
                            throw ImportFailure(message: "response.docs: missing (not an NYT API response)")
                        }
                    } else if let fault = value["fault"] {
                        let text = fault["faultstring"]?.stringValue ?? JSONWriter.compactString(fault)
                        throw ImportFailure(message: "an API error, not documents: \(text)")
                    } else {
                        shape = .single
                        values = [value]
                        labels = ["document"]
                    }
                default:
                    break
                }
            case .failure(let error):
                // Several values (JSON Lines) or a broken line: read line by line, unless even the
                // first line is not a value of its own, in which case the file is broken JSON.
                let firstLineEnd = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                if error.reason != "unexpected data after the value",
                   (try? JSONParser.parse(Array(bytes[start..<firstLineEnd]))) == nil {
                    let (line, column) = ImportReader.lineAndColumn(of: error.offset, in: bytes)
                    throw ImportFailure(message: "invalid JSON at line \(line), column \(column): \(error.reason)")
                }
            }
        }
        self.shape = shape
        self.values = values
        self.labels = labels
    }

    /// Where the input's first value starts: after a UTF-8 byte order mark and white space
    /// (`bytes.count` when there is none).
    static func valueStart(in bytes: [UInt8]) -> Int {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[start]) { start += 1 }
        return start
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
