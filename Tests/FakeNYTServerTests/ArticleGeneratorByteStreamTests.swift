import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Tests of the fake NYT Article Search server, over real sockets with URLSession, and of the
// date-range corpus generator it is usually fed with.

// MARK: - Helpers

/// Pins the generator's output: the benchmark and many tests rely on a seed giving the same bytes
/// forever, so any change to the order or number of its random draws, or to what it writes, fails
/// here. The constants were recorded from the generator before its shape builders were split up; a
/// deliberate change of the byte stream must update them (and says so in its commit).
@Suite("ArticleGenerator byte stream")
struct ArticleGeneratorByteStreamTests {
    @Test func theFirst3000DocumentsOfSeed3HaveTheirPinnedHash() {
        let lines = ArticleGenerator.jsonLines(count: 3_000, seed: 3)
        #expect(lines.count == 6_199_125)
        #expect(FNV1a64.hex(FNV1a64.hash(lines)) == "f6b58740f526ac20")
    }

    @Test func aDatedCorpusHasItsPinnedHash() {
        var out: [UInt8] = []
        for document in ArticleGenerator.corpus(count: 300, seed: 3, from: "2019-01-01", to: "2020-12-31") {
            JSONWriter.writeCompact(document, into: &out)
            out.append(0x0A)
        }
        #expect(FNV1a64.hex(FNV1a64.hash(out)) == "30b85eda7820a416")
    }
}

// MARK: - The fake-nyt program
