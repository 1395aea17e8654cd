import ArchivistBase
import ArchivistClient
import ArchivistStore
import Dispatch
import Foundation
import Synchronization

extension Command {
    /// The options of a command that talks to the API: it declares `--api-base` and `--pace`.
    protocol APIOptions: CommandOptions {
        /// `--api-base URL`.
        static var apiBase: Self { get }
        /// `--pace SECONDS`.
        static var pace: Self { get }
    }

    /// What `help` says of the API for every command that talks to it.
    static let apiHelp = """
        The key comes from NYT_API_KEY (https://developer.nytimes.com/get-started) and never appears in
        output, errors or files (URLs show api-key=REDACTED). NYT allows 5 requests a minute and 500 a
        day: requests are spaced --pace seconds apart across every archivist process using the data
        folder, counted per UTC day in api-usage.json (a warning at 450; at 500 nothing more is sent
        before the next UTC day, and the command stops with exit status 1), and 429s, 5xx answers,
        timeouts and dropped connections are retried with exponential backoff (ARCHIVIST_BACKOFF
        seconds first, doubling, 5 retries); 400, 401 and 403 fail at once.
        """

    /// The client's settings from options and the environment; the key from `NYT_API_KEY`.
    static func clientConfiguration<Options: APIOptions>(
        _ invocation: Invocation<Options>, shell: Shell
    ) throws
        -> NYTClient.Configuration
    {
        let environment = shell.environment
        let base =
            invocation.value(.apiBase) ?? environment["NYT_API_BASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? NYTClient.Configuration.defaultBaseURL
        guard SearchRequest().url(base: base, apiKey: nil) != nil else {
            throw invocation.usageError("\(Options.apiBase.name): '\(base)' is not an http(s) URL")
        }
        let pace = try invocation.seconds(.pace) ?? EnvironmentVariable.pace.seconds(in: environment)
        guard let key = environment["NYT_API_KEY"], !key.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ClientError.missingAPIKey
        }
        var configuration = NYTClient.Configuration(baseURL: base, apiKey: key.trimmingCharacters(in: .whitespaces))
        if let pace { configuration.pace = pace }
        if let backoff = try EnvironmentVariable.backoff.seconds(in: environment) { configuration.backoff = backoff }
        if let timeout = try EnvironmentVariable.timeout.seconds(in: environment) { configuration.timeout = max(1, timeout) }
        return configuration
    }

    /// Runs a harvest to its end, Ctrl-C (`.cancelled`), or an error, showing progress on a terminal.
    static func harvest(
        _ request: SearchRequest, limit: PageLimit, configuration: NYTClient.Configuration,
        store: DocumentStore, shell: Shell
    ) -> (HarvestSummary, ClientError?) {
        let client = NYTClient(
            configuration: configuration, ledger: StoreRequestLedger(store: store),
            isCancelled: { Interruption.isRequested })
        let harvester = Harvester(client: client, store: store)
        let progress = ProgressReporter(errors: shell.errors)
        let before = try? store.lastSequence
        var result = runBlocking { await harvester.run(request, limit: limit) { progress.report($0) } }
        progress.finish()
        result.0.sequences = committedSequences(after: before, store: store)
        return result
    }

    /// The sequence numbers committed since `before` was the last (nil when none, or unknown).
    static func committedSequences(after before: Int?, store: DocumentStore) -> ClosedRange<Int>? {
        guard let before, let after = try? store.lastSequence, after > before else { return nil }
        return (before + 1)...after
    }

    /// The first and last sequence numbers a run committed, as its summary prints them.
    static func sequenceFields(_ sequences: ClosedRange<Int>?) -> [(String, JSONValue)] {
        [
            ("first_seq", sequences.map { .int($0.lowerBound) } ?? .null),
            ("last_seq", sequences.map { .int($0.upperBound) } ?? .null),
        ]
    }

    /// Waits for an async operation from synchronous code (the commands are synchronous; only the
    /// client is async).
    static func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        Task.detached {
            let value = await operation()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// The counts of a run, as `search` and `refresh` print them.
    static func summaryFields(_ summary: HarvestSummary) -> [(String, JSONValue)] {
        [
            ("fetched", .int(summary.fetched)), ("added", .int(summary.added)), ("updated", .int(summary.updated)),
            ("unchanged", .int(summary.unchanged)), ("pages", .int(summary.pages)),
        ] + sequenceFields(summary.sequences)
    }
}
