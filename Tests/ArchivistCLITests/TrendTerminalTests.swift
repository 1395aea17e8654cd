import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Whether a `tmux` is on the PATH.
private let tmuxIsInstalled: Bool = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
    FileManager.default.isExecutableFile(atPath: "\($0)/tmux")
}

/// `trend`'s chart in a real terminal: tmux runs `archivist trend` in a window of a chosen size,
/// `capture-pane` reads the screen (with `-e`, its colours). Each test uses its own tmux server.
@Suite(
    "trend in a terminal", .serialized,
    .enabled(if: tmuxIsInstalled, "tmux is not installed (scripts/install-deps installs it): the terminal chart is not tested"))
final class TrendTerminalTests {
    let sandbox: TemporaryFolder
    let socket = "archivist-trend-\(getpid())-\(UUID().uuidString.prefix(8))"

    init() throws {
        sandbox = try TemporaryFolder()
        let file = sandbox.root + "/articles.jsonl"
        let documents = ArticleGenerator.corpus(count: 400, seed: 72, from: "1990-01-01", to: "2020-12-31")
        try sandbox.write(documents.map { JSONWriter.compactString($0) + "\n" }.joined(), to: file)
        let imported = try sandbox.run(["import", file])
        try #require(imported.status == 0, "import: \(imported)")
        let removed = try sandbox.run(["remove", "--where", "pub_date >= 2001-01-01 and pub_date < 2003-01-01"])
        try #require(removed.status == 0, "remove: \(removed)")
        try Tmux.startServer(socket: socket, folder: sandbox.root)
    }

    deinit {
        _ = try? tmux(["kill-server"])
        sandbox.remove()
    }

    /// Runs tmux and waits for that process alone (the server it starts inherits descriptors).
    @discardableResult
    func tmux(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Tmux.run(arguments, socket: socket, folder: sandbox.root)
    }

    /// Runs `archivist trend ARGUMENTS` in a `width` × `height` window with `environment` (NAME=value
    /// words, or -u NAME) and returns the screen once it has finished, plain and with its colours.
    func chart(
        _ arguments: [String], width: Int, height: Int, environment: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (plain: [String], coloured: String) {
        let session = "w\(width)h\(height)\(UUID().uuidString.prefix(6))"
        let words =
            ["env", "-u", "COLUMNS", "-u", "LINES", "-u", "NO_COLOR"] + environment + [try CLI.binary(), "--data", sandbox.data, "trend"]
            + arguments
        let command = words.map(Command.shellQuoted).joined(separator: " ") + "; printf END; sleep 600"
        let started = try tmux(["new-session", "-d", "-s", session, "-x", String(width), "-y", String(height), command])
        try #require(
            started.status == 0, "tmux could not start a \(width)x\(height) session: \(started.output)", sourceLocation: sourceLocation)
        defer { _ = try? tmux(["kill-session", "-t", session]) }
        let deadline = Date().addingTimeInterval(30)
        var screen = ""
        while Date() < deadline {
            screen = try tmux(["capture-pane", "-t", session, "-p"]).output
            if screen.contains("END") { break }
            usleep(50_000)
        }
        try #require(screen.contains("END"), "the chart never finished:\n\(screen)", sourceLocation: sourceLocation)
        let coloured = try tmux(["capture-pane", "-t", session, "-p", "-e"]).output
        var lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while let last = lines.last, last.isEmpty || last == "END" { lines.removeLast() }
        if lines.last?.hasSuffix("END") == true { lines[lines.count - 1].removeLast(3) }
        return (lines, coloured)
    }

    static let series = ["election", "knicks", "section_name = Sports"]

    @Test("the chart fits terminals from 40 to 200 columns, in braille and a colour per series, nothing scrolled away")
    func fitsEveryWidth() throws {
        for (width, height) in [(40, 16), (60, 20), (80, 24), (120, 30), (200, 50)] {
            let (lines, coloured) = try chart(Self.series, width: width, height: height)
            let text = lines.joined(separator: "\n")
            #expect(lines.first == "share of all articles per year", "\(width)x\(height), the title on top:\n\(text)")
            #expect(lines.count <= height - 1, "\(width)x\(height): \(lines.count) lines")
            for line in lines { #expect(DisplayWidth.of(line) <= width, "\(width): \(line)") }
            #expect(text.unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) }, "braille dots:\n\(text)")
            for name in Self.series { #expect(text.contains("━━ " + name), "\(width): the legend names \(name)") }
            #expect(text.contains("%"), "the value axis is in percent")
            #expect(text.contains("1990") || text.contains("2000"), "the time axis:\n\(text)")
            #expect(text.contains("blank: spans with no articles at all"))
            // tmux spells the colours in its own way; each series has one.
            for code in ["36", "35", "33"] { #expect(coloured.contains("\u{1B}[\(code)m"), "\(width): colour \(code)") }
        }
    }

    @Test("NO_COLOR and TERM=dumb draw plain characters without colour; --counts labels counts")
    func plainWithoutColour() throws {
        for environment in [["NO_COLOR=1"], ["TERM=dumb"]] {
            let (lines, coloured) = try chart(Self.series + ["--counts"], width: 70, height: 24, environment: environment)
            let text = lines.joined(separator: "\n")
            #expect(lines.first == "articles per year", "\(environment):\n\(text)")
            #expect(text.unicodeScalars.allSatisfy { $0.isASCII }, "\(environment):\n\(text)")
            #expect(!coloured.contains("\u{1B}[3"), "\(environment): no colour")
            #expect(text.contains("** election") && text.contains("++ knicks") && text.contains("oo section_name = Sports"))
            #expect(!text.contains("%"))
        }
    }

    @Test("a gap between spans with articles is left blank, a zero is drawn on the zero line")
    func gapsAndZeros() throws {
        // 2000 to 2003, 2001 and 2002 holding nothing; the series matches nothing, so it is 0 wherever there are articles.
        let (lines, _) = try chart(
            ["section_name = Nothing", "--by", "year", "--from", "2000", "--to", "2003"], width: 41, height: 16,
            environment: ["NO_COLOR=1"])
        let rule = try #require(lines.firstIndex { $0.contains("+-") })
        let bottom = Array(lines[rule - 1])
        let gutter = try #require(lines[1].firstIndex(of: "+")).utf16Offset(in: lines[1]) + 1
        let columns = 41 - gutter - 1
        // 2000 and 2003 are zeros on the bottom row, at the left and right ends; 2001 and 2002 are blank.
        #expect(bottom.count > gutter && bottom[gutter] == "*", "\(lines.joined(separator: "\n"))")
        #expect(bottom.count >= gutter + columns && bottom[gutter + columns - 1] == "*", "\(lines.joined(separator: "\n"))")
        for row in 1..<rule {
            let line = Array(lines[row])
            for column in (columns / 3 + 1)..<(2 * columns / 3) where gutter + column < line.count {
                #expect(line[gutter + column] == " ", "row \(row) column \(column): \(lines[row])")
            }
        }
    }
}
