import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

/// The docs held to the binary, so that they cannot drift from it: the commands table of
/// `docs/USAGE.md` lists exactly the commands `archivist help` lists, in its order, each with the
/// usage line `archivist help COMMAND` prints; every command line shown in the docs' shell code
/// blocks (and after a `$ ` prompt in other blocks) names a command `help` lists and only options
/// its help knows, with no filter the user's shell would mangle; and the README's
/// library example is the code this suite compiles and runs. Each failure is one line naming the
/// doc file and line. `CHANGELOG.md` and `bench/RESULTS.md` are history (what was run then) and
/// are not checked.
@Suite("the docs agree with archivist help")
struct DocsTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    @Test("the commands table of docs/USAGE.md is the list archivist help prints, with each command's usage")
    func commandsTableMatchesHelp() throws {
        let help = try HelpFacts(sandbox: sandbox)
        let file = "docs/USAGE.md"
        let rows = try DocFile(file).commandsTable()
        #expect(rows.count >= 20, "\(file): no commands table found (a '| command | usage | what it does |' header)")
        guard !rows.isEmpty else { return }
        for row in rows where !help.commands.contains(row.name) {
            Issue.record("\(file):\(row.line): '\(row.name)' is in the commands table but archivist help does not list it")
        }
        for name in help.commands where !rows.contains(where: { $0.name == name }) {
            Issue.record("\(file):\(rows[0].line): the commands table lacks '\(name)', which archivist help lists")
        }
        for row in rows {
            guard let usage = help.usage[row.name] else { continue }
            if row.usage != usage {
                Issue.record(
                    "\(file):\(row.line): the usage of '\(row.name)' is '\(row.usage)' but archivist help \(row.name) says '\(usage)'")
            }
        }
        let listed = rows.map(\.name).filter { help.commands.contains($0) }
        let order = help.commands.filter { listed.contains($0) }
        if listed != order {
            let names = order.joined(separator: ", ")
            Issue.record("\(file):\(rows[0].line): the commands table is not in the order archivist help lists them: \(names)")
        }
    }

    @Test("every archivist command line in the docs' code blocks names a command and options its help knows")
    func documentedCommandLinesAreKnown() throws {
        let help = try HelpFacts(sandbox: sandbox)
        var checked = 0
        for file in try DocFile.checkedFiles() {
            for commandLine in try DocFile(file).commandLines() {
                checked += 1
                for problem in help.problems(of: commandLine.text) {
                    Issue.record("\(file):\(commandLine.line): \(problem): \(commandLine.text)")
                }
            }
        }
        #expect(checked >= 40, "only \(checked) archivist command lines found in the docs' code blocks")
    }

    @Test("the checker finds what it should: an unknown command, an unknown option, a filter the shell would mangle")
    func checkerCatchesMistakes() throws {
        let help = try HelpFacts(sandbox: sandbox)
        #expect(help.problems(of: "archivist find climate --limit 5 --fields _id,headline.main --format csv").isEmpty)
        #expect(help.problems(of: "archivist --data d count 'section_name = Sports' > n.txt  # a note").isEmpty)
        #expect(help.problems(of: "NYT_API_KEY=k archivist search --all --pace=0").isEmpty)
        #expect(help.problems(of: "archivist").isEmpty)
        #expect(help.problems(of: "archivist serch election") == ["'serch' is not a command archivist help lists"])
        #expect(help.problems(of: "archivist find climate --top 5") == ["'--top' is not an option of 'find' (archivist help find)"])
        #expect(help.problems(of: "archivist facet pub_date:year --by month").isEmpty)
        #expect(!help.problems(of: "archivist count pub_date >= 2015-07-01").isEmpty)
        #expect(!help.problems(of: "archivist count headline.main ~ preview").isEmpty)
        #expect(!help.problems(of: "archivist count news_desk in (Sports, Foreign)").isEmpty)
    }

    @Test("the README's library example is the one this suite compiles, and it runs on a real Archive month")
    func readmeLibraryExampleRuns() throws {
        let readme = try DocFile("README.md")
        let (line, example) = try #require(readme.firstBlock(language: "swift"), "README.md: no swift code block")
        let shown = DocFile.normalized(example.filter { !$0.hasPrefix("import ") }).map {
            $0.replacingOccurrences(of: #"folder: "data""#, with: "folder: folder")
        }
        let source = try String(contentsOfFile: #filePath, encoding: .utf8).components(separatedBy: "\n")
        let begin = try #require(source.firstIndex { $0.hasSuffix("// README example: begin") })
        let end = try #require(source.firstIndex { $0.hasSuffix("// README example: end") })
        let compiled = DocFile.normalized(Array(source[(begin + 1)..<end]))
        if shown != compiled {
            Issue.record("README.md:\(line): the library example differs from the one DocsTests.swift compiles and runs (readmeExample)")
        }
        let month = NYTSamples.path("14_archive_1963_02_strike_era_3012docs_reserialized.json")
        let imported = try sandbox.run(["import", month])
        #expect(imported.status == 0, "\(imported)")
        try Self.readmeExample(folder: sandbox.data)
        let count = try sandbox.run(["count"])
        #expect(count.stdoutText == "3013\n", "\(count)")
    }

    /// The README's library example, compiled and run here (`folder` is `"data"` there).
    static func readmeExample(folder: String) throws {
        // README example: begin
        let store = try DocumentStore(folder: folder, schema: .nyt)
        let cuba = try FilterParser.parseAny("cuba and pub_date >= 1963-02-15")
        let found = try store.find(Query(filter: cuba, sort: [SortKey("pub_date")], limit: 3))
        for id in found.ids {
            let article = try store.document(withID: id)
            print(article?["pub_date"]?.stringValue ?? "", article?["headline"]?["main"]?.stringValue ?? "")
        }
        let all = try store.count(matching: .all).count
        print("\(found.total) of \(all) articles match")
        try store.put(["headline": ["main": "A note of my own"]], id: "my-note")
        // README example: end
    }
}

/// What `archivist help` says: the commands in its order, each one's usage line and options, and
/// the global options; each option with whether it takes a value.
struct HelpFacts {
    /// The command names, in the order `help` lists them.
    var commands: [String] = []
    /// Each command's usage, as `help COMMAND` prints it after `usage: archivist `.
    var usage: [String: String] = [:]
    /// Each command's options (`--limit`: true, it takes a value; `--all`: false).
    var options: [String: [String: Bool]] = [:]
    /// The global options, and `--help` (which `help` does not list: it is `help` itself).
    var globalOptions: [String: Bool] = ["--help": false]

    /// Runs `archivist help` and `archivist help COMMAND` for every command it lists.
    init(sandbox: TemporaryFolder) throws {
        let overview = try sandbox.run(["help"])
        try #require(overview.status == 0, "archivist help failed: \(overview)")
        for line in Self.section("commands:", of: overview.stdoutText) {
            if let name = line.split(separator: " ").first { commands.append(String(name)) }
        }
        try #require(!commands.isEmpty, "archivist help lists no commands: \(overview)")
        for line in Self.section("global options:", of: overview.stdoutText) {
            if let (name, takesValue) = Self.option(line) { globalOptions[name] = takesValue }
        }
        for command in commands {
            let result = try sandbox.run(["help", command])
            try #require(result.status == 0, "archivist help \(command) failed: \(result)")
            let text = result.stdoutText
            let first = text.prefix { $0 != "\n" }
            try #require(first.hasPrefix("usage: archivist "), "archivist help \(command) starts with '\(first)'")
            usage[command] = String(first.dropFirst("usage: archivist ".count))
            var known: [String: Bool] = [:]
            for line in Self.section("options:", of: text) {
                if let (name, takesValue) = Self.option(line) { known[name] = takesValue }
            }
            // An option the usage line shows (`remove [--where FILTER] ...`) is known too.
            let words = first.split(whereSeparator: { " []|".contains($0) }).map(String.init)
            for (index, word) in words.enumerated() where word.hasPrefix("--") && known[word] == nil {
                let next = index + 1 < words.count ? words[index + 1] : ""
                known[word] = !next.isEmpty && !next.hasPrefix("-") && next.uppercased() == next
            }
            options[command] = known
        }
    }

    /// The lines after a line that is `title`, up to the next empty line.
    static func section(_ title: String, of text: String) -> [String] {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: title) else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    /// An option line of help (`  --limit N       show at most N values`): the option and whether
    /// it takes a value.
    static func option(_ line: String) -> (String, Bool)? {
        let text = line.drop { $0 == " " }
        guard text.hasPrefix("--") else { return nil }
        let label = text.range(of: "  ").map { text[..<$0.lowerBound] } ?? text
        let parts = label.split(separator: " ")
        return (String(parts[0]), parts.count > 1)
    }

    /// What is wrong with a command line shown in the docs (nothing: an empty list): a command
    /// `help` does not list, an option its help does not know, or a word the user's shell would
    /// not pass as the doc means it.
    func problems(of line: String) -> [String] {
        var (words, problems) = ShellLine.words(line)
        while let first = words.first, ShellLine.isAssignment(first) { words.removeFirst() }
        guard let program = words.first else { return problems }
        words.removeFirst()
        if program == "scripts/run" && words.isEmpty { return problems }
        var command: String?
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" { break }
            guard word.hasPrefix("--") else {
                if command == nil {
                    guard commands.contains(word) else {
                        problems.append("'\(word)' is not a command archivist help lists")
                        break
                    }
                    command = word
                }
                continue
            }
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            let inline = word.contains("=")
            if let takesValue = globalOptions[name] {
                if takesValue && !inline { index += 1 }
                continue
            }
            guard let command else {
                problems.append("'\(name)' is not a global option (archivist help)")
                continue
            }
            guard let takesValue = options[command]?[name] else {
                problems.append("'\(name)' is not an option of '\(command)' (archivist help \(command))")
                continue
            }
            if takesValue && !inline { index += 1 }
        }
        return problems
    }
}

