import ArchivistClient

/// The Archive API months a folder holds as a calendar: a row per year, a cell per month, so the
/// holes show at a glance.
///
/// ```
///       J F M A M J J A S O N D   documents
/// 1978  # # # # # # # # 0 0 # #      98,123
/// 1979  # # ~ x . . . . . . . .      17,004
/// 6 complete (115,127 documents), 1 partial, 1 failed, 8 not fetched (1978-01..1979-12)
/// ```
/// `#` complete, `0` complete and empty (no paper that month), `+` complete with fewer documents
/// than the API's hits, `~` partial, `x` failed, `.` not fetched, blank outside the range.
struct ArchiveCalendar {
    /// The calendar's lines: the header, a row per year, a summary line.
    let lines: [String]

    /// The calendar of `records` over `range`, or over the years the records span.
    init(records: [ArchiveRecord], range: (ArchiveMonth, ArchiveMonth)?) {
        let byMonth = Dictionary(records.map { ($0.month, $0) }, uniquingKeysWith: { _, last in last })
        let first = range?.0 ?? records.map(\.month).min() ?? .current
        let last = range?.1 ?? records.map(\.month).max() ?? .current
        var lines = ["      J F M A M J J A S O N D   documents"]
        var counts: [ArchiveRecord.Status: Int] = [:]
        var missing = 0
        var documents = 0
        for year in first.year...last.year {
            var cells: [String] = []
            var stored = 0
            for number in 1...12 {
                guard let month = ArchiveMonth(year: year, month: number), month >= first, month <= last else {
                    cells.append(" ")
                    continue
                }
                guard let record = byMonth[month] else {
                    cells.append(".")
                    missing += 1
                    continue
                }
                counts[record.status, default: 0] += 1
                stored += record.stored
                cells.append(ArchiveCalendar.cell(record))
            }
            documents += stored
            let total = ArchiveCalendar.grouped(stored)
            lines.append("\(year)  " + cells.joined(separator: " ") + String(repeating: " ", count: max(1, 12 - total.count)) + total)
        }
        var summary = ["\(counts[.complete] ?? 0) complete (\(ArchiveCalendar.grouped(documents)) documents)"]
        if let partial = counts[.partial] { summary.append("\(partial) partial") }
        if let failed = counts[.failed] { summary.append("\(failed) failed") }
        if missing > 0 { summary.append("\(missing) not fetched") }
        lines.append(summary.joined(separator: ", ") + " (\(first)..\(last))")
        self.lines = lines
    }

    /// The symbol of one month.
    static func cell(_ record: ArchiveRecord) -> String {
        switch record.status {
        case .complete:
            if record.received == 0 { return "0" }
            if let hits = record.hits, record.received < hits { return "+" }
            return "#"
        case .partial: return "~"
        case .failed: return "x"
        }
    }

    /// `1234567` as `1,234,567`.
    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
