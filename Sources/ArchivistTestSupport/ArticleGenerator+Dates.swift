import ArchivistBase

// Corpora whose publication dates fall inside a chosen range. The documents are the generator's own
// (same shapes, same IDs, same bytes apart from dates; before 1981 in the print-archive shape), so
// `next()` and `jsonLines` are unchanged.

extension ArticleGenerator {
    /// The first day `corpus(count:seed:from:to:)` uses when `from` is not a valid day.
    public static let defaultFirstDay = "2000-01-01"
    /// The last day `corpus(count:seed:from:to:)` uses when `to` is not a valid day.
    public static let defaultLastDay = "2025-12-31"

    /// `count` documents of `seed` whose `pub_date` falls between the days `from` and `to`
    /// (`YYYY-MM-DD`, UTC, both included).
    ///
    /// Each document keeps its shape and its `_id`; only its date changes: `pub_date` keeps the
    /// shape's format (`...Z` for the 2016 and 2025 shapes, `...+0000` for the 2019 shape) and the
    /// `/YYYY/MM/DD/` part of its URLs (`web_url`, image paths) follows the new date. Dates are spread
    /// evenly: the range is cut into `count` equal slices and document `i` gets a time inside slice
    /// `i`, so the corpus comes out in ascending date order. A document generated at midnight stays at
    /// midnight (as day-only dates did in the real archive).
    ///
    /// A document whose new date is before 1981-01-01 (`archiveEraEnd`) takes the print-archive shape
    /// the API serves for those years instead (see `archiveDocument(from:at:random:)`: `_id` equal to
    /// `uri`, `pub_date` `YYYY-MM-DDT05:00:00+0000`, `section_name` `"Archives"`, `news_desk` `"None"`,
    /// `multimedia: []`, ...), made from the same generated document (its headline, text, authors and
    /// keywords) with draws of a stream of its own: the documents dated 1981 or later are the same,
    /// byte for byte, whatever the range holds before 1981.
    ///
    /// IDs are distinct within a seed; use distinct seeds for corpora that are combined. An invalid
    /// `from` or `to` falls back to `defaultFirstDay` or `defaultLastDay`, and a reversed range is
    /// swapped. The result depends only on the arguments.
    public static func corpus(count: Int, seed: UInt64, from: String, to: String) -> [JSONValue] {
        let count = max(0, count)
        var first = startOfDay(from) ?? startOfDay(defaultFirstDay) ?? 946_684_800_000
        var last = startOfDay(to) ?? startOfDay(defaultLastDay) ?? 1_767_139_200_000
        if first > last { swap(&first, &last) }
        let firstSecond = first / 1000
        let span = (last - first) / 1000 + 86_400  // seconds in the range, the last day included
        var generator = ArticleGenerator(seed: seed)
        var times = SplitMix64(state: seed ^ 0x2545_F491_4F6C_DD1D)
        var archive = SplitMix64(state: seed ^ 0x9FB2_1C65_1E98_DF25)
        var result: [JSONValue] = []
        result.reserveCapacity(count)
        for position in 0..<count {
            let low = firstSecond + slice(span, position, of: count)
            let high = firstSecond + slice(span, position + 1, of: count)
            var second = high > low ? low + Int64(times.below(UInt64(high - low))) : low
            let document = generator.next()
            let old = document["pub_date"]?.stringValue ?? ""
            if old.utf8.count >= 19, old.utf8.dropFirst(10).starts(with: "T00:00:00".utf8) {
                second -= (second % 86_400 + 86_400) % 86_400  // floor, also before 1970
            }
            if second < archiveEraEnd {
                result.append(archiveDocument(from: document, at: second, random: &archive))
            } else {
                result.append(redate(document, from: old, to: second))
            }
        }
        return result
    }

    /// The instant (milliseconds since 1970, UTC) at which day `text` (`YYYY-MM-DD`, a real calendar
    /// day) begins, or nil when `text` is not such a day.
    public static func startOfDay(_ text: String) -> Int64? {
        guard text.utf8.count == 10, let interval = ISODate.interval(of: text) else { return nil }
        return interval.start
    }

    /// `span * index / count` without overflow (count > 0, 0 <= index <= count).
    private static func slice(_ span: Int64, _ index: Int, of count: Int) -> Int64 {
        let product = span.multipliedFullWidth(by: Int64(index))
        return Int64(count).dividingFullWidth(product).quotient
    }

    /// `document` with `pub_date` set to `second` (in the format of `old`) and date paths moved.
    private static func redate(_ document: JSONValue, from old: String, to second: Int64) -> JSONValue {
        let stamp = Timestamp(milliseconds: second * 1000).description  // YYYY-MM-DDTHH:MM:SS.mmmZ
        let oldBytes = Array(old.utf8)
        guard oldBytes.count >= 19 else { return document.setting("pub_date", to: .string(String(stamp.prefix(19)) + "Z")) }
        let suffix = String(decoding: oldBytes[19...], as: UTF8.self)
        let newDate = String(stamp.prefix(19)) + suffix
        let oldPath =
            "/" + String(decoding: oldBytes[0..<4], as: UTF8.self) + "/" + String(decoding: oldBytes[5..<7], as: UTF8.self)
            + "/" + String(decoding: oldBytes[8..<10], as: UTF8.self) + "/"
        let newPath =
            "/" + String(stamp.prefix(4)) + "/" + String(stamp.dropFirst(5).prefix(2)) + "/" + String(stamp.dropFirst(8).prefix(2)) + "/"
        let moved = replacing(oldPath, with: newPath, in: document)
        return moved.setting("pub_date", to: .string(newDate))
    }

    /// Replaces `target` by `replacement` in every string inside `value`.
    private static func replacing(_ target: String, with replacement: String, in value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text):
            return text.contains(target) ? .string(text.replacingAll(target, with: replacement)) : value
        case .array(let elements):
            return .array(elements.map { replacing(target, with: replacement, in: $0) })
        case .object(let members):
            return .object(members.map { JSONMember(key: $0.key, value: replacing(target, with: replacement, in: $0.value)) })
        default:
            return value
        }
    }
}

extension String {
    /// This string with every occurrence of `target` (compared by UTF-8 bytes) replaced.
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8)
        let needle = Array(target.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return self }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if i + needle.count <= bytes.count, bytes[i..<(i + needle.count)].elementsEqual(needle) {
                out.append(contentsOf: replacement.utf8)
                i += needle.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
