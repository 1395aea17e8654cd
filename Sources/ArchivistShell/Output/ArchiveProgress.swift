import ArchivistBase
import ArchivistClient
import ArchivistStore
import Foundation
import Synchronization

/// Shows an archive run's progress on stderr: on a terminal one row rewritten in place (month k of
/// n, its name, the body's megabytes while it downloads, the documents stored, the wait for the
/// pace, the days left at the daily limit); anywhere, a line for each retry, failure and warning.
final class ArchiveProgress: Sendable {
    /// What the row shows.
    private struct State {
        var month = ""
        var index = 0
        var count = 0
        var detail = ""
    }

    private let reporter: ProgressReporter
    private let dailyLimit: Int
    private let state = Mutex(State())

    /// A reporter writing through `reporter`; `dailyLimit` requests a day for the estimate.
    init(reporter: ProgressReporter, dailyLimit: Int) {
        self.reporter = reporter
        self.dailyLimit = max(1, dailyLimit)
    }

    /// Shows one event.
    func report(_ event: ArchiveEvent) {
        switch event {
        case .month(let month, let index, let count):
            state.withLock { $0 = State(month: month.description, index: index, count: count, detail: "") }
            row("requesting")
        case .downloading(let received, let expected):
            let total = expected.map { " of " + ArchiveProgress.megabytes($0) } ?? ""
            row("downloading " + ArchiveProgress.megabytes(received) + total)
        case .storing(let stored, let received):
            row("\(ArchiveCalendar.grouped(stored)) of \(Plural.count(received, "document")) stored")
        case .hitsDiffer(let month, let hits, let received):
            reporter.line(
                "note: \(month): the API counts \(Plural.count(hits, "hit")) but sent \(Plural.count(received, "document")); "
                    + "\(Plural.word(for: received, "it is", "they are")) stored")
        case .rejected(let month, let count, let first):
            reporter.line("warning: \(month): \(Plural.count(count, "document")) could not be stored (\(first))")
        case .failed(let month, let reason):
            reporter.line("warning: \(month) failed: \(reason); going on with the next month")
        case .client(.pacing(let seconds)):
            row(String(format: "waiting %.1f s for the pace", seconds))
        case .client(let other):
            reporter.report(.client(other))
        }
    }

    /// Clears the row.
    func finish() {
        reporter.finish()
    }

    /// Rewrites the row with `detail` for the month in hand.
    private func row(_ detail: String) {
        let text = state.withLock { state -> String in
            state.detail = detail
            let left = state.count - state.index + 1
            let days = Double(left) / Double(dailyLimit)
            // A day's requests or more left: how many days at the limit (less, and today's quota holds it).
            let estimate = left >= dailyLimit ? String(format: " · about %.1f days left at %d a day", days, dailyLimit) : ""
            return "month \(state.index) of \(state.count) · \(state.month) · \(detail)\(estimate)"
        }
        reporter.show(text)
    }

    /// `12.3 MB`.
    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
