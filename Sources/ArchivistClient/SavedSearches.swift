import ArchivistBase
import Foundation

/// A search recorded with `--save NAME`, and what its last run did.
public struct SavedSearch: Sendable, Equatable {
    /// Its name.
    public var name: String
    /// The request (its page is ignored).
    public var request: SearchRequest
    /// When it was saved.
    public var savedAt: Date
    /// When it last ran.
    public var lastRunAt: Date?
    /// What the last run did.
    public var lastRun: HarvestSummary?
    /// The latest `pub_date` received by a complete run: where `refresh` starts (minus a day).
    public var newestPublication: Date?

    /// Creates a saved search.
    public init(
        name: String, request: SearchRequest, savedAt: Date, lastRunAt: Date? = nil,
        lastRun: HarvestSummary? = nil, newestPublication: Date? = nil
    ) {
        self.name = name
        self.request = request
        self.savedAt = savedAt
        self.lastRunAt = lastRunAt
        self.lastRun = lastRun
        self.newestPublication = newestPublication
    }

    /// Whether `name` can name a saved search: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `-`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && !name.hasPrefix("-")
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
            }
    }
}

/// The saved searches of a data folder, in `searches.json` (grammar: `docs/FORMAT.md`):
///
/// ```json
/// {"searches": {"jury": {"q": "jury", "from": "2020-01-01", "sort": "newest", "saved_at": "...",
///                        "last_run_at": "...", "last_run": {"fetched": 10, ...},
///                        "newest_pub_date": "2024-03-01T12:00:00.000Z"}}}
/// ```
/// Every change is a read-modify-write of the whole file under the writers' lock. An unreadable
/// file is an error naming it; it is never replaced.
public struct SavedSearches: Sendable {
    private let store: any DataFolder

    /// The saved searches of `store`'s folder.
    public init(store: any DataFolder) {
        self.store = store
    }

    private var path: String { store.sideFilePath(named: ClientFiles.savedSearches) }

    /// Every saved search, by name.
    public func all() throws(ClientError) -> [SavedSearch] {
        do {
            guard let bytes = try store.sideFile(named: ClientFiles.savedSearches) else { return [] }
            return try SavedSearches.decode(bytes, path: path)
        } catch {
            throw .storage(error)
        }
    }

    /// The saved search called `name`.
    public func search(named name: String) throws(ClientError) -> SavedSearch {
        guard let found = try all().first(where: { $0.name == name }) else { throw .unknownSearch(name: name) }
        return found
    }

    /// Adds or replaces a saved search.
    public func save(_ search: SavedSearch) throws(ClientError) {
        guard SavedSearch.isValidName(search.name) else {
            throw .invalidRequest(
                parameter: "--save", reason: "'\(search.name)' is not a name of letters, digits, '.', '_' and '-' (at most 64)")
        }
        try update { searches in
            searches.removeAll { $0.name == search.name }
            searches.append(search)
            return true
        }
    }

    /// Forgets the saved search `name`; its articles stay in the store.
    public func remove(named name: String) throws(ClientError) {
        var found = false
        try update { searches in
            let before = searches.count
            searches.removeAll { $0.name == name }
            found = searches.count < before
            return found
        }
        if !found { throw .unknownSearch(name: name) }
    }

    /// Records a run of `name` (when it exists): its time, its summary and, for a complete run,
    /// the newest publication date seen.
    public func recordRun(of name: String, at date: Date, summary: HarvestSummary, isComplete: Bool) throws(ClientError) {
        try update { searches in
            guard let index = searches.firstIndex(where: { $0.name == name }) else { return false }
            searches[index].lastRunAt = date
            searches[index].lastRun = summary
            if isComplete, let newest = summary.newestPublication,
                newest > (searches[index].newestPublication ?? .distantPast)
            {
                searches[index].newestPublication = newest
            }
            return true
        }
    }

    /// Applies `change` under the lock; a change that returns false writes nothing.
    private func update(_ change: (inout [SavedSearch]) -> Bool) throws(ClientError) {
        let path = self.path
        do {
            try store.updateSideFile(named: ClientFiles.savedSearches) { (current: [UInt8]?) throws(StoreError) -> [UInt8]? in
                var searches = try current.map { (bytes) throws(StoreError) in try SavedSearches.decode(bytes, path: path) } ?? []
                return change(&searches) ? SavedSearches.encode(searches) : nil
            }
        } catch {
            throw .storage(error)
        }
    }

