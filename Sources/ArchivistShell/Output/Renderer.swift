import ArchivistBase
import ArchivistStore
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Prints records in each output format.
public struct Renderer: Sendable {
    /// The format to print in.
    public var format: OutputFormat

    /// Creates a renderer.
    public init(format: OutputFormat) {
        self.format = format
    }

    /// Prints one record: a JSON object, a JSON line, a CSV header and row, or `name  value` lines.
    public func render(single record: Record, to sink: TextSink) {
        switch format {
        case .json:
            sink.write(bytes: JSONWriter.prettyBytes(record.jsonObject))
        case .jsonl:
            sink.write(bytes: JSONWriter.compactBytes(record.jsonObject) + [0x0A])
        case .csv:
            render(list: [record], to: sink)
        case .table:
            let width = record.fields.map { DisplayWidth.of($0.name) }.max() ?? 0
            for field in record.fields {
                sink.line(DisplayWidth.padded(field.name, to: width) + "  " + Renderer.plainText(field.value))
            }
        }
    }

    /// The width tables fit: `COLUMNS`, else the terminal's, else 80.
    public static func terminalWidth() -> Int {
        terminalWidth(of: STDOUT_FILENO)
    }

    /// The width of the terminal on `descriptor`: `COLUMNS`, else the terminal's, else 80.
    public static func terminalWidth(of descriptor: Int32) -> Int {
        if let columns = Environment.process["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    /// The lines of the terminal on `descriptor`: `LINES`, else the terminal's, else 24.
    public static func terminalHeight(of descriptor: Int32 = STDOUT_FILENO) -> Int {
        if let lines = Environment.process["LINES"].flatMap(Int.init), lines > 0 { return lines }
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        return 24
    }

    /// Prints records; in table format the table fits `width` columns: when it is wider, the
    /// widest columns are narrowed first (their cells cut with an ellipsis), down to
    /// `narrowestColumn`, so every column still shows; only a table too wide even then has its
    /// lines cut.
    public func render(list records: [Record], to sink: TextSink, clippingTo width: Int?) {
        guard let width, format == .table else { return render(list: records, to: sink) }
        for line in Renderer.tableLines(records, fitting: width) { sink.line(line) }
    }

    /// Prints records: a JSON array, JSON lines, CSV, or an aligned table with a header.
    public func render(list records: [Record], to sink: TextSink) {
        switch format {
        case .json:
            sink.write(bytes: JSONWriter.prettyBytes(.array(records.map(\.jsonObject))))
        case .jsonl:
            for record in records {
                sink.write(bytes: JSONWriter.compactBytes(record.jsonObject) + [0x0A])
            }
        case .csv:
            let columns = Renderer.columns(of: records)
            sink.line(columns.map(Renderer.csvEscape).joined(separator: ","))
            for record in records {
                sink.line(Renderer.cells(of: record, in: columns).map(Renderer.csvEscape).joined(separator: ","))
            }
        case .table:
            for line in Renderer.tableLines(records, fitting: nil) { sink.line(line) }
        }
    }

    /// The fewest display columns a column is narrowed to when a table does not fit (or its own
    /// width, when smaller): room for a few characters and the ellipsis.
    static let narrowestColumn = 6

    /// The columns each column of a table takes to fit `width` (two spaces between columns):
    /// its widest cell, the widest columns narrowed first, one column at a time, until the
    /// table fits or every column is down to `narrowestColumn`.
    static func fittedWidths(_ natural: [Int], to width: Int) -> [Int] {
        var widths = natural
        var excess = widths.reduce(0, +) + 2 * max(0, widths.count - 1) - width
        while excess > 0 {
            guard let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
                widths[widest] > min(natural[widest], narrowestColumn)
            else { break }
            // Down to the next widest column (or by the excess, if less), then share the rest.
            let next = widths.enumerated().filter { $0.offset != widest }.map(\.element).max() ?? 0
            let floor = min(natural[widest], narrowestColumn)
            let cut = max(1, min(excess, widths[widest] - max(next, floor)))
            widths[widest] -= cut
            excess -= cut
        }
        return widths
    }

    /// An aligned table: the header, then a line per record; fitting `width` columns when given.
    static func tableLines(_ records: [Record], fitting width: Int?) -> [String] {
        let columns = Renderer.columns(of: records)
        let rows = records.map { record in
            Renderer.cells(of: record, in: columns).map { $0.replacingOccurrences(of: "\n", with: " ") }
        }
        var natural = columns.map(DisplayWidth.of)
        for row in rows {
            for (i, cell) in row.enumerated() { natural[i] = max(natural[i], DisplayWidth.of(cell)) }
        }
        let widths = width.map { fittedWidths(natural, to: $0) } ?? natural
        func format(_ cells: [String]) -> String {
            var line = ""
            for (i, cell) in cells.enumerated() {
                if i > 0 { line += "  " }
                let shown = widths[i] < natural[i] ? DisplayWidth.clipped(cell, to: widths[i]) : cell
                line += i == cells.count - 1 ? shown : DisplayWidth.padded(shown, to: widths[i])
            }
            guard let width else { return line }
            return DisplayWidth.clipped(line, to: width)
        }
        return [format(columns)] + rows.map(format)
    }

    /// The union of the records' column names, in first-seen order.
    static func columns(of records: [Record]) -> [String] {
        var seen: Set<String> = []
        var columns: [String] = []
        for record in records {
            for field in record.fields where seen.insert(field.name).inserted {
                columns.append(field.name)
            }
        }
        return columns
    }

    /// A record's values in `columns` as plain text (empty for a column it lacks).
    static func cells(of record: Record, in columns: [String]) -> [String] {
        columns.map { column in record.fields.first { $0.name == column }.map { plainText($0.value) } ?? "" }
    }

    /// A value as plain text: strings bare, `null` empty, anything else as compact JSON.
    public static func plainText(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return text
        case .null: return ""
        case .number(let literal): return literal
        case .bool(let flag): return flag ? "true" : "false"
        default: return JSONWriter.compactString(value)
        }
    }

    /// Quotes a CSV cell when it needs it (RFC 4180), looking at code points: a quote followed by
    /// a combining mark (one character to Swift) is still a quote to a CSV reader.
    static func csvEscape(_ cell: String) -> String {
        guard cell.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        var quoted = "\""
        for scalar in cell.unicodeScalars {
            if scalar == "\"" { quoted.unicodeScalars.append("\"") }
            quoted.unicodeScalars.append(scalar)
        }
        return quoted + "\""
    }
}
