import ArchivistBase
import ArchivistClient
import Foundation
import Testing

@testable import ArchivistShell

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What `archives` draws and what `archive` shows while it runs, checked on the pieces themselves.
@Suite("archive calendar and progress")
struct ArchiveOutputTests {
    static func record(
        _ month: String, _ status: ArchiveRecord.Status, hits: Int? = nil, received: Int = 0, stored: Int = 0
    ) -> ArchiveRecord {
        var record = ArchiveRecord(month: ArchiveMonth(month)!, status: status, hits: hits, at: Date(timeIntervalSince1970: 0))
        record.received = received
        record.stored = stored
        return record
    }

    @Test func theCalendarHasACellPerMonthAndARowPerYear() {
        let records = [
            Self.record("1978-08", .complete, hits: 1_200, received: 1_200, stored: 1_200),
            Self.record("1978-09", .complete, hits: 0),
            Self.record("1978-11", .complete, hits: 1_300, received: 1_250, stored: 1_250),
            Self.record("1979-01", .partial, hits: 900, received: 900, stored: 500),
            Self.record("1979-02", .failed),
        ]
        let calendar = ArchiveCalendar(records: records, range: nil)
        // Counts right-aligned under "documents"; blank outside the range, "." for a month not fetched.
        #expect(calendar.lines.allSatisfy { !$0.hasPrefix("19") || $0.count == calendar.lines[0].count })
        #expect(
            calendar.lines == [
                "      J F M A M J J A S O N D   documents",
                "1978                # 0 . + .       2,450",
                "1979  ~ x                             500",
                "3 complete (2,950 documents), 1 partial, 1 failed, 2 not fetched (1978-08..1979-02)",
            ])
    }

    @Test func aRangeAddsTheMonthsNotFetchedAroundTheRecords() {
        let calendar = ArchiveCalendar(
            records: [Self.record("2019-06", .complete, hits: 3, received: 3, stored: 3)],
            range: (ArchiveMonth("2019-05")!, ArchiveMonth("2019-07")!))
        #expect(calendar.lines.dropFirst().first == "2019          . # .                     3")
        #expect(calendar.lines.last == "1 complete (3 documents), 2 not fetched (2019-05..2019-07)")
    }

    @Test(arguments: [(0, "0"), (999, "999"), (1_000, "1,000"), (1_234_567, "1,234,567")])
    func countsAreGroupedByThousands(number: Int, text: String) {
        #expect(ArchiveCalendar.grouped(number) == text)
    }

    /// A pseudo-terminal: the sink writes to its slave side, the test reads the master side.
    final class PseudoTerminal {
        let master: Int32
        let slave: Int32

        init() throws {
            // posix_openpt and its friends are not in the Glibc module, nor are the ioctls: TIOCSPTLCK
            // (0x40045431, unlock) and TIOCGPTN (0x80045430, the slave's number), from <asm-generic/ioctls.h>.
            master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            try #require(master >= 0, "no pseudo-terminal: errno \(errno)")
            var unlock: Int32 = 0
            var number: UInt32 = 0
            try #require(ioctl(master, 0x4004_5431, &unlock) == 0 && ioctl(master, 0x8004_5430, &number) == 0)
            let name = "/dev/pts/\(number)"
            slave = open(name, O_RDWR | O_NOCTTY)
            try #require(slave >= 0, "cannot open \(name): errno \(errno)")
            _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        }

        /// Everything written so far.
        func read() -> String {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes += chunk[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        deinit {
            close(slave)
            close(master)
        }
    }

    @Test func onATerminalTheRowShowsTheMonthTheBytesAndTheDaysLeftOnlyPastADaysRequests() throws {
        let terminal = try PseudoTerminal()
        let sink = TextSink(descriptor: terminal.slave)
        #expect(sink.isTerminal)
        let long = ArchiveProgress(reporter: ProgressReporter(errors: sink), dailyLimit: 500)
        long.report(.month(ArchiveMonth("1990-01")!, index: 1, count: 600))
        long.report(.downloading(received: 1_500_000, expected: 3_000_000))
        long.finish()
        let shown = terminal.read()
        #expect(shown.contains("month 1 of 600 · 1990-01 · requesting · about 1.2 days left at 500 a day"), "\(shown)")
        #expect(shown.contains("month 1 of 600 · 1990-01 · downloading 1.5 MB of 3.0 MB · about"), "\(shown)")

        let short = ArchiveProgress(reporter: ProgressReporter(errors: sink), dailyLimit: 500)
        short.report(.month(ArchiveMonth("1990-01")!, index: 2, count: 3))
        short.report(.storing(stored: 1_000, received: 2_500))
        short.finish()
        let row = terminal.read()
        #expect(row.contains("month 2 of 3 · 1990-01 · 1,000 of 2500 documents stored"), "\(row)")
        #expect(!row.contains("days left"), "\(row)")
    }

    @Test func elsewhereOnlyTheWarningsAreWrittenEachOnItsOwnLine() {
        let sink = TextSink()
        let progress = ArchiveProgress(reporter: ProgressReporter(errors: sink), dailyLimit: 500)
        let month = ArchiveMonth("2019-02")!
        progress.report(.month(month, index: 1, count: 2))
        progress.report(.downloading(received: 10, expected: nil))
        progress.report(.hitsDiffer(month, hits: 9, received: 5))
        progress.report(.failed(month, reason: "HTTP 500 from x: boom"))
        progress.finish()
        #expect(
            sink.capturedText == "note: 2019-02: the API counts 9 hits but sent 5 documents; they are stored\n"
                + "warning: 2019-02 failed: HTTP 500 from x: boom; going on with the next month\n")
    }
}
