import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The interactive shell through a real pseudo-terminal: tmux runs `archivist`, `send-keys`
/// types, `capture-pane` reads the screen. Each test uses its own tmux server socket.
@Suite("the interactive shell in a terminal", .serialized)
final class InteractiveShellTests {
    let sandbox: TemporaryFolder
    let socket = "archivist-test-\(getpid())-\(UUID().uuidString.prefix(8))"
    /// Whether this test's tmux server runs (started with its first shell).
    var serverStarted = false

    init() throws {
        sandbox = try TemporaryFolder()
    }

    deinit {
        _ = try? tmux(["kill-server"])
        sandbox.remove()
    }

    var historyPath: String { sandbox.root + "/state/history" }

    /// Runs tmux and waits for that process alone (posix_spawn and waitpid: the tmux server it may
    /// start inherits descriptors, so waiting for pipes to close, as Foundation's Process does,
    /// would wait for the server).
    @discardableResult
    func tmux(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Tmux.run(arguments, socket: socket, folder: sandbox.root)
    }

    func startShell(session: String, environment: String = "") throws {
        let binary = try CLI.binary()
        let command = "\(environment) ARCHIVIST_HISTORY='\(historyPath)' '\(binary)' --data '\(sandbox.data)'"
        if !serverStarted {
            try Tmux.startServer(socket: socket, folder: sandbox.root)
            serverStarted = true
        }
        let started = try tmux(["new-session", "-d", "-s", session, "-x", "120", "-y", "40", command])
        try #require(started.status == 0, "tmux could not start (is tmux installed? scripts/install-deps installs it): \(started.output)")
    }

    func screen(_ session: String) throws -> String {
        try tmux(["capture-pane", "-t", session, "-p"]).output
    }

    /// Waits until the screen shows `text` (at most 30 s), and returns the screen.
    @discardableResult
    func waitFor(_ text: String, in session: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let deadline = Date().addingTimeInterval(30)
        var shown = ""
        while Date() < deadline {
            shown = try screen(session)
            if shown.contains(text) { return shown }
            usleep(50_000)
        }
        Issue.record("the screen never showed \(text.debugDescription):\n\(shown)", sourceLocation: sourceLocation)
        return shown
    }

    func type(_ session: String, _ keys: String...) throws {
        try tmux(["send-keys", "-t", session] + keys)
    }

    /// Waits until the session has ended (at most 30 s); returns whether it has.
    @discardableResult
    func waitUntilEnded(_ session: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while try tmux(["has-session", "-t", session]).status == 0 {
            if Date() >= deadline { return false }
            usleep(50_000)
        }
        return true
    }

