/// A trend as a standalone SVG document, for papers and notebooks: a title, the value axis (in
/// percent, or counts) with ticks and grid lines, the time axis with labelled ticks, a legend
/// naming each series as typed, each series as polylines (broken at gaps, the spans with no
/// documents at all) with a circle per point carrying its figures in a tooltip, and a caption
/// with the query and the data folder's document count.
///
/// Each series is a `<g class="series" data-series="NAME">`; its points are the `points` of its
/// polylines (and, up to `pointLimit` spans, its circles).
struct TrendSVG: Sendable {
    /// The trend drawn.
    let trend: Trend
    /// Whether counts are plotted rather than shares.
    let plotsCounts: Bool
    /// The caption: the query, and the folder's document count.
    let caption: String

    /// The size of the drawing, in SVG units (pixels).
    static let width = 960.0
    static let height = 540.0
    /// The series' colours, in turn (the Tableau 10 palette).
    static let colours = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    ]
    /// Spans above which points get no circle (the polylines still hold them).
    static let pointLimit = 1000

    /// The SVG text.
    var text: String {
        let left = 80.0
        let right = Self.width - 30
        // The legend: entries in rows under the title.
        var legend: [(x: Double, row: Int, index: Int)] = []
        var x = left
        var row = 0
        for (index, series) in trend.series.enumerated() {
            let entry = 34 + 7.5 * Double(series.name.count) + 18
            if x > left && x + entry > right {
                x = left
                row += 1
            }
            legend.append((x, row, index))
            x += entry
        }
        let top = 62 + Double(row + 1) * 20
        let bottom = Self.height - 80
        var largest = 0.0
        for index in trend.series.indices {
            for span in trend.starts.indices { largest = max(largest, trend.value(index, at: span, counts: plotsCounts) ?? 0) }
        }
        let scale = ChartScale(largest: largest, intervals: 5, percent: !plotsCounts)
        let count = trend.starts.count
        func xOf(_ span: Int) -> Double {
            count > 1 ? left + Double(span) * (right - left) / Double(count - 1) : (left + right) / 2
        }
        func yOf(_ value: Double) -> Double { bottom - min(value, scale.maximum) / scale.maximum * (bottom - top) }

        let n = Self.number
        var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        svg +=
            Self.open(
                "svg",
                [
                    ("xmlns", "http://www.w3.org/2000/svg"), ("width", n(Self.width)), ("height", n(Self.height)),
                    ("viewBox", "0 0 \(n(Self.width)) \(n(Self.height))"), ("font-family", "Helvetica, Arial, sans-serif"),
                ]) + "\n"
        svg += "<title>" + Self.escaped(trend.title(counts: plotsCounts)) + "</title>\n"
        svg += Self.element("rect", [("width", "100%"), ("height", "100%"), ("fill", "white")]) + "\n"
        svg +=
            Self.element(
                "text", [("class", "title"), ("x", n(left)), ("y", "32"), ("font-size", "18"), ("fill", "#222")],
                text: Self.capitalized(trend.title(counts: plotsCounts))) + "\n"
        // Legend.
        svg += Self.open("g", [("class", "legend"), ("font-size", "13"), ("fill", "#222")]) + "\n"
        for entry in legend {
            let y = 56 + Double(entry.row) * 20
            let colour = Self.colours[entry.index % Self.colours.count]
            svg += Self.element(
                "line",
                [
                    ("x1", n(entry.x)), ("y1", n(y - 4)), ("x2", n(entry.x + 26)), ("y2", n(y - 4)), ("stroke", colour),
                    ("stroke-width", "3"),
                ])
            svg += Self.element("text", [("x", n(entry.x + 32)), ("y", n(y))], text: trend.series[entry.index].name) + "\n"
        }
        svg += "</g>\n"
        // Value axis: grid lines, ticks, labels.
        svg += Self.open("g", [("class", "y-axis"), ("font-size", "12"), ("fill", "#444"), ("text-anchor", "end")]) + "\n"
        for tick in scale.ticks {
            let y = n(yOf(tick))
            svg += Self.element("line", [("x1", n(left)), ("y1", y), ("x2", n(right)), ("y2", y), ("stroke", "#e4e4e4")])
            svg += Self.element("line", [("x1", n(left - 5)), ("y1", y), ("x2", n(left)), ("y2", y), ("stroke", "#444")])
            svg += Self.element("text", [("x", n(left - 8)), ("y", y), ("dy", "4")], text: scale.label(tick)) + "\n"
        }
        svg += "</g>\n"
        // Time axis.
        let labels = trend.labels
        let labelWidth = 7.5 * Double(labels.map(\.count).max() ?? 4) + 16
        let chosen = ChartScale.labelledSpans(trend.starts, bucket: trend.bucket, room: max(1, Int((right - left) / labelWidth)))
        svg += Self.open("g", [("class", "x-axis"), ("font-size", "12"), ("fill", "#444"), ("text-anchor", "middle")]) + "\n"
        svg += Self.element("line", [("x1", n(left)), ("y1", n(bottom)), ("x2", n(right)), ("y2", n(bottom)), ("stroke", "#444")])
        svg += Self.element("line", [("x1", n(left)), ("y1", n(top)), ("x2", n(left)), ("y2", n(bottom)), ("stroke", "#444")]) + "\n"
        for span in chosen {
            let x = n(xOf(span))
            svg += Self.element("line", [("x1", x), ("y1", n(bottom)), ("x2", x), ("y2", n(bottom + 5)), ("stroke", "#444")])
            svg += Self.element("text", [("x", x), ("y", n(bottom + 20))], text: labels[span]) + "\n"
        }
        svg += "</g>\n"
        // Series.
        for (index, series) in trend.series.enumerated() {
            let colour = Self.colours[index % Self.colours.count]
            svg += Self.open("g", [("class", "series"), ("data-series", series.name), ("stroke", colour), ("fill", colour)]) + "\n"
            var run: [(x: Double, y: Double)] = []
            func closeRun() {
                if run.count > 1 {
                    let points = run.map { n($0.x) + "," + n($0.y) }.joined(separator: " ")
                    svg += Self.element("polyline", [("fill", "none"), ("stroke-width", "2"), ("points", points)]) + "\n"
                } else if let point = run.first, count > Self.pointLimit {
                    svg += Self.element("circle", [("cx", n(point.x)), ("cy", n(point.y)), ("r", "2"), ("stroke", "none")]) + "\n"
                }
                run = []
            }
            for span in trend.starts.indices {
                guard let value = trend.value(index, at: span, counts: plotsCounts) else {
                    closeRun()
                    continue
                }
                run.append((xOf(span), yOf(value)))
            }
            closeRun()
            if count <= Self.pointLimit {
                for span in trend.starts.indices {
                    guard let value = trend.value(index, at: span, counts: plotsCounts) else { continue }
                    let figures =
                        "\(labels[span]): \(ChartScale.grouped(series.counts[span])) of \(ChartScale.grouped(trend.totals[span]))"
                        + (trend.share(index, at: span).map { ", " + ChartScale.decimal($0 * 100, decimals: 2) + "%" } ?? "")
                    svg += Self.open("circle", [("cx", n(xOf(span))), ("cy", n(yOf(value))), ("r", "2.5"), ("stroke", "none")])
                    svg += Self.element("title", [], text: figures) + "</circle>\n"
                }
            }
            svg += "</g>\n"
        }
        if trend.hasGaps {
            svg +=
                Self.element(
                    "text",
                    [
                        ("class", "note"), ("x", n(right)), ("y", n(bottom + 40)), ("font-size", "11"), ("fill", "#666"),
                        ("text-anchor", "end"),
                    ],
                    text: "Breaks in a line: spans with no articles at all") + "\n"
        }
        svg +=
            Self.element(
                "text", [("class", "caption"), ("x", n(left)), ("y", n(Self.height - 16)), ("font-size", "11"), ("fill", "#666")],
                text: caption) + "\n"
        svg += "</svg>\n"
        return svg
    }

    /// A start tag: `<g class="series">`.
    static func open(_ name: String, _ attributes: [(String, String)]) -> String {
        "<" + name + attributes.map { " \($0.0)=\"\(escaped($0.1))\"" }.joined() + ">"
    }

    /// An element with its attributes and text (escaped), or empty: `<line x1="80.0"/>`.
    static func element(_ name: String, _ attributes: [(String, String)], text: String? = nil) -> String {
        guard let text else { return "<" + name + attributes.map { " \($0.0)=\"\(escaped($0.1))\"" }.joined() + "/>" }
        return open(name, attributes) + escaped(text) + "</" + name + ">"
    }

    /// A coordinate with one decimal: `123.5`.
    static func number(_ value: Double) -> String { ChartScale.decimal(value, decimals: 1) }

    /// `text` with its first letter in capitals.
    static func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    /// `text` safe inside XML text and attribute values (and without the control characters XML forbids).
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out += " "
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
