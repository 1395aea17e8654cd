// archivist-bench: the pieces of the benchmark that need Swift.
//
//   archivist-bench generate --count N [--seed S] --out FILE
//       Writes N generated NYT-shaped documents as JSON Lines (ArticleGenerator, seeded).
//   archivist-bench rawfs --input FILE --dir DIR
//       The raw limit of the file system for the same documents: for each line, parse it, write the
//       pretty form to DIR/tmp/<n> (open/write/close, no fsync), rename it to
//       DIR/docs/<bb>/<name>.json (the store's bucket and file name for the `_id`), then one
//       syncfs at the end. Prints {"docs":N,"seconds":S,"docs_per_s":R,"sync_seconds":T} (T: the syncfs
//       alone; S covers reading the input to the end of the syncfs).
//   archivist-bench query --data DIR [--repeats N] [--text WORD]
//       Query latency through the library, in one long-running process: opens the store once,
//       builds the query index once, then for each query of `benchQueries` times its first run
//       (which builds the hash, sorted or text indexes it needs) and N warm runs (default 50).
//       Prints one JSON line for the open and index build, then one per query:
//       {"query":..,"median_ms":..,"p90_ms":..,"min_ms":..,"max_ms":..,"first_ms":..,"matches":..,"repeats":N}.
//
// bench/run.py drives generate and rawfs; bench/query.py drives query.

import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("archivist-bench: " + message + "\n").utf8))
    exit(2)
}

let usage = """
    usage: archivist-bench generate --count N [--seed S] --out FILE
           archivist-bench rawfs --input FILE --dir DIR
           archivist-bench query --data DIR [--repeats N] [--text WORD]
    """

/// `--name value` pairs after the subcommand.
func options(_ arguments: ArraySlice<String>, allowed: Set<String>) -> [String: String] {
    var result: [String: String] = [:]
    var rest = arguments
    while let name = rest.popFirst() {
        guard allowed.contains(name) else { fail("unknown option \(name)\n\(usage)") }
        guard let value = rest.popFirst() else { fail("\(name) needs a value") }
        result[name] = value
    }
    return result
}

func posixError(_ what: String, _ path: String) -> Never {
    fail("\(path): cannot \(what): \(String(cString: strerror(errno)))")
}

/// Writes all of `bytes` to `fd`.
func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                posixError("write", path)
            }
            offset += written
        }
    }
}

/// The whole file, read straight into one array (no intermediate copy).
func readWholeFile(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { posixError("open", path) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { posixError("stat", path) }
    let size = Int(info.st_size)
    return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
        initialized = 0
        while initialized < size {
            let got = read(fd, buffer.baseAddress! + initialized, size - initialized)
            if got < 0 {
                if errno == EINTR { continue }
                posixError("read", path)
            }
            if got == 0 { break }
            initialized += got
        }
    }
}

