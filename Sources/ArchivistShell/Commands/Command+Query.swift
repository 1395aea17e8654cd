import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import Foundation

extension Command {
    static let filterHelp = """
        FILTER is either a MongoDB filter document ('{"section_name": "Sports", "pub_date": {"$gte": "2015-07-01"}}')
        or the infix language: section_name = Sports and pub_date >= 2015-07-01 and not headline.main ~ preview.
        Operators: = != < <= > >= ~ (substring, any case and accents), in (a, b), not in (a, b), exists,
        missing; and, or, not, parentheses. Words that no operator follows, or a quoted phrase, are a
        full-text search over headline, abstract, snippet, lead paragraph and keywords (climate change,
        "climate change"). Dates compare as instants in any ISO-8601 spelling, and a date alone means its
        whole UTC day. FILTER is read as typed, quotes included: section_name = "New York" needs no other
        quoting, at the prompt, in a script or on the command line.
        """

    /// `find`'s options.
    enum FindOption: CommandOptions {
        case sort, skip, limit, fields

        var declaration: Option {
            switch self {
            case .sort: Option("--sort", value: "FIELD[:desc]", help: "order by FIELD (repeatable; :desc for largest first)")
            case .skip: Option("--skip", value: "N", help: "pass over the first N matches")
            case .limit: Option("--limit", value: "N", help: "return at most N documents")
            case .fields: .fields
            }
        }
    }

    /// `find [FILTER] [--sort FIELD[:desc]]... [--skip N] [--limit N] [--fields a,b.c]`.
    public static let find = Command(
        name: "find", synopsis: "[FILTER]", summary: "List the documents matching a filter",
        discussion: filterHelp + """


            Sorted by --sort keys (several allowed, ties by ID), else by relevance for a text search, else
            by ID. Table format shows ID, date, section and headline (or --fields); jsonl prints each
            whole document (or the --fields) on a line; json an array; csv a header and a row per document.
            Answered from the index (the segments and the log's tail); a filter on a field outside it reads
            the documents and says so on stderr ('archivist index add FIELD' adds it).
            """,
        examples: [
            "find section_name = Sports and pub_date >= 2015-07-01 --sort pub_date:desc --limit 10",
            #"find "climate change" --fields _id,headline.main"#,
            #"find '{"news_desk": {"$in": ["Sports", "Foreign"]}}' --format csv"#,
        ],
        options: FindOption.self,
        arity: 0...Int.max, isInterruptible: true
    ) { invocation, shell in
        let filter = try parseFilter(invocation.positionalWords)
        var sort: [SortKey] = []
        for text in invocation.values(.sort) {
            guard let key = SortKey(parsing: text) else {
                throw invocation.usageError("\(FindOption.sort.name) takes FIELD or FIELD:desc, not '\(text)'")
            }
            sort.append(key)
        }
        let skip = try invocation.count(.skip) ?? 0
        let limit = try invocation.count(.limit)
        let fields = fieldList(invocation.value(.fields))
        if let copy = try shell.copy() {
            let result = try copy.find(Query(filter: filter, sort: sort, skip: skip, limit: limit))
            try printDocuments(result.ids, fields: fields, copy: copy, shell: shell)
            return
        }
        let store = try shell.store()
        // Only the window is shown: the matches after it need not be counted.
        let result = try store.find(Query(filter: filter, sort: sort, skip: skip, limit: limit, countsTotal: false))
        noteScan(result.scannedPaths, shell: shell)
        try printDocuments(result.ids, fields: fields, store: store, shell: shell)
    }

