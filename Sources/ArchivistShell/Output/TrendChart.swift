/// A trend drawn for a terminal: every series on one plot as a line, a value axis in percent (or
/// counts), a time axis with labels that do not collide, a legend naming each series as typed.
///
/// In full style the lines are Unicode braille (2 × 4 dots a cell), each series in its own
/// colour; in plain style (`NO_COLOR`, `TERM=dumb`, not a terminal) they are ASCII markers, one
/// per series (`*`, `+`, `o`...), and the axes ASCII too. The chart fits `width` columns and
/// `height` lines (the line the prompt comes back on included), down to 40 × 12. Spans with no
/// documents at all are left blank (gaps); spans with documents but no matches sit on the zero
/// line.
struct TrendChart: Sendable {
    /// The trend drawn.
    let trend: Trend
    /// Whether counts are plotted rather than shares.
    let plotsCounts: Bool
    /// The columns the chart may take.
    let width: Int
    /// The lines the chart may take, the prompt's line included.
    let height: Int
    /// Whether lines are braille in colour (else ASCII markers, no colour).
    let isFancy: Bool

    /// The colours of the series in full style (ANSI: cyan, magenta, yellow, green, red, blue,
    /// bright cyan, bright magenta), in turn.
    static let colours = ["36", "35", "33", "32", "31", "34", "96", "95"]
    /// The markers of the series in plain style, in turn.
    static let markers: [Character] = ["*", "+", "o", "x", "#", "@", "%", "&", "=", "~"]
    /// Plot rows at most: taller charts are no easier to read.
    static let tallest = 24

    /// The escape sequence that colours series `index`.
    static func colour(_ index: Int) -> String { "\u{1B}[" + colours[index % colours.count] + "m" }
    /// The escape sequence that ends a colour.
    static let reset = "\u{1B}[0m"

    /// The chart's lines, without line ends.
    func lines() -> [String] {
        let width = max(20, self.width)
        let legend = legendLines(width: width)
        let note = trend.hasGaps ? ["blank: spans with no articles at all"] : []
        let overhead = 1 + 2 + legend.count + note.count + 1
        let rows = max(3, min(Self.tallest, height - overhead))
        var largest = 0.0
        for index in trend.series.indices {
            for span in trend.starts.indices { largest = max(largest, trend.value(index, at: span, counts: plotsCounts) ?? 0) }
        }
        let scale = ChartScale(largest: largest, intervals: max(1, min(5, rows / 2)), percent: !plotsCounts)
        // The value labels, by the row they sit on (the top one wins a shared row).
        var rowLabels: [Int: String] = [:]
        for tick in scale.ticks.reversed() {
            let row = Int(((1 - tick / scale.maximum) * Double(rows - 1)).rounded())
            if rowLabels[row] == nil { rowLabels[row] = scale.label(tick) }
        }
        let labelWidth = rowLabels.values.map(DisplayWidth.of).max() ?? 1
        let gutter = labelWidth + 2
        let columns = max(10, width - gutter - 1)
        var canvas = ChartCanvas(columns: columns, rows: rows, braille: isFancy)
        let xs = trend.starts.indices.map { dotX($0, canvasWidth: canvas.width) }
        for index in trend.series.indices {
            let points: [(x: Int, y: Int)?] = trend.starts.indices.map { span in
                trend.value(index, at: span, counts: plotsCounts).map { value in
                    (xs[span], (canvas.height - 1) - Int((min(value, scale.maximum) / scale.maximum * Double(canvas.height - 1)).rounded()))
                }
            }
            for (span, point) in points.enumerated() {
                guard let point else { continue }
                if span + 1 < points.count, let next = points[span + 1] {
                    canvas.line(from: point, to: next, series: index)
                } else {
                    canvas.set(x: point.x, y: point.y, series: index)
                }
            }
        }
        var out = [DisplayWidth.clipped(trend.title(counts: plotsCounts), to: width)]
        for row in 0..<rows {
            let label = rowLabels[row].map { String(repeating: " ", count: labelWidth - DisplayWidth.of($0)) + $0 }
            let axis: String = rowLabels[row] == nil ? (isFancy ? "│" : "|") : (isFancy ? "┤" : "+")
            out.append((label ?? String(repeating: " ", count: labelWidth)) + " " + axis + plotRow(row, of: canvas))
        }
        out += timeAxis(columns: columns, gutter: gutter, width: width, cellOf: { xs[$0] / (isFancy ? 2 : 1) })
        return out + legend + note
    }

