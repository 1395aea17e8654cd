import ArchivistBase

// The Archive API side of the fake server: `GET /svc/archive/v1/{year}/{month}.json`, every
// document of a month in one answer, from an index of the corpus by month.

extension FakeNYTServer {
    /// The path of the Archive API's answer for a month: `/svc/archive/v1/2019/1.json` (the month
    /// without a leading zero).
    public static func archivePath(year: Int, month: Int) -> String {
        "/svc/archive/v1/\(year)/\(month).json"
    }

    /// The copyright line of Archive API bodies (the real API still says 2020).
    public static let archiveCopyright = "Copyright (c) 2020 The New York Times Company. All Rights Reserved."

    /// The first year the Archive API serves (its first month is September 1851).
    public static let firstArchiveYear = 1851

    /// The real API's answer for a month of the 1978 newspaper strike (September and October 1978,
    /// when no paper was printed), byte for byte: `meta` before `docs`, a 2013 copyright with two
    /// spaces before "All". It is served for those months whatever the corpus holds.
    public static let strikeMonthBody = Array(
        #"{"copyright":"Copyright (c) 2013 The New York Times Company.  All Rights Reserved.","response":{"meta":{"hits":0},"docs":[]}}"#
            .utf8)

    /// The months answered with `strikeMonthBody`, as (year, month).
    static let strikeMonths: [(year: Int, month: Int)] = [(1978, 9), (1978, 10)]

    /// One month of the archive, as a request names it.
    struct ArchiveMonth: Sendable, Hashable {
        /// The year, 4 digits in the path.
        var year: Int
        /// The month as written in the path (0...99; the API accepts 1...12).
        var month: Int

        /// Months since January 1970 (negative before), the key of the month index.
        var key: Int64 { FakeNYTServer.monthKey(year: Int64(year), month: Int64(month)) }
    }

    /// The documents of one UTC month: positions in the corpus, and whether they are in
    /// `pub_date` order (then `_id`) yet.
    struct MonthIndex: Sendable {
        var positions: [Int] = []
        var sorted = true
    }

    /// Months since January 1970 of a year and month (1...12).
    static func monthKey(year: Int64, month: Int64) -> Int64 {
        year * 12 + month - 1 - 1970 * 12
    }

    /// The month key of a day (days since 1970).
    static func monthKey(day: Int64) -> Int64 {
        let (year, month, _) = ISODate.civilFromDays(day)
        return monthKey(year: year, month: month)
    }

    /// The month a path names when it is an Archive API path: `/svc/archive/v1/` then 4 digits,
    /// `/`, 1 or 2 digits with no leading zero (`0` alone parses, and is refused later with a 400),
    /// and `.json`. Nil for anything else (answered 404, as the gateway does for unknown paths).
    static func archiveMonth(ofPath path: String) -> ArchiveMonth? {
        let prefix = "/svc/archive/v1/"
        let suffix = ".json"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.utf8.count > prefix.utf8.count + suffix.utf8.count else {
            return nil
        }
        let middle = Array(path.utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count))
        guard middle.count >= 6, middle.count <= 7, middle[4] == UInt8(ascii: "/") else { return nil }
        let yearDigits = middle[0..<4]
        let monthDigits = middle[5...]
        func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }
        guard yearDigits.allSatisfy(isDigit), monthDigits.allSatisfy(isDigit) else { return nil }
        if monthDigits.count == 2, monthDigits.first == UInt8(ascii: "0") { return nil }
        let year = yearDigits.reduce(0) { $0 * 10 + Int($1 - 48) }
        let month = monthDigits.reduce(0) { $0 * 10 + Int($1 - 48) }
        return ArchiveMonth(year: year, month: month)
    }

    /// Why the API refuses a month (a 400), or nil when it serves it: a month outside 1...12, a year
    /// before 1851, or a month that has not begun (UTC) at `now` (milliseconds since 1970).
    static func archiveRefusal(_ month: ArchiveMonth, now: Int64) -> String? {
        guard (1...12).contains(month.month) else {
            return "Invalid month: \(month.month). month must be an integer from 1 to 12"
        }
        guard month.year >= firstArchiveYear else {
            return "Invalid year: \(month.year). The archive begins in \(firstArchiveYear)"
        }
        let today = now >= 0 ? now / 86_400_000 : (now - 86_399_999) / 86_400_000
        guard month.key <= monthKey(day: today) else {
            return "Invalid date: \(month.year)/\(month.month) is in the future"
        }
        return nil
    }
}

