import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct DailyLimitTests {
    @Test func theLedgerRefusesTheRequestPastTheLimitAndRecordsNothing() throws {
        let ledger = MemoryRequestLedger()
        let t0 = Date(timeIntervalSince1970: 1_764_460_800)  // 2025-11-30 00:00 UTC
        for number in 1...3 {
            #expect(
                try ledger.reserve(at: t0.addingTimeInterval(Double(number)), pace: 0, dailyLimit: 3) == .granted(requestsToday: number))
        }
        #expect(try ledger.reserve(at: t0.addingTimeInterval(10), pace: 0, dailyLimit: 3) == .limitReached(requestsToday: 3))
        #expect(try ledger.reserve(at: t0.addingTimeInterval(11), pace: 0, dailyLimit: 3) == .limitReached(requestsToday: 3))
        #expect(
            try ledger.reserve(at: t0.addingTimeInterval(86_400), pace: 0, dailyLimit: 3) == .granted(requestsToday: 1), "the next UTC day")
    }

    @Test func aSearchAtTheLimitSendsNothingAndSaysWhen() async throws {
        let transport = ScriptedTransport([], fallback: okStep())
        let ledger = MemoryRequestLedger()
        for _ in 0..<500 { _ = try ledger.reserve(at: Date(), pace: 0, dailyLimit: 500) }
        let client = NYTClientTests.client(transport, ledger: ledger)
        await #expect(throws: ClientError.dailyLimitReached(requestsToday: 500, limit: 500)) {
            _ = try await client.fetch(NYTClientTests.request)
        }
        #expect(transport.calls == 0)
        let message = ClientError.dailyLimitReached(requestsToday: 500, limit: 500).errorDescription ?? ""
        #expect(message.hasPrefix("daily limit: 500 API requests were sent today (UTC)"), "\(message)")
    }
}
