import ArchivistBase
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
import Glibc
#endif

/// The bounded reader of a script's lines.
@Suite struct ScriptLineReaderTests {
    /// The lines `bytes` read as, through a real pipe, with lines of at most `maximum` bytes.
    func lines(_ bytes: [UInt8], maximum: Int = 16) throws -> [ScriptLineReader.Line] {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let writer = Thread {
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let count = write(writeEnd, buffer.baseAddress! + offset, buffer.count - offset)
                    if count <= 0 { break }
                    offset += count
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(ends[0]) }
        let reader = ScriptLineReader(descriptor: ends[0], maximumBytes: maximum)
        var result: [ScriptLineReader.Line] = []
        while let line = reader.next() { result.append(line) }
        return result
    }

    @Test(arguments: [
        ("a\nb\n", [ScriptLineReader.Line.text("a"), .text("b")]),
        ("a\r\nb", [.text("a"), .text("b")]),
        ("\n\n", [.text(""), .text("")]),
        ("", []),
        ("short\n" + String(repeating: "x", count: 40) + "\nafter\n", [.text("short"), .tooLong, .text("after")]),
        (String(repeating: "x", count: 17), [.tooLong]),
        (String(repeating: "x", count: 16), [.text(String(repeating: "x", count: 16))]),
    ])
    func readsLinesAsReadLineDoesButBounded(input: String, expected: [ScriptLineReader.Line]) throws {
        #expect(try lines(Array(input.utf8)) == expected)
    }

    @Test func invalidUTF8IsRepairedAsReadLineRepairsIt() throws {
        #expect(try lines([0x61, 0xFF, 0x62, 0x0A]) == [.text("a\u{FFFD}b")])
    }

    @Test("a line of many chunks is read whole, and one far past the bound is skipped in bounded memory")
    func linesAcrossChunks() throws {
        let long = String(repeating: "z", count: 200_000)
        #expect(try lines(Array((long + "\nnext").utf8), maximum: 300_000) == [.text(long), .text("next")])
        #expect(try lines(Array((long + long + "\nnext").utf8), maximum: 100_000) == [.tooLong, .text("next")])
    }
}