    // MARK: Encoding

    static func encode(_ searches: [SavedSearch]) -> [UInt8] {
        let members = searches.map { search -> JSONMember in
            var fields: [JSONMember] = []
            func add(_ key: String, _ value: String?) {
                if let value { fields.append(JSONMember(key: key, value: .string(value))) }
            }
            add("q", search.request.query)
            add("fq", search.request.filterQuery)
            add("from", search.request.from?.description)
            add("to", search.request.to?.description)
            add("sort", search.request.sort?.rawValue)
            add("saved_at", Timestamp(search.savedAt).description)
            add("last_run_at", search.lastRunAt.map { Timestamp($0).description })
            add("newest_pub_date", search.newestPublication.map { Timestamp($0).description })
            if let run = search.lastRun {
                fields.append(
                    JSONMember(
                        key: "last_run",
                        value: .object(sorting: [
                            JSONMember(key: "fetched", value: .number(String(run.fetched))),
                            JSONMember(key: "added", value: .number(String(run.added))),
                            JSONMember(key: "updated", value: .number(String(run.updated))),
                            JSONMember(key: "unchanged", value: .number(String(run.unchanged))),
                            JSONMember(key: "pages", value: .number(String(run.pages))),
                        ])))
            }
            return JSONMember(key: search.name, value: .object(sorting: fields))
        }
        return JSONWriter.prettyBytes(.object(sorting: [JSONMember(key: "searches", value: .object(sorting: members))]))
    }

    static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> [SavedSearch] {
        let file = try SideFile(bytes, path: path)
        guard case .object(let members)? = file["searches"] else {
            throw file.invalid("", "expected {\"searches\": {NAME: {...}}}")
        }
        var result: [SavedSearch] = []
        for member in members {
            result.append(try decodeSearch(named: member.key, member.value, in: file))
        }
        return result
    }

    /// One saved search: `searches.NAME` of the file.
    private static func decodeSearch(named name: String, _ value: JSONValue, in file: SideFile) throws(StoreError) -> SavedSearch {
        let place = "searches.\(name)"
        guard case .object = value else { throw file.invalid(place, "expected an object") }
        func text(_ key: String) throws(StoreError) -> String? {
            switch value[key] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw file.invalid("\(place).\(key)", "expected a string")
            }
        }
        func day(_ key: String) throws(StoreError) -> CalendarDay? {
            guard let text = try text(key) else { return nil }
            guard let day = CalendarDay(text) else { throw file.invalid("\(place).\(key)", "'\(text)' is not a YYYY-MM-DD date") }
            return day
        }
        func date(_ key: String) throws(StoreError) -> Date? {
            guard let text = try text(key) else { return nil }
            guard let stamp = Timestamp(parsing: text) else { throw file.invalid("\(place).\(key)", "'\(text)' is not a timestamp") }
            return stamp.date
        }
        var sort: SearchRequest.Sort?
        if let text = try text("sort") {
            guard let parsed = SearchRequest.Sort(rawValue: text) else {
                throw file.invalid("\(place).sort", "'\(text)' is not newest, oldest or relevance")
            }
            sort = parsed
        }
        let request = SearchRequest(
            query: try text("q"), filterQuery: try text("fq"), from: try day("from"),
            to: try day("to"), sort: sort)
        return SavedSearch(
            name: name, request: request, savedAt: try date("saved_at") ?? Date(timeIntervalSince1970: 0),
            lastRunAt: try date("last_run_at"), lastRun: lastRunSummary(value["last_run"]),
            newestPublication: try date("newest_pub_date"))
    }

    /// The counts of a search's last run, when the file has them.
    private static func lastRunSummary(_ run: JSONValue?) -> HarvestSummary? {
        guard let run, run.isObject else { return nil }
        var summary = HarvestSummary()
        func count(_ key: String) -> Int { if case .number(let text)? = run[key] { return Int(text) ?? 0 } else { return 0 } }
        summary.fetched = count("fetched")
        summary.added = count("added")
        summary.updated = count("updated")
        summary.unchanged = count("unchanged")
        summary.pages = count("pages")
        return summary
    }
}
