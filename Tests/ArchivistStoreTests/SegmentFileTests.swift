import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// The manifest, the deletes files, the ID filter and the merge policy, each on its own.
@Suite("segment manifest, deletions, filter and policy")
struct SegmentFileTests {
    static let manifest = Manifest(
        schemaHash: 0x1234_5678_9abc_def0,
        coverage: .init(identity: 77, offset: 4096, lines: 12, sequence: 15, tailHash: 0xfeed),
        nextNumber: 9,
        segments: [
            .init(
                number: 3, documents: 10, tombstones: 2, bytes: 5000, firstSequence: 1, lastSequence: 12, footerHash: 42, liveBytes: 800,
                deletedDocuments: 2, deletedTombstones: 1, deletesGeneration: 4),
            .init(number: 8, documents: 3, tombstones: 0, bytes: 900, firstSequence: 13, lastSequence: 15, footerHash: 7, liveBytes: 300),
        ])

    @Test("a manifest written and read back is the same, and reads as JSON a person can follow")
    func manifestRoundTrips() throws {
        let bytes = Self.manifest.encoded()
        #expect(try Manifest.decode(bytes, path: "m") == Self.manifest)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""file": "000003.seg""#) && text.contains(#""deletes": "000003-4.del""#))
    }

    @Test(
        "a manifest that is not one is refused naming the key path",
        arguments: [
            (#"[]"#, "expected a JSON object"),
            (#"{"format": 2}"#, "format: manifest format 2"),
            (#"{"format": 1, "log": 3}"#, "log: missing or not an object"),
            (#"{"format": 1, "log": {"identity": 1, "offset": 0, "lines": 0, "seq": 0, "tail_hash": "zz"}}"#, "log.tail_hash"),
            (
                #"{"format": 1, "log": {"identity": 1, "offset": 0, "lines": 0, "seq": 0, "tail_hash": "0000000000000000"}, "segments": [{"number": 0}]}"#,
                "segments[0].number"
            ),
        ])
    func badManifestsAreRefused(text: String, message: String) {
        do {
            _ = try Manifest.decode(Array(text.utf8), path: "segments/manifest.json")
            Issue.record("\(text) was read")
        } catch {
            #expect(error.errorDescription?.contains(message) == true, "\(error.errorDescription ?? "")")
        }
    }

    @Test("a manifest naming a segment number twice is refused naming the second")
    func repeatedSegmentNumbersAreRefused() {
        var manifest = Self.manifest
        manifest.segments.append(manifest.segments[1])
        do {
            _ = try Manifest.decode(manifest.encoded(), path: "segments/manifest.json")
            Issue.record("a manifest with segment 8 twice was read")
        } catch {
            #expect(error.errorDescription?.contains("segments[2].number: segment 8 twice") == true, "\(error.errorDescription ?? "")")
        }
    }

    @Test("deletes written and read back are the same; a flipped byte or another segment's file is refused")
    func deletesRoundTrip() throws {
        let deletes = SegmentDeletes(segment: 3, ordinals: [1, 5, 9]).adding([7, 5, 2])
        #expect(deletes.ordinals == [1, 2, 5, 7, 9])
        var bytes = deletes.encoded()
        #expect(try SegmentDeletes.decode(bytes, segment: 3, limit: 12) == deletes)
        #expect(throws: SegmentDamage.self) { try SegmentDeletes.decode(bytes, segment: 4, limit: 12) }
        #expect(throws: SegmentDamage.self) { try SegmentDeletes.decode(bytes, segment: 3, limit: 8) }
        bytes[26] ^= 1
        #expect(throws: SegmentDamage.self) { try SegmentDeletes.decode(bytes, segment: 3, limit: 12) }
    }

    @Test("the ID filter lets every ID it holds through and few it does not")
    func idFilterHasNoFalseNegatives() {
        var random = SplitMix64(state: 5)
        func id() -> [UInt8] { Array("nyt://article/\(random.next())-\(random.next())".utf8) }
        let held = (0..<20_000).map { _ in id() }
        let filter = IDFilter.build(held.map { $0.withUnsafeBytes { IDFilter.hash($0) } })
        let passed = filter.withUnsafeBytes { raw in
            held.allSatisfy { $0.withUnsafeBytes { IDFilter.mayContain(IDFilter.hash($0), in: raw) } }
        }
        #expect(passed)
        let others = (0..<20_000).map { _ in id() }
        let falsePositives = filter.withUnsafeBytes { raw in
            others.filter { $0.withUnsafeBytes { IDFilter.mayContain(IDFilter.hash($0), in: raw) } }.count
        }
        #expect(falsePositives < 20_000 / 25, "\(falsePositives) of 20,000")
    }

    @Test(
        "the merge policy merges a full size class, smallest first, and rewrites a segment mostly deleted",
        arguments: [
            ([10, 10, 10], [Int]?.some([1, 2, 3])), ([10, 10], nil), ([100, 10, 10, 10], [2, 3, 4]), ([40, 40, 40, 10, 10], [1, 2, 3]),
        ])
    func mergePolicyPicks(sizes: [Int], expected: [Int]?) {
        let segments = sizes.enumerated().map { index, size in
            Manifest.Segment(
                number: index + 1, documents: size, tombstones: 0, bytes: 0, firstSequence: 0, lastSequence: 0, footerHash: 0, liveBytes: 0)
        }
        #expect(MergePolicy(factor: 3, base: 8).nextMerge(segments) == expected)
        var dead = segments
        dead[0].deletedDocuments = dead[0].documents
        if sizes.count < 3 { #expect(MergePolicy(factor: 3, base: 8).nextMerge(dead) == [1]) }
    }

    @Test(
        "the merge policy merges only as many of a class as its cap takes and leaves full segments out",
        arguments: [
            ([30, 30, 30], [Int]?.some([1, 2, 3])), ([40, 40, 40], [1, 2]), ([50, 10, 10, 10], [2, 3, 4]), ([60, 60, 60], nil),
            ([49, 49, 49], [1, 2]),
        ])
    func mergePolicyCaps(sizes: [Int], expected: [Int]?) {
        let segments = sizes.enumerated().map { index, size in
            Manifest.Segment(
                number: index + 1, documents: size, tombstones: 0, bytes: 0, firstSequence: 0, lastSequence: 0, footerHash: 0, liveBytes: 0)
        }
        #expect(MergePolicy(factor: 3, base: 8, maxDocuments: 100).nextMerge(segments) == expected)
    }
}
