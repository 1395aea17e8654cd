import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct MemoryRequestLedgerTests {
    @Test func countsPerUTCDayAndAsksToWaitWithinThePace() throws {
        let ledger = MemoryRequestLedger()
        let t0 = utc(2024, 2, 29, 23, 59, 50)
        #expect(try ledger.reserve(at: t0, pace: 5, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(1), pace: 5, dailyLimit: 500) == .wait(seconds: 4))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(5), pace: 5, dailyLimit: 500) == .granted(requestsToday: 2))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(10), pace: 5, dailyLimit: 500) == .granted(requestsToday: 1))  // 2024-03-01
        #expect(try ledger.reserve(at: t0.addingTimeInterval(10), pace: 0, dailyLimit: 500) == .granted(requestsToday: 2))
    }

    @Test func clockSetBackGrantsAtOnce() throws {
        let ledger = MemoryRequestLedger()
        let t0 = utc(2024, 3, 1, 12)
        #expect(try ledger.reserve(at: t0, pace: 12, dailyLimit: 500) == .granted(requestsToday: 1))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(-3600), pace: 12, dailyLimit: 500) == .granted(requestsToday: 2))
    }
}