    /// The dot column of span `span` on a canvas `canvasWidth` dots wide: the first span at the
    /// left edge, the last at the right, one span in the middle.
    func dotX(_ span: Int, canvasWidth: Int) -> Int {
        let count = trend.starts.count
        guard count > 1 else { return canvasWidth / 2 }
        return Int((Double(span) * Double(canvasWidth - 1) / Double(count - 1)).rounded())
    }

    /// One row of the plot: braille characters or markers, coloured by series in full style.
    func plotRow(_ row: Int, of canvas: ChartCanvas) -> String {
        var text = ""
        var open: Int?
        for column in 0..<canvas.columns {
            guard let cell = canvas.cell(column: column, row: row) else {
                if open != nil {
                    text += Self.reset
                    open = nil
                }
                text.append(" ")
                continue
            }
            guard isFancy, let character = cell.character else {
                text.append(Self.markers[cell.series % Self.markers.count])
                continue
            }
            if open != cell.series {
                if open != nil { text += Self.reset }
                text += Self.colour(cell.series)
                open = cell.series
            }
            text.append(character)
        }
        if open != nil { text += Self.reset }
        // No trailing blanks: a copied chart has none.
        while text.last == " " { text.removeLast() }
        return text
    }

    /// The time axis: a rule with a tick under each labelled span, then the labels, each
    /// starting under its tick (the last pulled left to fit), none overlapping.
    func timeAxis(columns: Int, gutter: Int, width: Int, cellOf: (Int) -> Int) -> [String] {
        let labels = trend.labels
        let labelWidth = labels.map(DisplayWidth.of).max() ?? 4
        let chosen = ChartScale.labelledSpans(trend.starts, bucket: trend.bucket, room: max(1, columns / (labelWidth + 2)))
        var rule = [Character](repeating: isFancy ? "─" : "-", count: columns)
        var text = [Character](repeating: " ", count: width)
        var end = -1
        for span in chosen {
            let column = min(columns - 1, cellOf(span))
            let label = Array(labels[span])
            var start = gutter + column
            if start + label.count > width { start = width - label.count }
            guard start > end, start >= 0 else { continue }
            rule[column] = isFancy ? "┬" : "+"
            for (offset, character) in label.enumerated() { text[start + offset] = character }
            end = start + label.count
        }
        let corner = isFancy ? "└" : "+"
        var labelLine = String(text)
        while labelLine.last == " " { labelLine.removeLast() }
        return [String(repeating: " ", count: gutter - 1) + corner + String(rule), labelLine]
    }

    /// The legend: each series' colour or marker and its name as typed, as many to a line as fit.
    func legendLines(width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        var used = 0
        for (index, series) in trend.series.enumerated() {
            let name = DisplayWidth.clipped(series.name, to: max(4, width - 4))
            let key =
                isFancy ? Self.colour(index) + "━━" + Self.reset : String(repeating: Self.markers[index % Self.markers.count], count: 2)
            let shown = 3 + DisplayWidth.of(name)
            if used > 0 && used + 3 + shown > width {
                lines.append(line)
                line = ""
                used = 0
            }
            if used > 0 {
                line += "   "
                used += 3
            }
            line += key + " " + name
            used += shown
        }
        if used > 0 { lines.append(line) }
        return lines
    }
}
