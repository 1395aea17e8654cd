import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Tests of the fake NYT Article Search server, over real sockets with URLSession, and of the
// date-range corpus generator it is usually fed with.

// MARK: - Helpers

/// The built `fake-nyt`, found beside the running test executable (SwiftPM puts every product of a
/// build in one folder), or nil.
let fakeNYTBinary: String? = {
    var folders: [URL] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        folders.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
    }
    if let first = CommandLine.arguments.first, first.contains("/") {
        folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
    }
    for start in folders {
        var folder = start
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("fake-nyt").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
    }
    return nil
}()

@Suite("fake-nyt program", .enabled(if: fakeNYTBinary != nil, "fake-nyt is not built beside the tests"))
struct FakeNYTProgramTests {
    /// Reads standard output up to the first newline.
    static func firstLine(of handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        while !bytes.contains(0x0A) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes.append(contentsOf: chunk)
        }
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    @Test func programServesPrintsItsAddressAndStopsOnSIGTERM() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(fakeNYTBinary))
        process.arguments = [
            "--docs", "25", "--seed", "4", "--from", "2021-01-01", "--to", "2021-01-31", "--key", "k",
            "--envelope", "metadata", "--fault", "429,docsnull",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = Self.firstLine(of: output.fileHandleForReading)
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        let base = String(line.dropFirst("listening on ".count))
        func get(_ query: String) async throws -> (Int, JSONValue?) {
            let url = try #require(URL(string: base + FakeNYTServer.searchPath + "?" + query))
            let (data, response) = try await session.data(for: URLRequest(url: url))
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONParser.parse([UInt8](data)))
        }
        #expect(try await get("api-key=k").0 == 429)
        #expect(try await get("api-key=k").1?["response"]?["docs"] == .null)
        let (status, body) = try await get("api-key=k&begin_date=20210101&end_date=20210131")
        #expect(status == 200)
        #expect(body?["response"]?["metadata"]?["hits"] == .number("25"))
        #expect(try await get("api-key=other").0 == 401)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test func programServesTheArchiveWithFaultsBeforeTheFirstRequests() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(fakeNYTBinary))
        process.arguments = ["--docs", "30", "--seed", "6", "--from", "1963-02-01", "--to", "1963-02-28", "--fault", "malformed"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let line = Self.firstLine(of: output.fileHandleForReading)
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        let url = try #require(URL(string: String(line.dropFirst("listening on ".count)) + "/svc/archive/v1/1963/2.json?api-key=test-key"))
        let (cut, first) = try await session.data(for: URLRequest(url: url))
        #expect((first as? HTTPURLResponse)?.statusCode == 200)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([UInt8](cut)) }
        let (data, _) = try await session.data(for: URLRequest(url: url))
        let body = try JSONParser.parse([UInt8](data))
        #expect(body["response"]?["meta"]?["hits"] == .number("30"))
        guard case .array(let docs)? = body["response"]?["docs"] else {
            Issue.record("no docs")
            return
        }
        #expect(docs.count == 30)
        #expect(docs.allSatisfy { $0["section_name"] == .string("Archives") && $0["news_desk"] != nil })
    }

    @Test(arguments: [
        ["--bogus"], ["--port"], ["--docs", "many"], ["--from", "2021-13-01"], ["--fault", "418"],
        ["--envelope", "json"], ["--from", "2021-02-01", "--to", "2021-01-01"],
    ])
    func badUsageExits64WithOneLineOnStandardError(arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(fakeNYTBinary))
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 64)
        #expect(text.split(separator: "\n").count == 1, "\(text)")
    }
}