extension FakeNYTServer.Core {
    /// Files `entries`, appended to the corpus from position `start`, in the month index.
    /// Called with the state locked, by `add`.
    static func indexMonths(_ entries: [FakeNYTServer.Entry], from start: Int, in state: inout State) {
        for (offset, entry) in entries.enumerated() {
            guard let day = entry.day else { continue }
            let key = FakeNYTServer.monthKey(day: day)
            let position = start + offset
            var index = state.months.removeValue(forKey: key) ?? FakeNYTServer.MonthIndex()
            if index.sorted, let last = index.positions.last {
                // The corpus generator gives ascending dates: a month stays sorted unless added out of order.
                index.sorted = !FakeNYTServer.precedes(entry, state.entries[last], in: .oldest)
            }
            index.positions.append(position)
            state.months[key] = index
        }
    }

    /// The answer to an Archive API request that got no fault (or a fault that still answers): 401
    /// for a missing or wrong key (the search endpoint's bodies), 400 with the `errors` body for a
    /// month the API refuses, the strike body for September and October 1978, else every document
    /// whose `pub_date` falls in that UTC month, in `pub_date` order (then `_id`), as stored:
    /// `{"copyright":...,"response":{"docs":[...],"meta":{"hits":N}}}` (`metadata` for the 2025
    /// envelope), compact.
    func archiveAnswer(_ month: FakeNYTServer.ArchiveMonth, _ query: [String: String]) -> FakeNYTServer.Response {
        if let refusal = keyRefusal(query) { return refusal }
        if let message = FakeNYTServer.archiveRefusal(month, now: Timestamp.now().milliseconds) {
            return .json(400, FakeNYTServer.errorsBody(message))
        }
        if FakeNYTServer.strikeMonths.contains(where: { $0.year == month.year && $0.month == month.month }) {
            return .json(200, FakeNYTServer.strikeMonthBody)
        }
        let (entries, positions) = monthDocuments(month.key)
        var docs: [UInt8] = []
        docs.reserveCapacity(positions.reduce(2) { $0 + entries[$1].bytes.count + 1 })
        docs.append(UInt8(ascii: "["))
        for (number, position) in positions.enumerated() {
            if number > 0 { docs.append(UInt8(ascii: ",")) }
            docs.append(contentsOf: entries[position].bytes)
        }
        docs.append(UInt8(ascii: "]"))
        return .json(200, archiveBody(docs: docs, hits: positions.count))
    }

    /// The corpus and the positions of the documents of the month `key`, in order (sorted here, once,
    /// when documents were added out of order).
    private func monthDocuments(_ key: Int64) -> ([FakeNYTServer.Entry], [Int]) {
        state.withLock { state -> ([FakeNYTServer.Entry], [Int]) in
            guard var index = state.months.removeValue(forKey: key) else { return (state.entries, []) }
            if !index.sorted {
                let entries = state.entries
                index.positions.sort { FakeNYTServer.precedes(entries[$0], entries[$1], in: .oldest) }
                index.sorted = true
            }
            state.months[key] = index
            return (state.entries, index.positions)
        }
    }

    /// `{"copyright":...,"response":{"docs":<docs>,"meta":{"hits":N}}}`, with `metadata` in place of
    /// `meta` for the 2025 envelope.
    func archiveBody(docs: [UInt8], hits: Int) -> [UInt8] {
        var out = Array("{\"copyright\":".utf8)
        out.reserveCapacity(docs.count + 160)
        out.append(contentsOf: JSONWriter.compactBytes(.string(FakeNYTServer.archiveCopyright)))
        out.append(contentsOf: ",\"response\":{\"docs\":".utf8)
        out.append(contentsOf: docs)
        let name = envelope == .meta ? "meta" : "metadata"
        out.append(contentsOf: ",\"\(name)\":{\"hits\":\(hits)}}}".utf8)
        return out
    }
}
