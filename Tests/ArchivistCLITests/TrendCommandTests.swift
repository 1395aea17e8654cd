import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `trend` end to end through the built binary, on a generated folder of 2013 to 2020 with no
/// article at all in 2016 (a gap).
@Suite("archivist trend")
struct TrendCommandTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    /// The documents, one a year picked out as `_id` for a series that is zero in every other year.
    static let documents: [JSONValue] = ArticleGenerator.corpus(count: 600, seed: 71, from: "2013-01-01", to: "2020-12-31")

    /// The series every test charts, as one word each (as a user's shell passes them).
    static let series = [
        "election", #""new york""#, "section_name = Sports", #"{"section_name": "World"}"#,
        "_id = \(documents[0]["_id"]!.stringValue!)",
    ]

    /// Imports the documents, then removes those of 2016.
    func seed(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = sandbox.root + "/articles.jsonl"
        try sandbox.write(Self.documents.map { JSONWriter.compactString($0) + "\n" }.joined(), to: file)
        let imported = try sandbox.run(["import", file])
        try #require(imported.status == 0, "import: \(imported)", sourceLocation: sourceLocation)
        let removed = try sandbox.run(["remove", "--where", "pub_date >= 2016-01-01 and pub_date < 2017-01-01"])
        try #require(removed.status == 0, "remove: \(removed)", sourceLocation: sourceLocation)
    }

    /// The filter of `series` restricted to one year, as a script line's `count` takes it.
    static func countLine(_ series: String?, year: Int, within: String? = nil) -> String {
        let range = "pub_date >= \(year)-01-01 and pub_date < \(year + 1)-01-01"
        var parts: [String] = []
        if let within { parts.append("(\(within))") }
        if let series {
            if series.hasPrefix("{") {
                let json =
                    "{\"$and\": [\(series), {\"pub_date\": {\"$gte\": \"\(year)-01-01\", \"$lt\": \"\(year + 1)-01-01\"}}]"
                    + (within.map { _ in "" } ?? "") + "}"
                precondition(within == nil, "a MongoDB series is checked without --within")
                return "count '\(json)'"
            }
            parts.append("(\(series))")
        }
        parts.append(range)
        return "count '\(parts.joined(separator: " and "))'"
    }

    /// The integers a script of `count` lines prints, one per line.
    func counts(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [Int] {
        let result = try sandbox.run([], stdin: Array((lines.joined(separator: "\n") + "\n").utf8))
        try #require(result.status == 0 && result.stderrText.isEmpty, "script: \(result)", sourceLocation: sourceLocation)
        return try result.stdoutLines.map { try #require(Int($0), "not a count: \($0)", sourceLocation: sourceLocation) }
    }

    /// The rows of `trend ... --format jsonl`.
    func rows(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSONValue] {
        let result = try sandbox.run(["--format", "jsonl", "trend"] + arguments)
        try #require(result.status == 0 && result.stderrText.isEmpty, "trend: \(result)", sourceLocation: sourceLocation)
        return try result.jsonLines()
    }

    @Test("each share is the series' count divided by the span's total, as count gives them, year by year")
    func sharesAreCountsOverTotals() throws {
        try seed()
        let rows = try rows(Self.series)
        let years = Array(2013...2020)
        #expect(rows.count == years.count * Self.series.count)
        // One script of counts: each year's total, then each series in it.
        var script: [String] = []
        for year in years {
            script.append(Self.countLine(nil, year: year))
            for series in Self.series { script.append(Self.countLine(series, year: year)) }
        }
        let expected = try counts(script)
        var checked = 0
        for (y, year) in years.enumerated() {
            let total = expected[y * (Self.series.count + 1)]
            for (s, series) in Self.series.enumerated() {
                let row = rows[y * Self.series.count + s]
                let count = expected[y * (Self.series.count + 1) + 1 + s]
                #expect(row["bucket"] == .string(String(year)))
                #expect(row["series"] == .string(series), "the legend names each filter as typed")
                #expect(row["count"]?.intValue == count, "\(year) \(series)")
                #expect(row["total"]?.intValue == total, "\(year)")
                if total == 0 {
                    #expect(row["share"] == .null, "\(year) is a gap")
                } else {
                    let share = try #require(row["share"]?.doubleValue, "\(row)")
                    #expect(share == Double(count) / Double(total), "\(year) \(series)")
                    checked += 1
                }
            }
        }
        #expect(checked == 7 * Self.series.count, "every year but 2016 has articles")
        // The _id series is one article in one year: zero, not a gap, in the other years with articles.
        let single = rows.filter { $0["series"] == .string(Self.series[4]) }
        #expect(single.filter { $0["count"]?.intValue == 1 }.count == 1)
        #expect(single.filter { $0["share"] == .number("0.0") }.count == 6)
        #expect(single.filter { $0["share"] == .null }.map { $0["bucket"] } == [.string("2016")])
    }

    @Test("--within makes each share one of the documents matching it; --from and --to bound the spans, gaps beyond the data")
    func withinFromAndTo() throws {
        try seed()
        let within = "section_name = Sports"
        let rows = try rows(["election", "knicks", "--within", within, "--from", "2011", "--to", "2015-06"])
        #expect(
            rows.map { $0["bucket"]!.stringValue! } == ["2011", "2011", "2012", "2012", "2013", "2013", "2014", "2014", "2015", "2015"])
        let expected = try counts(
            (2013...2015).flatMap { year in
                [Self.countLine(nil, year: year, within: within), Self.countLine("election", year: year, within: within)]
            })
        for row in rows.prefix(4) { #expect(row["total"]?.intValue == 0 && row["share"] == .null, "\(row)") }
        for (index, year) in [2013, 2014].enumerated() {
            let row = rows[4 + index * 2]
            #expect(row["total"]?.intValue == expected[index * 2], "\(year)")
            #expect(row["count"]?.intValue == expected[index * 2 + 1], "\(year)")
        }
        // 2015 counts only to the end of June.
        let june = try counts([
            "count 'section_name = Sports and pub_date >= 2015-01-01 and pub_date < 2015-07-01'"
        ])
        #expect(rows[8]["total"]?.intValue == june[0])
        #expect(june[0] < expected[4])
    }

    @Test("csv rows are bucket,series,count,total,share, a gap's share empty; monthly buckets are named YYYY-MM")
    func csvRows() throws {
        try seed()
        let result = try sandbox.run(["--format", "csv", "trend", "election", "--by", "month", "--from", "2016-11", "--to", "2017-01"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.first == "bucket,series,count,total,share")
        #expect(lines.count == 4)
        #expect(lines[1].hasPrefix("2016-11,election,0,0,") && lines[1].hasSuffix(","), "\(lines[1])")
        #expect(lines[3].hasPrefix("2017-01,election,"))
    }

    @Test("--plot writes a standalone SVG that parses as XML and holds every series' points")
    func svgPlot() throws {
        try seed()
        let path = sandbox.root + "/trend.svg"
        let result = try sandbox.run(["trend"] + Self.series + ["--plot", path])
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
        let bytes = try #require(sandbox.contents(path))
        let svg = try SVGReader(Data(bytes))
        #expect(svg.root == "svg")
        #expect(svg.texts.contains("Share of all articles per year"), "\(svg.texts)")
        for label in ["2014", "2018", "2020"] { #expect(svg.texts.contains(label), "the time axis labels \(label)") }
        #expect(svg.texts.contains { $0.hasSuffix("%") }, "the value axis is in percent")
        let caption = try #require(svg.texts.first { $0.hasPrefix("archivist trend ") })
        let total = try counts(["count"])[0]
        #expect(caption.contains("\(total) documents in \(sandbox.data)"), "\(caption)")
        #expect(caption.contains("'section_name = Sports'"), "\(caption)")
        #expect(svg.series.map(\.name) == Self.series, "a group per series, named as typed")
        for series in svg.series {
            // Seven years with articles: two polylines (broken at 2016), seven circles.
            #expect(series.polylines == [3, 4], "\(series.name)")
            #expect(series.circles == 7, "\(series.name)")
            #expect(svg.texts.contains(series.name), "the legend names \(series.name)")
        }
        // --counts: the same points, the axis in counts.
        let counted = try sandbox.run(["trend", "election", "--counts", "--plot", path])
        #expect(counted.status == 0)
        let plain = try SVGReader(Data(try #require(sandbox.contents(path))))
        #expect(plain.texts.contains("Articles per year"))
        #expect(!plain.texts.contains { $0.hasSuffix("%") && $0.count < 8 })
    }

    @Test("--plot goes through FileDestination: a folder or a missing folder is a one-line error, /dev/null is written in place")
    func plotDestinations() throws {
        try seed()
        let folder = try sandbox.run(["trend", "election", "--plot", sandbox.root])
        #expect(folder.status == 1 && folder.stderrLines == ["error: trend: \(sandbox.root): is a folder, not a file"], "\(folder)")
        let missing = try sandbox.run(["trend", "election", "--plot", sandbox.root + "/no/such/trend.svg"])
        #expect(missing.status == 1 && missing.stderrLines.count == 1, "\(missing)")
        let device = try sandbox.run(["trend", "election", "--plot", "/dev/null"])
        #expect(device.status == 0, "\(device)")
        #expect(fileFacts("/dev/null") != nil)
    }

    @Test(
        "bad input is a one-line error naming what was wrong",
        arguments: [
            (["election", "--by", "decade"], 64, "error: trend: --by takes year, month, week or day, not 'decade'"),
            (["election", "--from", "2019-13"], 64, "error: trend: --from takes a date (YYYY, YYYY-MM or YYYY-MM-DD), not '2019-13'"),
            (["election", "--to", "2019-02-30"], 64, "error: trend: --to takes a date (YYYY, YYYY-MM or YYYY-MM-DD), not '2019-02-30'"),
            (["election", "--from", "19"], 64, "error: trend: --from takes a date (YYYY, YYYY-MM or YYYY-MM-DD), not '19'"),
            (["election", "--from", "2020", "--to", "2019"], 64, "error: trend: --from 2020 is after --to 2019"),
            (["election", ""], 64, "error: trend: series 2 is empty; give each series as one word, quoted when it has spaces"),
            (["election", "pub_date >"], 1, "error: trend: series 2 'pub_date >': filter: column 11: expected a value after '>'"),
            (
                ["election", "--within", "section_name ="], 1,
                "error: trend: --within 'section_name =': filter: column 15: expected a value after '='"
            ),
            (
                ["election", "--by", "day", "--from", "1000", "--to", "2020"], 64,
                "error: trend: more than 100,000 spans of a day; choose a longer --by or fewer dates"
            ),
            (["election", "--bogus"], 64, "error: trend: unknown option '--bogus'; usage: "),
            ([], 64, "error: trend: missing arguments; usage: "),
        ])
    func badInput(arguments: [String], status: Int32, message: String) throws {
        let result = try sandbox.run(["trend"] + arguments)
        #expect(result.status == status, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderrText.hasPrefix(message), "\(result.stderrText)")
        #expect(result.stdout.isEmpty)
    }

    @Test("in table format off a terminal, the chart is plain characters without colour, fitting COLUMNS and LINES")
    func plainChartOffATerminal() throws {
        try seed()
        for width in [40, 80, 200] {
            let result = try sandbox.run(
                ["--format", "table", "trend", "election", "knicks"], environment: ["COLUMNS": String(width), "LINES": "20"])
            #expect(result.status == 0, "\(result)")
            let lines = result.stdoutLines
            #expect(lines.first == "share of all articles per year")
            #expect(lines.count <= 19)
            #expect(result.stdoutText.unicodeScalars.allSatisfy { $0.isASCII }, "\(result.stdoutText)")
            for line in lines { #expect(line.count <= width, "\(width): \(line)") }
            #expect(lines.contains { $0.contains("** election") && $0.contains("++ knicks") })
            #expect(lines.contains("blank: spans with no articles at all"))
        }
    }

    @Test("an empty folder has nothing to chart; its rows are none")
    func emptyFolder() throws {
        let table = try sandbox.run(["--format", "table", "trend", "election"])
        #expect(table.status == 0 && table.stdoutLines == ["no documents with a pub_date"], "\(table)")
        let rows = try sandbox.run(["trend", "election"])
        #expect(rows.status == 0 && rows.stdout.isEmpty, "\(rows)")
    }
}

/// What the tests read from an SVG: the root, every text, and each series' group.
final class SVGReader: NSObject, XMLParserDelegate {
    struct Series {
        var name: String
        var polylines: [Int] = []
        var circles = 0
    }

    private(set) var root: String?
    private(set) var texts: [String] = []
    private(set) var series: [Series] = []
    private var inSeries = false
    private var depth = 0
    private var text = ""
    private var failure: Error?

    init(_ data: Data) throws {
        super.init()
        let parser = XMLParser(data: data)
        parser.delegate = self
        guard parser.parse() else {
            throw parser.parserError ?? failure ?? CocoaError(.propertyListReadCorrupt)
        }
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if root == nil { root = name }
        depth += 1
        text = ""
        if name == "g", attributes["class"] == "series" {
            series.append(Series(name: attributes["data-series"] ?? ""))
            inSeries = true
        } else if inSeries, name == "polyline" {
            series[series.count - 1].polylines.append(attributes["points"]?.split(separator: " ").count ?? 0)
        } else if inSeries, name == "circle" {
            series[series.count - 1].circles += 1
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" { texts.append(text) }
        if name == "g" { inSeries = false }
        text = ""
        depth -= 1
    }
}

extension JSONValue {
    /// A number's value as an integer, nil for anything else.
    fileprivate var intValue: Int? {
        guard case .number(let literal) = self else { return nil }
        return Int(literal)
    }

    /// A number's value, nil for anything else.
    fileprivate var doubleValue: Double? {
        guard case .number(let literal) = self else { return nil }
        return Double(literal)
    }
}