/// A command line split as a POSIX shell splits it.
enum ShellLine {
    /// Whether a word sets an environment variable for the command (`NYT_API_KEY=...`).
    static func isAssignment(_ word: String) -> Bool {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return false }
        let name = word[..<equals]
        return name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) } && !name.first!.isNumber
    }

    /// The words of `line` as the shell passes them (quotes and backslashes removed), up to the end
    /// of the first command (`|`, `;`, `&`, a redirection, a `#` comment); and what the shell would
    /// do to a filter written unquoted: take `>=` or `<=` for a redirection, expand `~` to the home
    /// folder, refuse a parenthesis or mangle a brace of JSON.
    static func words(_ line: String) -> (words: [String], problems: [String]) {
        var words: [String] = []
        var problems: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        let characters = Array(line)
        var index = 0
        scan: while index < characters.count {
            let c = characters[index]
            let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
            index += 1
            if let open = quote {
                if c == open {
                    quote = nil
                } else if open == "\"", c == "\\", let next {
                    current.append(next)
                    index += 1
                } else {
                    current.append(c)
                }
                continue
            }
            switch c {
            case "'", "\"":
                quote = c
                inWord = true
            case "\\":
                if let next { current.append(next) }
                index += 1
                inWord = true
            case " ", "\t":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "#" where !inWord, "|", ";", "&":
                break scan
            case ">", "<":
                if next == "=" { problems.append("an unquoted '\(c)=' is a redirection to the shell: quote the filter") }
                break scan
            case "(", ")", "{", "}":
                problems.append("an unquoted '\(c)' is the shell's: quote the filter or JSON")
                current.append(c)
                inWord = true
            case "~" where !inWord && (next == nil || next == " " || next == "/"):
                problems.append("an unquoted '~' is the home folder to the shell: quote the filter")
                current.append(c)
                inWord = true
            default:
                current.append(c)
                inWord = true
            }
        }
        if quote != nil { problems.append("a quote is left open") }
        if inWord { words.append(current) }
        return (words, problems)
    }
}