    @Test("typing, a multi-line JSON put, Ctrl-C, history across sessions with the up arrow, Ctrl-D")
    func aSessionAtTheKeyboard() throws {
        try startShell(session: "one")
        try waitFor("data>", in: "one")
        let banner = try screen("one")
        #expect(banner.contains("archivist ") && banner.contains("0 documents"), "banner: \(banner)")

        try type("one", #"put a {"headline": {"main":"#, "Enter")
        try waitFor("...>", in: "one")
        try type("one", #" "Typed at the keyboard"}}"#, "Enter")
        try waitFor("added", in: "one")

        try type("one", "half a line", "C-c")
        try type("one", "count", "Enter")
        let afterCount = try waitFor("\n1\n", in: "one")
        #expect(!afterCount.contains("unknown command"), "Ctrl-C must drop the half-typed line:\n\(afterCount)")

        try type("one", "get nope", "Enter")
        try waitFor("error: ID 'nope': no such document", in: "one")

        try type("one", "C-d")
        #expect(try waitUntilEnded("one"), "Ctrl-D on an empty line ends the shell")

        // The history is kept, private to its owner, with the multi-line put as one entry.
        let attributes = try FileManager.default.attributesOfItem(atPath: historyPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let history = try String(contentsOfFile: historyPath, encoding: .utf8)
        #expect(history.contains("count"))
        #expect(!history.contains("half a line"))

        // A new session recalls the last command with the up arrow.
        try startShell(session: "two")
        try waitFor("· 1 document\n", in: "two")
        try type("two", "Up")
        try waitFor("data> get nope", in: "two")
        try type("two", "C-u", ".quit", "Enter")
    }

    @Test("Tab completes a command, a field name and a document ID, and lists several matches")
    func tabCompletion() throws {
        try startShell(session: "four")
        try waitFor("data>", in: "four")
        try type("four", #"put article-1 {"section_name": "Sports"}"#, "Enter")
        try waitFor("added", in: "four")
        try type("four", "cou", "Tab", "section_na", "Tab", "= Sports", "Enter")
        try waitFor("count section_name = Sports\n1\n", in: "four")
        try type("four", "get art", "Tab", "Enter")
        try waitFor("data> get article-1", in: "four")
        try waitFor(#""section_name": "Sports""#, in: "four")
        try type("four", "f", "Tab")
        try waitFor("facet  find", in: "four")
        try type("four", "C-u", ".quit", "Enter")
    }

    @Test("filters are read as typed at the prompt (a quoted value, a phrase, bare words), and quit leaves")
    func filtersAsTypedAtThePrompt() throws {
        try startShell(session: "five")
        try waitFor("data>", in: "five")
        try type("five", #"put ny {"section_name": "New York", "headline": {"main": "An Unlikely Deal"}}"#, "Enter")
        try waitFor("added", in: "five")
        try type("five", #"count section_name = "New York""#, "Enter")
        try waitFor("count section_name = \"New York\"\n1\n", in: "five")
        try type("five", #"count "unlikely deal""#, "Enter")
        try waitFor("count \"unlikely deal\"\n1\n", in: "five")
        try type("five", "count unlikely deal", "Enter")
        try waitFor("count unlikely deal\n1\n", in: "five")
        try type("five", "quit", "Enter")
        #expect(try waitUntilEnded("five"), "quit ends the shell")
    }

    @Test("output taller than the terminal goes through $PAGER; short output and .pager off do not")
    func longOutputGoesThroughThePager() throws {
        let lines = (1...60).map { #"{"_id":"doc-\#($0)","headline":{"main":"Headline \#($0)"}}"# }
        try sandbox.write(lines.joined(separator: "\n") + "\n", to: sandbox.root + "/in.jsonl")
        #expect(try sandbox.run(["import", sandbox.root + "/in.jsonl"]).status == 0)
        // The pager counts the lines it is given, so the screen shows that it ran, and on what.
        try startShell(session: "six", environment: "PAGER=\"wc -l | sed 's/^/paged: /'\"")
        try waitFor("data>", in: "six")
        try type("six", "find --fields _id --limit 50", "Enter")
        try waitFor("paged: 51", in: "six")  // a header and 50 rows, on a screen of 40
        try type("six", "count", "Enter")
        let short = try waitFor("\n60\n", in: "six")
        #expect(!short.contains("paged: 1"), "a short answer is printed as it is:\n\(short)")
        try type("six", ".pager off", "Enter")
        try type("six", "find --fields _id --limit 50", "Enter")
        let direct = try waitFor("doc-54\n", in: "six")  // the last of the 50, by ID
        let afterOff = direct.components(separatedBy: ".pager off").last ?? ""
        #expect(!afterOff.contains("paged:"), "with .pager off the rows are printed:\n\(direct)")
        try type("six", "quit", "Enter")
        #expect(try waitUntilEnded("six"))
    }

    @Test("get colours the document on a terminal; NO_COLOR turns that off")
    func getColoursOnATerminal() throws {
        #expect(try sandbox.run(["put", "a", #"{"headline": {"main": "Coloured"}, "word_count": 12}"#]).status == 0)
        // An empty NO_COLOR is as good as none (no-color.org), whatever the test runner sets.
        try startShell(session: "seven", environment: "NO_COLOR=")
        try waitFor("data>", in: "seven")
        try type("seven", "get a", "Enter")
        try waitFor(#""Coloured""#, in: "seven")
        let colored = try tmux(["capture-pane", "-t", "seven", "-p", "-e"]).output
        // tmux shows the colours in its own spelling: bold, then blue.
        #expect(colored.contains("\u{1B}[34m\"headline\"") && colored.contains("\u{1B}[32m\"Coloured\""), "\(colored)")
        try type("seven", "quit", "Enter")
        try waitUntilEnded("seven")
        try startShell(session: "eight", environment: "NO_COLOR=1")
        try waitFor("data>", in: "eight")
        try type("eight", "get a", "Enter")
        try waitFor(#""Coloured""#, in: "eight")
        let plain = try tmux(["capture-pane", "-t", "eight", "-p", "-e"]).output
        #expect(!plain.contains("\u{1B}[34m") && !plain.contains("\u{1B}[32m"), "\(plain)")
        try type("eight", "quit", "Enter")
    }

    @Test("a line carrying a secret is not saved in the history")
    func secretsStayOutOfTheHistory() throws {
        try startShell(session: "three")
        try waitFor("data>", in: "three")
        try type("three", "count api-key=abc123", "Enter")
        try waitFor("note:", in: "three")
        try type("three", "count", "Enter")
        try waitFor("\n0\n", in: "three")
        try type("three", ".quit", "Enter")
        try waitUntilEnded("three")
        let history = try String(contentsOfFile: historyPath, encoding: .utf8)
        #expect(!history.contains("abc123"))
        #expect(history.contains("count"))
    }

    @Test("a long search shows its progress, Ctrl-C stops it after the page in hand and the shell goes on")
    func ctrlCStopsASearchAndReturnsToThePrompt() throws {
        let server = try FakeNYTServer(
            documents: ArticleGenerator.corpus(count: 200, seed: 41, from: "2022-01-01", to: "2022-12-31"),
            apiKey: "tmux-key")
        try startShell(session: "five", environment: "NYT_API_KEY=tmux-key NYT_API_BASE='\(server.baseURL)' ARCHIVIST_PACE=0.7")
        try waitFor("data>", in: "five")
        try type("five", "search --all --fields _id", "Enter")
        let progress = try waitFor("page 3 of 20", in: "five")
        #expect(progress.contains("articles"), "\(progress)")
        try type("five", "C-c")
        let stopped = try waitFor("interrupted after", in: "five")
        #expect(stopped.contains("fetched"), "\(stopped)")
        let pages = server.requests.count
        #expect(pages >= 3 && pages < 20, "stopped early: \(pages) requests")
        try type("five", "count", "Enter")
        try waitFor("\n\(pages * 10)\n", in: "five")
        try type("five", ".quit", "Enter")
    }

    @Test("watch at the prompt shows changes another process commits, and Ctrl-C returns to the prompt")
    func watchAtThePrompt() throws {
        try startShell(session: "nine")
        try waitFor("data>", in: "nine")
        try type("nine", "watch", "Enter")
        try waitFor("Ctrl-C to stop", in: "nine")
        try sandbox.run(["put", "w1", #"{"headline": {"main": "Seen From Afar"}}"#])
        try waitFor("added    #1  w1  Seen From Afar", in: "nine")
        try type("nine", "C-c")
        try waitFor("stopped following after seq 1", in: "nine")
        try type("nine", "count", "Enter")
        try waitFor("count\n1\n", in: "nine")
        try type("nine", ".quit", "Enter")
    }
}