func makeFolder(_ path: String) {
    if mkdir(path, 0o755) != 0 && errno != EEXIST { posixError("create folder", path) }
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func printLine(_ value: JSONValue) {
    print(JSONWriter.compactString(value))
}

// MARK: generate

func generate(_ arguments: ArraySlice<String>) {
    let given = options(arguments, allowed: ["--count", "--seed", "--out"])
    guard let countText = given["--count"], let count = Int(countText), count >= 0 else { fail("--count N is required") }
    guard let seed = UInt64(given["--seed"] ?? "1") else { fail("--seed must be an unsigned integer") }
    guard let out = given["--out"] else { fail("--out FILE is required") }
    let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { posixError("open", out) }
    let start = monotonicSeconds()
    var generator = ArticleGenerator(seed: seed)
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 21)
    var total = 0
    for _ in 0..<count {
        // The same bytes as ArticleGenerator.jsonLines(count:seed:), written in chunks.
        JSONWriter.writeCompact(generator.next(), into: &buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 20 {
            writeAll(fd, buffer, path: out)
            total += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }
    writeAll(fd, buffer, path: out)
    total += buffer.count
    guard close(fd) == 0 else { posixError("close", out) }
    let seconds = monotonicSeconds() - start
    printLine(
        .object(sorting: [
            JSONMember(key: "docs", value: .number(String(count))),
            JSONMember(key: "bytes", value: .number(String(total))),
            JSONMember(key: "seconds", value: .number(String(format: "%.3f", seconds))),
        ]))
}

// MARK: rawfs

typealias SyncFS = @convention(c) (Int32) -> Int32

func rawfs(_ arguments: ArraySlice<String>) {
    let given = options(arguments, allowed: ["--input", "--dir"])
    guard let input = given["--input"] else { fail("--input FILE is required") }
    guard let dir = given["--dir"] else { fail("--dir DIR is required") }
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "syncfs") else { fail("syncfs is not available") }
    let syncfs = unsafeBitCast(symbol, to: SyncFS.self)

    let start = monotonicSeconds()
    let bytes = readWholeFile(input)
    makeFolder(dir)
    makeFolder(dir + "/tmp")
    makeFolder(dir + "/docs")
    for bucket in 0..<256 {
        let digits = Array("0123456789abcdef")
        makeFolder(dir + "/docs/" + String([digits[bucket >> 4], digits[bucket & 15]]))
    }

    var count = 0
    bytes.withUnsafeBufferPointer { buffer in
        var lineStart = 0
        var lineNumber = 0
        while lineStart < buffer.count {
            let end = buffer[lineStart...].firstIndex(of: 0x0A) ?? buffer.count
            defer { lineStart = end + 1 }
            lineNumber += 1
            let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<end])
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let document: JSONValue
            do throws(JSONSyntaxError) {
                document = try JSONParser.parse(UnsafeRawBufferPointer(line))
            } catch {
                fail("\(input): line \(lineNumber): \(error.description)")
            }
            guard case .string(let id)? = document["_id"] else { fail("\(input): line \(lineNumber): no string _id") }
            let pretty = JSONWriter.prettyBytes(document)
            count += 1
            let temporary = "\(dir)/tmp/\(count)"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { posixError("open", temporary) }
            writeAll(fd, pretty, path: temporary)
            guard close(fd) == 0 else { posixError("close", temporary) }
            let destination = dir + "/" + FileNames.documentPath(for: id, in: .nyt)
            guard rename(temporary, destination) == 0 else { posixError("rename to \(destination)", temporary) }
        }
    }
    let syncStart = monotonicSeconds()
    let fd = open(dir, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { posixError("open", dir) }
    guard syncfs(fd) == 0 else { posixError("syncfs", dir) }
    close(fd)
    let end = monotonicSeconds()
    let seconds = end - start
    let rate = seconds > 0 ? Double(count) / seconds : 0
    print(
        "{\"docs\":\(count),\"seconds\":\(String(format: "%.3f", seconds)),\"docs_per_s\":\(String(format: "%.1f", rate)),"
            + "\"sync_seconds\":\(String(format: "%.3f", end - syncStart))}")
}

// MARK: query

/// One benchmarked query: what it runs, and its result size (matches, or facet values).
struct BenchQuery {
    var name: String
    var description: String
    var run: (DocumentStore) throws -> (matches: Int, ids: [String])
}

func parsedFilter(_ text: String) -> Filter {
    do { return try FilterParser.parseAny(text) } catch { fail("cannot parse filter '\(text)': \(error)") }
}

func benchQueries(text word: String) -> [BenchQuery] {
    func find(_ name: String, _ filterText: String, sort: [SortKey] = [], limit: Int? = nil, keepIDs: Bool = false) -> BenchQuery {
        let query = Query(filter: parsedFilter(filterText), sort: sort, limit: limit)
        var description = "find " + filterText
        if !sort.isEmpty {
            description += " --sort " + sort.map { $0.path + ($0.isDescending ? ":desc" : "") }.joined(separator: " --sort ")
        }
        if let limit { description += " --limit \(limit)" }
        return BenchQuery(name: name, description: description) { store in
            let result = try store.find(query)
            if !result.scannedPaths.isEmpty { fail("\(name): read documents for \(result.scannedPaths) (not answered by the projection)") }
            return (result.total, keepIDs ? result.ids : [])
        }
    }
    return [
        find("equality", "section_name = Sports"),
        find("date_range", "pub_date >= 2015-01-01 and pub_date < 2016-01-01"),
        find("three_clauses", "section_name = Sports and pub_date >= 2010-01-01 and word_count > 500"),
        find("text", "\"\(word)\""),
        BenchQuery(name: "facet", description: "facet section_name") { store in
            let result = try store.facet("section_name")
            if !result.scannedPaths.isEmpty { fail("facet: read documents for \(result.scannedPaths)") }
            return (result.values.count, [])
        },
        find("top10", "pub_date >= 2000-01-01", sort: [SortKey("pub_date", descending: true)], limit: 10, keepIDs: true),
        BenchQuery(name: "timeline", description: "facet pub_date:year") { store in
            let result = try store.timeline("pub_date", by: .year)
            if !result.scannedPaths.isEmpty { fail("timeline: read documents for \(result.scannedPaths)") }
            return (result.buckets.count, [])
        },
    ]
}