/// What the docs tests read in a Markdown file: its code blocks and tables.
extension DocFile {
    /// The code blocks' lines with their line numbers (1-based) and the block's language.
    func codeLines() -> [(line: Int, text: String, language: String)] {
        var result: [(Int, String, String)] = []
        var language: String?
        for (number, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                language = language == nil ? String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces) : nil
                continue
            }
            if let language { result.append((number + 1, line, language)) }
        }
        return result
    }

    /// The command lines that run archivist (`archivist ...`, `NAME=value archivist ...`,
    /// `scripts/run ...`): every line of a `sh`, `bash` or `shell` block, and the lines of other
    /// blocks (`console` sessions, output) that start with the prompt `$ `; a line ending in `\`
    /// is joined with the next.
    func commandLines() -> [(line: Int, text: String)] {
        var result: [(Int, String)] = []
        var pending: (line: Int, text: String)?
        for (number, line, language) in codeLines() where !["swift", "sql", "json", "python"].contains(language) {
            var text = line.trimmingCharacters(in: .whitespaces)
            if let started = pending {
                pending = nil
                text = started.text + " " + text
                if text.hasSuffix("\\") {
                    pending = (started.line, String(text.dropLast()))
                } else {
                    result.append((started.line, text))
                }
                continue
            }
            if text.hasPrefix("$ ") {
                text = String(text.dropFirst(2))
            } else if !["sh", "bash", "shell"].contains(language) {
                continue
            }
            let program = ShellLine.words(text).words.first { !ShellLine.isAssignment($0) }
            guard let program, program == "archivist" || program.hasSuffix("/archivist") || program == "scripts/run" else {
                continue
            }
            if text.hasSuffix("\\") {
                pending = (number, String(text.dropLast()))
            } else {
                result.append((number, text))
            }
        }
        return result
    }

    /// The first code block in `language`: its first line's number and its lines.
    func firstBlock(language: String) -> (Int, [String])? {
        let block = codeLines().filter { $0.language == language }
        guard let first = block.first else { return nil }
        var lines: [String] = []
        var expected = first.line
        for entry in block where entry.line == expected {
            lines.append(entry.text)
            expected += 1
        }
        return (first.line, lines)
    }

    /// Lines without leading blank lines, trailing blanks and their common indentation.
    static func normalized(_ lines: [String]) -> [String] {
        let trimmed = lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
        let kept = Array(trimmed.drop { $0.isEmpty }.reversed().drop { $0.isEmpty }.reversed())
        let indent = kept.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return kept.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
    }

    /// A row of the commands table.
    struct CommandRow {
        var line: Int
        var name: String
        var usage: String
    }

    /// The rows of the table whose header is `| command | usage | what it does |`.
    func commandsTable() -> [CommandRow] {
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| command | usage |") }) else { return [] }
        var rows: [CommandRow] = []
        for number in (header + 2)..<lines.count {
            let line = lines[number]
            guard line.hasPrefix("|") else { break }
            let cells = Self.cells(line)
            guard cells.count >= 2 else { continue }
            rows.append(CommandRow(line: number + 1, name: Self.code(cells[0]), usage: Self.code(cells[1])))
        }
        return rows
    }

    /// A table row's cells, split at `|` but not at `\|` (which is a `|` in the cell).
    static func cells(_ line: String) -> [String] {
        var cells: [String] = []
        var current = ""
        var escaped = false
        for c in line.dropFirst() {
            if escaped {
                if c != "|" { current.append("\\") }
                current.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "|" {
                cells.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(c)
            }
        }
        return cells
    }

    /// A cell's text without the backticks of inline code.
    static func code(_ cell: String) -> String {
        cell.hasPrefix("`") && cell.hasSuffix("`") && cell.count >= 2 ? String(cell.dropFirst().dropLast()) : cell
    }
}