    /// `count [FILTER]`: a bare integer.
    public static let count = Command(
        name: "count", synopsis: "[FILTER]", summary: "Count the documents matching a filter (a bare integer)",
        discussion: filterHelp,
        examples: ["count", "count section_name = Sports", #"count section_name = "New York""#, "count knicks lopez"],
        arity: 0...Int.max
    ) { invocation, shell in
        let filter = try parseFilter(invocation.positionalWords)
        if let copy = try shell.copy() {
            shell.output.line(String(try copy.count(matching: filter)))
            return
        }
        let (count, scanned) = try shell.store().count(matching: filter)
        noteScan(scanned, shell: shell)
        shell.output.line(String(count))
    }

    /// `facet`'s options.
    enum FacetOption: CommandOptions {
        case limit, by

        var declaration: Option {
            switch self {
            case .limit: Option("--limit", value: "N", help: "show at most N values (of a timeline: the last N spans)")
            case .by: Option("--by", value: "DATE:SPAN", help: "the top values in each span of a date (pub_date:year), 3 unless --limit")
            }
        }
    }

    /// `facet FIELD[:year|:month|:week|:day] [FILTER] [--limit N]`: documents per value, or per
    /// span of time.
    public static let facet = Command(
        name: "facet", synopsis: "FIELD[:year|:month|:week|:day] [FILTER]",
        summary: "Count documents per value of a field (most frequent first), or per year, month, week or day",
        discussion: """
            An array field counts each distinct element once per document. In table format each value gets a bar.

            A date field with :year, :month, :week or :day is a timeline: documents per span of time (UTC),
            oldest first, every span from the first to the last shown (empty ones too), each with a bar;
            weeks run Monday to Sunday and are named by their Monday. In csv, json and jsonl the rows are
            bucket and count, for plotting elsewhere. With --by DATE:SPAN, FIELD's most frequent values in
            each span: a row per span in table format, bucket, value and count rows otherwise.


            """ + filterHelp,
        examples: [
            "facet section_name", "facet keywords.value pub_date >= 2019-01-01 --limit 20", #"facet pub_date:year "climate change""#,
            "facet pub_date:month section_name = Sports and pub_date >= 2019-01-01",
            "facet section_name --by pub_date:year --limit 3",
        ],
        options: FacetOption.self,
        arity: 1...Int.max
    ) { invocation, shell in
        let path = invocation.positionals[0]
        let filter = try parseFilter(Array(invocation.positionalWords.dropFirst()))
        if let by = invocation.value(.by) {
            guard let colon = by.lastIndex(of: ":"), let bucket = TimeBucket(rawValue: String(by[by.index(after: colon)...])) else {
                throw invocation.usageError("\(FacetOption.by.name) takes DATE:SPAN, a span being year, month, week or day, not '\(by)'")
            }
            try printTopValues(
                path, by: String(by[..<colon]), bucket, matching: filter, limit: try invocation.count(.limit) ?? 3, shell: shell)
            return
        }
        if let colon = path.lastIndex(of: ":"), let bucket = TimeBucket(rawValue: String(path[path.index(after: colon)...])) {
            try printTimeline(String(path[..<colon]), by: bucket, matching: filter, limit: try invocation.count(.limit), shell: shell)
            return
        }
        let limit = try invocation.count(.limit)
        let values: [(value: JSONValue, count: Int)]
        if let copy = try shell.copy() {
            values = try copy.facet(path, matching: filter, limit: limit)
        } else {
            let (found, scanned) = try shell.store().facet(path, matching: filter, limit: limit)
            noteScan(scanned, shell: shell)
            values = found
        }
        if shell.effectiveFormat == .table {
            let labels = values.map { Renderer.plainText($0.value) }
            let labelWidth = min(40, labels.map(DisplayWidth.of).max() ?? 0)
            let countWidth = values.map { String($0.count).count }.max() ?? 1
            let most = values.first?.count ?? 1
            let barWidth = max(10, Renderer.terminalWidth() - labelWidth - countWidth - 4)
            for (label, item) in zip(labels, values) {
                let clipped = DisplayWidth.clipped(label, to: labelWidth)
                let bar = String(repeating: "█", count: max(1, item.count * barWidth / max(most, 1)))
                shell.output.line(
                    DisplayWidth.padded(clipped, to: labelWidth) + "  "
                        + String(repeating: " ", count: countWidth - String(item.count).count) + String(item.count) + "  " + bar)
            }
            return
        }
        shell.renderer.render(list: values.map { Record([("value", $0.value), ("count", .int($0.count))]) }, to: shell.output)
    }

    /// Prints a timeline: a row per bucket, oldest first (the last `limit` when given), with a
    /// bar in table format; `bucket,count` records otherwise.
    static func printTimeline(_ path: String, by bucket: TimeBucket, matching filter: Filter, limit: Int?, shell: Shell) throws {
        let all: [(start: Int64, count: Int)]
        if let copy = try shell.copy() {
            all = try copy.timeline(path, by: bucket, matching: filter)
        } else {
            let (found, scanned) = try shell.store().timeline(path, by: bucket, matching: filter)
            noteScan(scanned, shell: shell)
            all = found
        }
        let buckets = limit.map { Array(all.suffix($0)) } ?? all
        let labels = buckets.map { bucket.label($0.start) }
        guard shell.effectiveFormat == .table else {
            shell.renderer.render(
                list: zip(labels, buckets).map { Record([("bucket", .string($0)), ("count", .int($1.count))]) }, to: shell.output)
            return
        }
        let labelWidth = labels.map(DisplayWidth.of).max() ?? 0
        let countWidth = buckets.map { String($0.count).count }.max() ?? 1
        let most = max(1, buckets.map(\.count).max() ?? 1)
        let barWidth = max(10, min(60, Renderer.terminalWidth() - labelWidth - countWidth - 4))
        for (label, item) in zip(labels, buckets) {
            let bar = item.count == 0 ? "" : String(repeating: "█", count: max(1, item.count * barWidth / most))
            let count = String(repeating: " ", count: countWidth - String(item.count).count) + String(item.count)
            shell.output.line(DisplayWidth.padded(label, to: labelWidth) + "  " + count + (bar.isEmpty ? "" : "  " + bar))
        }
    }

    /// Prints the `limit` most frequent values of `path` in each span of the date at `datePath`
    /// (the spans of its timeline, oldest first): in table format a row per span
    /// (`2019  Sports 120 · Opinion 98`), else a `bucket,value,count` record per value.
    static func printTopValues(
        _ path: String, by datePath: String, _ bucket: TimeBucket, matching filter: Filter, limit: Int, shell: Shell
    ) throws {
        let copy = try shell.copy()
        let store = copy == nil ? try shell.store() : nil
        let spans: [(start: Int64, count: Int)]
        if let copy {
            spans = try copy.timeline(datePath, by: bucket, matching: filter)
        } else {
            let (found, scanned) = try store!.timeline(datePath, by: bucket, matching: filter)
            noteScan(scanned, shell: shell)
            spans = found
        }
        var rows: [(label: String, values: [(value: JSONValue, count: Int)])] = []
        for span in spans {
            let end = bucket.next(after: span.start)
            let inSpan = Filter.field(
                datePath,
                [.gte(.string(Timestamp(milliseconds: span.start).description)), .lt(.string(Timestamp(milliseconds: end).description))])
            let values =
                span.count == 0
                ? []
                : try copy?.facet(path, matching: .and([filter, inSpan]), limit: limit)
                    ?? store!.facet(path, matching: .and([filter, inSpan]), limit: limit).values
            rows.append((bucket.label(span.start), values))
        }
        guard shell.effectiveFormat == .table else {
            var records: [Record] = []
            for row in rows {
                for item in row.values {
                    records.append(Record([("bucket", .string(row.label)), ("value", item.value), ("count", .int(item.count))]))
                }
            }
            shell.renderer.render(list: records, to: shell.output)
            return
        }
        let labelWidth = rows.map { DisplayWidth.of($0.label) }.max() ?? 0
        for row in rows {
            let cells = row.values.map { Renderer.plainText($0.value) + " " + String($0.count) }
            if cells.isEmpty {
                shell.output.line(row.label)
                continue
            }
            shell.output.line(
                DisplayWidth.clipped(
                    DisplayWidth.padded(row.label, to: labelWidth) + "  " + cells.joined(separator: " · "), to: Renderer.terminalWidth()))
        }
    }

    /// Reads the filter words of a command line in either syntax, as typed (`FilterWords`).
    static func parseFilter(_ words: [ShellWord]) throws -> Filter {
        try FilterParser.parseAny(FilterWords.text(words))
    }

    /// The paths of a `--fields a,b.c` option (blanks around a comma ignored), nil without it.
    static func fieldList(_ text: String?) -> [String]? {
        text.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }
}
