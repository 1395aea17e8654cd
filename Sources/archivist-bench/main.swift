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
//
// bench/run.py drives both.

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
    printLine(.object(sorting: [
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
            let destination = dir + "/" + FileNames.documentPath(for: id)
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
    print("{\"docs\":\(count),\"seconds\":\(String(format: "%.3f", seconds)),\"docs_per_s\":\(String(format: "%.1f", rate)),"
        + "\"sync_seconds\":\(String(format: "%.3f", end - syncStart))}")
}

// MARK: main

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "generate": generate(arguments.dropFirst())
case "rawfs": rawfs(arguments.dropFirst())
case "-h", "--help", "help": print(usage)
default: fail("expected a subcommand\n\(usage)")
}
