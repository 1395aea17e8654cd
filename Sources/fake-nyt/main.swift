import ArchivistTestSupport
import Dispatch
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// fake-nyt: the fake NYT Article Search and Archive APIs as a program, for trying the tool offline.
//
//   fake-nyt [--port N] [--docs N] [--seed S] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--key KEY]
//            [--envelope meta|metadata] [--full-crops PERCENT] [--fault LIST]
//
// Serves GET /svc/search/v2/articlesearch.json and GET /svc/archive/v1/{year}/{month}.json from one
// generated corpus. Prints `listening on http://127.0.0.1:PORT` and serves until SIGINT or SIGTERM.

// SIGINT and SIGTERM are blocked before any thread starts (threads inherit the mask), so that only
// the main thread's sigwait at the end takes them.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

/// The usage text.
let usage = """
    usage: fake-nyt [--port N] [--docs N] [--seed S] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--key KEY]
                    [--envelope meta|metadata] [--full-crops PERCENT] [--fault LIST]

    Serves the Article Search API (GET /svc/search/v2/articlesearch.json) and the Archive API
    (GET /svc/archive/v1/YEAR/MONTH.json, the month without a leading zero: every document of
    that UTC month, oldest first, in one answer; 1978/9 and 1978/10, the strike, have none) from
    one generated corpus. Documents dated before 1981 have the print-archive shape.

      --port N        port on 127.0.0.1 (default 0: any free port)
      --docs N        number of generated documents (default 2000)
      --seed S        generator seed (default 1)
      --from DAY      first publication day, YYYY-MM-DD, any year (default 2000-01-01)
      --to DAY        last publication day, YYYY-MM-DD (default 2025-12-31)
      --key KEY       the api-key requests must carry (default test-key)
      --envelope E    meta (2013-2024 responses) or metadata (2025 responses); default meta
      --full-crops P  give P% of the documents whose multimedia lists crops (the 2019 shape)
                      the image's full set of 68, as the API of 2018-2019 lists them (about
                      19 KB more each; real months of those years run to 90 MB); default 0
      --fault LIST    faults for the first API requests (search or archive, in order of
                      arrival), comma-separated:
                      429,500,401,403,slow:SECONDS,truncated,malformed,drop,docsnull

    """

/// Writes one line to standard error.
func complain(_ message: String) {
    FileHandle.standardError.write(Data(("fake-nyt: " + message + "\n").utf8))
}

/// Reports bad usage and exits 64 (EX_USAGE).
func usageError(_ message: String) -> Never {
    complain(message + " (see --help)")
    exit(64)
}

/// One fault named on the command line.
func parseFault(_ text: String) -> FakeNYTServer.Fault? {
    switch text {
    case "429": return .rateLimited
    case "401": return .unauthorized
    case "500": return .serverError
    case "403": return .forbiddenHTML
    case "truncated": return .truncated
    case "malformed": return .malformed
    case "drop": return .dropConnection
    case "docsnull": return .docsNull
    default:
        guard text.hasPrefix("slow:"), let seconds = Double(text.dropFirst(5)), seconds.isFinite, seconds >= 0 else { return nil }
        return .slow(seconds: seconds)
    }
}

var port: UInt16 = 0
var count = 2000
var seed: UInt64 = 1
var firstDay = ArticleGenerator.defaultFirstDay
var lastDay = ArticleGenerator.defaultLastDay
var key = "test-key"
var envelope = FakeNYTServer.Envelope.meta
var faults: [FakeNYTServer.Fault] = []
var fullCrops = 0

var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    if option == "--help" || option == "-h" {
        FileHandle.standardOutput.write(Data(usage.utf8))
        exit(0)
    }
    guard ["--port", "--docs", "--seed", "--from", "--to", "--key", "--envelope", "--full-crops", "--fault"].contains(option) else {
        usageError("unknown argument '\(option)'")
    }
    guard !arguments.isEmpty else { usageError("\(option) needs a value") }
    let value = arguments.removeFirst()
    switch option {
    case "--port":
        guard let parsed = UInt16(value) else { usageError("--port must be a number from 0 to 65535, not '\(value)'") }
        port = parsed
    case "--docs":
        guard let parsed = Int(value), parsed >= 0 else { usageError("--docs must be a number of documents, not '\(value)'") }
        count = parsed
    case "--seed":
        guard let parsed = UInt64(value) else { usageError("--seed must be a non-negative integer, not '\(value)'") }
        seed = parsed
    case "--from", "--to":
        guard ArticleGenerator.startOfDay(value) != nil else { usageError("\(option) must be a day as YYYY-MM-DD, not '\(value)'") }
        if option == "--from" { firstDay = value } else { lastDay = value }
    case "--key":
        key = value
    case "--full-crops":
        guard let parsed = Int(value), (0...100).contains(parsed) else {
            usageError("--full-crops must be a percentage from 0 to 100, not '\(value)'")
        }
        fullCrops = parsed
    case "--envelope":
        switch value {
        case "meta": envelope = .meta
        case "metadata": envelope = .metadata
        default: usageError("--envelope must be meta or metadata, not '\(value)'")
        }
    default:  // --fault
        for name in value.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let fault = parseFault(trimmed) else { usageError("unknown fault '\(trimmed)' in --fault") }
            faults.append(fault)
        }
    }
}
if let first = ArticleGenerator.startOfDay(firstDay), let last = ArticleGenerator.startOfDay(lastDay), first > last {
    usageError("--from \(firstDay) is after --to \(lastDay)")
}

let server: FakeNYTServer
do {
    server = try FakeNYTServer(
        documents: ArticleGenerator.withFullCropSets(
            ArticleGenerator.corpus(count: count, seed: seed, from: firstDay, to: lastDay), percent: fullCrops, seed: seed),
        apiKey: key, envelope: envelope, port: port)
} catch {
    complain("cannot listen on 127.0.0.1:\(port): \(error)")
    exit(1)
}
server.enqueue(faults)

// Serve until SIGINT or SIGTERM, taken by sigwait on the main thread. (Not dispatchMain with
// signal sources: its main thread ends in a signal handler on a stack AddressSanitizer has
// poisoned, a false stack-buffer-overflow when the fake server runs under it.)
FileHandle.standardOutput.write(Data("listening on \(server.baseURL)\n".utf8))
var received: Int32 = 0
while sigwait(&stopSignals, &received) != 0 {}
server.stop()
exit(0)
