import ArchivistBase
import ArchivistClient
import ArchivistStore
import Foundation
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Shows a search's progress on stderr: on a terminal, one status line rewritten in place (page k
/// of n, articles so far, time waiting for the pace); anywhere, a line for each retry and quota
/// warning.
final class ProgressReporter: Sendable {
    private let errors: TextSink
    private let isLive: Bool
    private let statusShown = Mutex(false)
    /// The last page line, which a wait for the pace extends.
    private let lastPage = Mutex("")

    /// A reporter writing to `errors`; the live line only when it is a terminal.
    init(errors: TextSink) {
        self.errors = errors
        self.isLive = errors.isTerminal
    }

    /// Shows one event.
    func report(_ event: HarvestEvent) {
        switch event {
        case .page(let page, let pages, let range, let documents):
            let text = "page \(page) of \(pages)\(range.map { " (\($0))" } ?? "") · \(Plural.count(documents, "article"))"
            lastPage.withLock { $0 = text }
            status(text)
        case .splitting(let range, let hits, let parts):
            line("note: \(range) has \(hits) hits, more than the API's 1,000 per query: fetching it in \(parts) parts")
        case .archiveIsCheaper(let requests, let months):
            line(
                "note: every hit needs about \(requests) requests here; `archive` fetches the same articles whole in "
                    + "\(Plural.count(months, "request")), one a month")
        case .dayTooLarge(let day, let hits):
            line("warning: \(day) alone has \(hits) hits; only the first 1,000 can be fetched")
        case .client(.pacing(let seconds)):
            let page = lastPage.withLock { $0 }
            status((page.isEmpty ? "" : page + " · ") + String(format: "waiting %.1f s for the pace", seconds))
        case .client(.retrying(let attempt, let reason, let delay)):
            line("note: attempt \(attempt) failed (\(reason)); retrying in " + String(format: "%.1f", delay) + " s")
        case .client(.quotaWarning(let count)):
            line("warning: \(count) API requests today (UTC); NYT allows 500 a day")
        }
    }

    /// Shows `text` as the status line (on a terminal only).
    func show(_ text: String) {
        status(text)
    }

    /// Clears the status line.
    func finish() {
        statusShown.withLock { shown in
            if shown { errors.write("\r\u{1B}[2K") }
            shown = false
        }
        errors.flush()
    }

    private func status(_ text: String) {
        guard isLive else { return }
        // One row only: a line that wrapped could not be rewritten in place.
        let line = DisplayWidth.clipped(text, to: Renderer.terminalWidth(of: STDERR_FILENO) - 1)
        statusShown.withLock { shown in
            errors.write("\r\u{1B}[2K" + line)
            errors.flush()
            shown = true
        }
    }

    /// Writes `text` as a line of its own, clearing the status line first.
    func line(_ text: String) {
        statusShown.withLock { shown in
            if shown { errors.write("\r\u{1B}[2K") }
            shown = false
            errors.line(text)
            errors.flush()
        }
    }
}
