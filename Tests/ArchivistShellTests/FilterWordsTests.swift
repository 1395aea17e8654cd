import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

/// What the filter parser is handed for a FILTER typed at the prompt or in a script (the
/// splitter's words, which remember their quotes) and given on the command line (the user's
/// shell took the quotes), and that every filter that parsed before keeps its meaning.
@Suite("filters as typed")
struct FilterWordsTests {
    /// The filter text of a line typed at the prompt, after its command word.
    static func typed(_ line: String) throws -> String {
        guard case .words(let words) = CommandLineSplitter.splitWords(line) else {
            throw CLIError("'\(line)' is not a whole command")
        }
        return FilterWords.text(Array(words.dropFirst()))
    }

    /// The filter text of a process's arguments.
    static func argv(_ arguments: [String]) -> String {
        FilterWords.text(arguments.map { ShellWord($0, quoting: .unknown) })
    }

    static let prompt: [(String, String)] = [
        // The issue's examples.
        (#"count section_name = "New York""#, #"section_name = "New York""#),
        (#"find "unlikely deal""#, #""unlikely deal""#),
        (#"count "knicks lopez""#, #""knicks lopez""#),
        (#"find headline.main ~ "don't""#, #"headline.main ~ "don't""#),
        (#"remove section_name = "Real Estate""#, #"section_name = "Real Estate""#),
        (#"export "climate change""#, #""climate change""#),
        ("find climate change", "climate change"),
        // Single quotes too; a value in quotes is one value whatever it holds.
        ("count section_name = 'New York'", #"section_name = "New York""#),
        (#"count headline.main ~ "a = b""#, #"headline.main ~ "a = b""#),
        (#"count headline.main ~ 'say "hi"'"#, #"headline.main ~ "say \"hi\"""#),
        // A whole filter in quotes, as before (alone, or in parentheses among other words).
        ("count 'section_name = Sports'", "section_name = Sports"),
        (#"count "section_name = Sports""#, "section_name = Sports"),
        (#"find '"climate change"'"#, #""climate change""#),
        ("count 'a = 1 or b = 2' and c = 3", "(a = 1 or b = 2) and c = 3"),
        ("count 'section_name = Sports and'", "section_name = Sports and"),  // its error is shown
        // The quotes around a value only.
        (#"find headline.main~"don't""#, #"headline.main ~ "don't""#),
        // JSON as typed.
        (#"count {"section_name": "Sports"}"#, #"{"section_name": "Sports"}"#),
        (#"count '{"section_name": "Sports"}'"#, #"{"section_name": "Sports"}"#),
        // Bare words and operators as they are.
        ("count section_name = Sports and pub_date >= 2015-07-01", "section_name = Sports and pub_date >= 2015-07-01"),
        ("count news_desk in (Sports, Foreign)", "news_desk in (Sports, Foreign)"),
        ("count", ""),
    ]

    @Test(arguments: prompt)
    func atThePromptAndInAScriptTheFilterIsTheTextAsTyped(line: String, expected: String) throws {
        #expect(try Self.typed(line) == expected)
    }

    static let commandLine: [([String], String)] = [
        (["section_name", "=", "New York"], #"section_name = "New York""#),
        (["knicks", "lopez"], "knicks lopez"),
        (["knicks lopez"], #""knicks lopez""#),
        (["climate", "change"], "climate change"),
        (["section_name = Sports and pub_date >= 2015-07-01"], "section_name = Sports and pub_date >= 2015-07-01"),
        (["section_name", "=", "Sports"], "section_name = Sports"),
        (["headline.main", "~", "don't"], #"headline.main ~ "don't""#),
        (["headline.main", "~", "a=b"], #"headline.main ~ "a=b""#),
        (["section_name", "in", "(Sports, World)"], "section_name in (Sports, World)"),
        ([#""climate change""#], #""climate change""#),
        (["section_name = Sports", "and", "byline exists"], "(section_name = Sports) and (byline exists)"),
        (["(section_name = Sports"], "(section_name = Sports"),  // its error is shown
        ([#"{"a": 1}"#], #"{"a": 1}"#),
    ]

    @Test(arguments: commandLine)
    func onTheCommandLineWordsJoinedKeepTheirMeaning(arguments: [String], expected: String) {
        #expect(Self.argv(arguments) == expected)
    }

    @Test(arguments: [
        (#"count section_name = "New York""#, Filter.field("section_name", [.eq(.string("New York"))])),
        (#"count "knicks lopez""#, .text("knicks lopez")),
        ("count knicks lopez", .text("knicks lopez")),
        (#"find headline.main ~ "don't""#, .field("headline.main", [.contains("don't")])),
        (
            "count climate change and section_name = Science",
            .and([.text("climate change"), .field("section_name", [.eq(.string("Science"))])])
        ),
    ])
    func typedFiltersMeanWhatTheySay(line: String, expected: Filter) throws {
        #expect(try FilterParser.parseAny(Self.typed(line)) == expected)
    }

    /// Every command line in the docs (the README, `docs/`, `bench/README.md`, `data/README.md`)
    /// and in the help's examples whose command takes a FILTER.
    static func documentedFilterLines() throws -> [String] {
        var lines: [String] = []
        for command in CommandTable.standard.commands { lines += command.examples.map { "archivist " + $0 } }
        for file in try DocFile.checkedFiles() {
            for line in try DocFile(file).lines {
                var text = line.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("$ ") { text = String(text.dropFirst(2)) }
                for prefix in ["archivist ", "data> "] where text.hasPrefix(prefix) {
                    lines.append(prefix == "data> " ? "archivist " + text.dropFirst(prefix.count) : text)
                }
            }
        }
        let filterCommands: Set<String> = ["find", "count", "facet", "export", "remove"]
        return lines.compactMap { line in
            // Up to a comment, a pipe or a redirection.
            var text = line
            for end in ["  #", " |", " >"] { if let range = text.range(of: end) { text = String(text[..<range.lowerBound]) } }
            guard case .words(let words) = CommandLineSplitter.split(text),
                let name = words.dropFirst().first(where: { !$0.hasPrefix("-") }),
                filterCommands.contains(name)
            else { return nil }
            return text
        }
    }

    @Test("every filter of the docs and the help parses to what the words joined with spaces parsed to before")
    func documentedFiltersKeepTheirMeaning() throws {
        let lines = try Self.documentedFilterLines()
        #expect(lines.count >= 15, "\(lines)")
        for line in lines {
            guard case .words(let split) = CommandLineSplitter.splitWords(line) else { continue }
            let global = try Shell.parseGlobalOptions(split.map(\.text))
            let words = Array(split.suffix(global.words.count))
            guard let name = words.first?.text, let command = CommandTable.standard.command(named: name),
                let parsed = try? command.parse(words: Array(words.dropFirst()))
            else { continue }
            var filterWords = parsed.positionalWords
            if name == "facet" { filterWords = Array(filterWords.dropFirst()) }
            if name == "remove", !filterWords.isEmpty, line.contains("--where") == false { continue }
            let before = filterWords.map(\.text).joined(separator: " ")
            guard let old = try? FilterParser.parseAny(before) else { continue }
            // At the prompt (quotes known) and on the command line (quotes taken by the shell).
            #expect(try FilterParser.parseAny(FilterWords.text(filterWords)) == old, "\(line)")
            #expect(
                try FilterParser.parseAny(FilterWords.text(filterWords.map { ShellWord($0.text, quoting: .unknown) })) == old, "\(line)")
        }
    }
}

/// An error of the test's own making.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
