import ArchivistBase
import Testing

@testable import ArchivistShell

/// How a command line or a script line is split into words, and when it continues.
@Suite struct CommandLineSplitterTests {
    @Test(arguments: [
        ("get abc", ["get", "abc"]),
        ("  find   section_name = Sports  ", ["find", "section_name", "=", "Sports"]),
        (#"find headline.main ~ "New York""#, ["find", "headline.main", "~", "New York"]),
        (#"put x '{"a": 1}'"#, ["put", "x", #"{"a": 1}"#]),
        (#"put x {"a": 1, "b": [1, 2]}"#, ["put", "x", #"{"a": 1, "b": [1, 2]}"#]),
        (#"put x {"s": "a } b \" c"}"#, ["put", "x", #"{"s": "a } b \" c"}"#]),
        (#"say "a \"quoted\" word""#, ["say", #"a "quoted" word"#]),
        (#"one\ word"#, ["one word"]),
        (#"find '"climate change"'"#, ["find", #""climate change""#]),
        ("count", ["count"]),
        ("", []),
        (#"x "" y"#, ["x", "", "y"]),
        ("put x {\"a\":\n1}", ["put", "x", "{\"a\":\n1}"]),
        ("put x {\"a\":\\\n1}", ["put", "x", "{\"a\":1}"]),
        // An escaped backslash at the end of a line is no continuation: the newline stays.
        ("say \"a\\\\\nb\"", ["say", "a\\\nb"]),
        ("say a\\\\\nb", ["say", "a\\", "b"]),
        ("a\\\n\\\nb", ["ab"]),
        ("say \"\u{301}x\"", ["say", "\u{301}x"]),
    ])
    func splitsLikeAShellAndKeepsJSONWhole(line: String, words: [String]) {
        #expect(CommandLineSplitter.split(line) == .words(words))
    }

    @Test(arguments: [
        ("Sports", ShellWord.Quoting.none),
        (#""New York""#, .double),
        ("'New York'", .single),
        (#""""#, .double),
        (#"headline~"don't""#, .mixed),
        (#""a"'b'"#, .mixed),
        (#"one\ word"#, .none),
        (#"{"a": 1}"#, .json),
    ])
    func eachWordRemembersHowItWasQuoted(word: String, quoting: ShellWord.Quoting) {
        guard case .words(let words) = CommandLineSplitter.splitWords("count " + word + " next") else {
            Issue.record("not a whole command")
            return
        }
        #expect(words.map(\.quoting) == [.none, quoting, .none], "\(word)")
    }

    @Test(arguments: [
        #"put x {"a": 1"#,
        #"put x ["#,
        #"find "unclosed"#,
        "find 'unclosed",
        #"put x {"s": "}"#,
        "count \\",
    ])
    func anUnfinishedCommandContinuesOnTheNextLine(line: String) {
        #expect(CommandLineSplitter.split(line) == .incomplete)
    }

    @Test(
        "a command given a line at a time splits as its whole text does",
        arguments: [
            ["put a {", #"  "n": [1,"#, "    2]", "}"],
            ["find \\", "  _id = a", ""],
            ["say 'open", "", "still open", "closed'"],
            [#"say "a\\"#, #"b""#],
            ["x \\", "\\", "y"],
            ["count '"],
        ])
    func linesScannedOneAtATimeAgreeWithTheWholeText(lines: [String]) {
        var scanner = CommandLineSplitter.LineScanner()
        for line in lines { scanner.add(line) }
        #expect(scanner.outcome == CommandLineSplitter.splitWords(lines.joined(separator: "\n")), "\(lines)")
    }

    @Test("a quote left open for 100,000 lines is scanned once, not once per line", .timeLimit(.minutes(1)))
    func aLongOpenQuoteCostsEachLineOnce() {
        var pending = PendingCommand()
        #expect(pending.add("count '") == .unfinished)
        for _ in 0..<100_000 { _ = pending.add(String(repeating: "x", count: 40)) }
        guard case .command(_, let words) = pending.add("'") else {
            Issue.record("the quote did not close")
            return
        }
        #expect(words.count == 2)
        #expect(words[1].text.utf8.count == 100_000 * 41 + 1)
    }

    @Test("a command over 64 MiB is dropped, and the next starts clean")
    func aCommandPastTheBoundIsDropped() {
        var pending = PendingCommand()
        let line = String(repeating: "x", count: 1 << 20)
        #expect(pending.add("count '") == .unfinished)
        var step = PendingCommand.Step.unfinished
        var added = 0
        while step == .unfinished {
            step = pending.add(line)
            added += 1
        }
        #expect(step == .tooLong)
        #expect(added == 64)
        #expect(pending.isEmpty)
        #expect(pending.add("count") == .command(text: "count", words: [ShellWord("count", quoting: .none)]))
    }

    @Test func bracketsInOrdinaryWordsDoNotContinueTheLine() {
        #expect(CommandLineSplitter.split(#"find headline.main ~ "[draft""#) == .words(["find", "headline.main", "~", "[draft"]))
        #expect(CommandLineSplitter.split("get a[b") == .words(["get", "a[b"]))
    }
}