/// The value at a fraction of the sorted values (nearest rank).
func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
}

/// The median of sorted values (the mean of the two middle ones for an even count).
func median(_ sorted: [Double]) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func milliseconds(_ seconds: Double) -> JSONValue { .number(String(format: "%.4f", seconds * 1000)) }

func queryBench(_ arguments: ArraySlice<String>) {
    let given = options(arguments, allowed: ["--data", "--repeats", "--text"])
    guard let folder = given["--data"] else { fail("--data DIR is required") }
    guard let repeats = Int(given["--repeats"] ?? "50"), repeats > 0 else { fail("--repeats must be a positive integer") }
    let word = given["--text"] ?? "election"
    var info = stat()
    guard stat(folder, &info) == 0 else { fail("\(folder): no such folder (the store would create an empty one)") }

    let openStart = monotonicSeconds()
    let store: DocumentStore
    do { store = try DocumentStore(folder: folder, schema: .nyt) } catch { fail("cannot open \(folder): \(error)") }
    let opened = monotonicSeconds()
    let index: QueryIndex
    do { index = try store.queryIndex() } catch { fail("cannot build the query index: \(error)") }
    let built = monotonicSeconds()
    printLine(
        .object(sorting: [
            JSONMember(key: "phase", value: .string("open")),
            JSONMember(key: "documents", value: .number(String(index.count))),
            JSONMember(key: "open_ms", value: milliseconds(opened - openStart)),
            JSONMember(key: "index_build_ms", value: milliseconds(built - opened)),
        ]))

    for query in benchQueries(text: word) {
        do {
            let firstStart = monotonicSeconds()
            let first = try query.run(store)
            let first_ms = monotonicSeconds() - firstStart
            var times: [Double] = []
            times.reserveCapacity(repeats)
            for _ in 0..<repeats {
                let start = monotonicSeconds()
                let result = try query.run(store)
                times.append(monotonicSeconds() - start)
                if result.matches != first.matches { fail("\(query.name): \(first.matches) matches, then \(result.matches)") }
            }
            times.sort()
            var members = [
                JSONMember(key: "query", value: .string(query.name)),
                JSONMember(key: "run", value: .string(query.description)),
                JSONMember(key: "median_ms", value: milliseconds(median(times))),
                JSONMember(key: "p90_ms", value: milliseconds(percentile(times, 0.9))),
                JSONMember(key: "min_ms", value: milliseconds(times.first!)),
                JSONMember(key: "max_ms", value: milliseconds(times.last!)),
                JSONMember(key: "first_ms", value: milliseconds(first_ms)),
                JSONMember(key: "matches", value: .number(String(first.matches))),
                JSONMember(key: "repeats", value: .number(String(repeats))),
            ]
            if !first.ids.isEmpty { members.append(JSONMember(key: "ids", value: .array(first.ids.map { .string($0) }))) }
            printLine(.object(sorting: members))
        } catch {
            fail("\(query.name): \(error)")
        }
    }
}

// MARK: main

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "generate": generate(arguments.dropFirst())
case "rawfs": rawfs(arguments.dropFirst())
case "query": queryBench(arguments.dropFirst())
case "-h", "--help", "help": print(usage)
default: fail("expected a subcommand\n\(usage)")
}
