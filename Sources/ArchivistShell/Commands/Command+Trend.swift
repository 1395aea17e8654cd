import ArchivistBase
import ArchivistPostgres
import ArchivistStore

extension Command {
    /// `trend`'s options.
    enum TrendOption: CommandOptions {
        case by, from, to, within, counts, plot

        var declaration: Option {
            switch self {
            case .by: Option("--by", value: "SPAN", help: "the span of time: year (the default), month, week or day")
            case .from: Option("--from", value: "DATE", help: "the first span: YYYY, YYYY-MM or YYYY-MM-DD (UTC)")
            case .to: Option("--to", value: "DATE", help: "the last span: YYYY, YYYY-MM or YYYY-MM-DD (UTC), included")
            case .within: Option("--within", value: "FILTER", help: "shares of the documents matching FILTER, not of all")
            case .counts: Option("--counts", help: "plot counts rather than shares")
            case .plot: Option("--plot", value: "FILE.svg", help: "write the chart as a standalone SVG file instead")
            }
        }
    }

    /// The date a trend counts by.
    static let trendDate = "pub_date"
    /// Spans a trend may have at most (a day a span from 1851 to 2100 is 91,000).
    static let trendSpanLimit = 100_000

    /// `trend SERIES... [--by year|month|week|day] [--from D] [--to D] [--within FILTER] [--counts] [--plot FILE.svg]`.
    public static let trend = Command(
        name: "trend", synopsis: "SERIES...",
        summary: "Chart how much of the paper each filter was, year by year (or month, week, day)",
        discussion: """
            Each SERIES is one filter, one word of the command line: a word, a quoted phrase, or a
            quoted infix or MongoDB filter, as find takes it (inflation "climate change"
            'section_name = Sports'). For each span of pub_date (UTC), each series' count and its share
            of all the documents of that span, or of those matching --within. Answered from the index.

            On a terminal (table format), a line chart of every series on one plot: Unicode braille in a
            colour per series, a legend naming each filter as typed, the time axis, shares in percent
            (counts with --counts), fitting the terminal's width and height; plain characters and no
            colour with NO_COLOR, TERM=dumb, or --format table off a terminal. Spans with no documents
            at all are gaps in the lines; spans with documents but no matches are zero. In csv, json and
            jsonl (the default off a terminal, as for every command), a bucket, series, count, total,
            share record per span and series (share a fraction, null in a gap), for R and pandas. --plot FILE.svg writes a standalone SVG instead (title, axes,
            legend, the series as polylines, the query and the folder's document count in a caption),
            as export --to writes a file.
            """,
        examples: [
            #"trend inflation unemployment"#, #"trend "climate change" "global warming" --by month --from 2015"#,
            #"trend Knicks Yankees --within 'section_name = Sports' --counts"#,
            #"trend inflation unemployment --plot trend.svg"#, #"trend inflation --format csv"#,
        ],
        options: TrendOption.self,
        arity: 1...Int.max, isInterruptible: true
    ) { invocation, shell in
        let byText = invocation.value(.by) ?? "year"
        guard let bucket = TimeBucket(rawValue: byText) else {
            throw invocation.usageError("\(TrendOption.by.name) takes year, month, week or day, not '\(byText)'")
        }
        let from = try trendDate(.from, invocation)
        let to = try trendDate(.to, invocation)
        if let from, let to, from.start >= to.end {
            throw invocation.usageError(
                "\(TrendOption.from.name) \(invocation.value(.from)!) is after \(TrendOption.to.name) \(invocation.value(.to)!)")
        }
        var series: [(name: String, filter: Filter)] = []
        for (number, word) in invocation.positionalWords.enumerated() {
            let name = FilterWords.text([word])
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw invocation.usageError("series \(number + 1) is empty; give each series as one word, quoted when it has spaces")
            }
            do {
                series.append((name, try FilterParser.parseAny(name)))
            } catch {
                throw invocation.failure("series \(number + 1) '\(name)': \(Shell.message(for: error))")
            }
        }
        var within: (name: String, filter: Filter)?
        if let word = invocation.valueWord(.within) {
            let name = FilterWords.text([word])
            do {
                within = (name, try FilterParser.parseAny(name))
            } catch {
                throw invocation.failure("\(TrendOption.within.name) '\(name)': \(Shell.message(for: error))")
            }
        }
        let copy = try shell.copy()
        let store = copy == nil ? try shell.store() : nil
        // FILE first, as export --to: a folder or a missing folder fails before any work.
        let destination = try invocation.value(.plot).map { try ExportDestination(path: $0, shell: shell, for: invocation) }
        do {
            var base: [Filter] = within.map { [$0.filter] } ?? []
            var conditions: [Condition] = []
            if let from { conditions.append(.gte(.string(Timestamp(milliseconds: from.start).description))) }
            if let to { conditions.append(.lt(.string(Timestamp(milliseconds: to.end).description))) }
            if !conditions.isEmpty { base.append(.field(trendDate, conditions)) }
            let total: Filter = base.isEmpty ? .all : base.count == 1 ? base[0] : .and(base)
            let filters = [total] + series.map { base.isEmpty ? $0.filter : .and(base + [$0.filter]) }
            let found: [Int64]
            let counts: [[Int]]
            if let copy {
                (found, counts) = try copy.timelines(trendDate, by: bucket, matching: filters)
            } else {
                let scanned: [String]
                (found, counts, scanned) = try store!.timelines(trendDate, by: bucket, matching: filters)
                noteScan(scanned, shell: shell)
            }
            // The spans asked for (--from, --to), else those from the first document to the last.
            var starts: [Int64] = []
            if let first = from.map({ bucket.start(of: $0.start) }) ?? found.first,
                let last = to.map({ bucket.start(of: $0.end - 1) }) ?? found.last
            {
                var start = first
                while start <= last {
                    starts.append(start)
                    if starts.count > trendSpanLimit {
                        throw invocation.usageError(
                            "more than \(ChartScale.grouped(trendSpanLimit)) spans of a \(bucket.rawValue); choose a longer --by or fewer dates"
                        )
                    }
                    start = bucket.next(after: start)
                }
            }
            let position = Dictionary(uniqueKeysWithValues: found.enumerated().map { ($1, $0) })
            func aligned(_ values: [Int]) -> [Int] { starts.map { position[$0].map { values[$0] } ?? 0 } }
            let trend = Trend(
                bucket: bucket, starts: starts, totals: aligned(counts[0]),
                series: zip(series, counts.dropFirst()).map { Trend.Series(name: $0.name, counts: aligned($1)) },
                within: within?.name)
            if Interruption.isRequested { throw invocation.interrupted("interrupted") }
            if let destination {
                let caption =
                    "archivist "
                    + ([invocation.command] + invocation.positionalWords.map { shellQuoted(FilterWords.text([$0])) }).joined(separator: " ")
                    + trendOptionsText(invocation)
                    + " · \(Plural.count(try copy?.checkpoint.rows ?? store!.count, "document")) in \(copy?.display ?? shell.dataFolder)"
                destination.sink.write(TrendSVG(trend: trend, plotsCounts: invocation.isSet(.counts), caption: caption).text)
                try destination.commit(for: invocation)
                return
            }
            guard shell.effectiveFormat == .table else {
                shell.renderer.render(list: trend.records, to: shell.output)
                return
            }
            guard !starts.isEmpty else {
                shell.output.line("no documents with a \(trendDate)" + (within.map { " match \($0.name)" } ?? ""))
                return
            }
            let environment = shell.environment
            let isFancy =
                shell.output.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
                && environment["TERM"] != nil
            let chart = TrendChart(
                trend: trend, plotsCounts: invocation.isSet(.counts), width: Renderer.terminalWidth(),
                height: Renderer.terminalHeight(), isFancy: isFancy)
            for line in chart.lines() { shell.output.line(line) }
        } catch {
            destination?.abandon()
            throw error
        }
    }

    /// The instants a `--from` or `--to` date stands for: `YYYY` a year, `YYYY-MM` a month,
    /// `YYYY-MM-DD` a day (UTC; the end excluded); nil when the option is not given.
    static func trendDate(_ option: TrendOption, _ invocation: Invocation<TrendOption>) throws(ShellError) -> (start: Int64, end: Int64)? {
        guard let text = invocation.value(option) else { return nil }
        guard let interval = period(text) else {
            throw invocation.usageError("\(option.name) takes a date (YYYY, YYYY-MM or YYYY-MM-DD), not '\(text)'")
        }
        return interval
    }

    /// The UTC interval of `YYYY`, `YYYY-MM` or `YYYY-MM-DD` (the end excluded), nil for anything else.
    static func period(_ text: String) -> (start: Int64, end: Int64)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 }),
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else { return nil }
        let numbers = parts.compactMap { Int64($0) }
        let day: Int64 = 86_400_000
        switch numbers.count {
        case 1:
            return (
                ISODate.daysFromCivil(year: numbers[0], month: 1, day: 1) * day,
                ISODate.daysFromCivil(year: numbers[0] + 1, month: 1, day: 1) * day
            )
        case 2:
            guard (1...12).contains(numbers[1]) else { return nil }
            let start = ISODate.daysFromCivil(year: numbers[0], month: numbers[1], day: 1) * day
            return (start, TimeBucket.month.next(after: start))
        default:
            guard ISODate.isValid(year: numbers[0], month: numbers[1], day: numbers[2]) else { return nil }
            let start = ISODate.daysFromCivil(year: numbers[0], month: numbers[1], day: numbers[2]) * day
            return (start, start + day)
        }
    }

    /// The options of a trend as a caption shows them: ` --by month --within 'section_name = Sports'`.
    static func trendOptionsText(_ invocation: Invocation<TrendOption>) -> String {
        var text = ""
        for option in [TrendOption.by, .from, .to] {
            if let value = invocation.value(option) { text += " \(option.name) \(shellQuoted(value))" }
        }
        if let word = invocation.valueWord(.within) { text += " \(TrendOption.within.name) \(shellQuoted(FilterWords.text([word])))" }
        if invocation.isSet(.counts) { text += " \(TrendOption.counts.name)" }
        return text
    }

    /// A word as a POSIX shell would need it typed: bare when it is safe, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let safe = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.,:/@%+=".contains($0)) }
        if safe && !word.isEmpty { return word }
        return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
