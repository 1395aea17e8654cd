import ArchivistBase
import ArchivistTestSupport
import Testing

@testable import ArchivistStore

/// Skipping a value refuses what parsing it refuses. The first case is the input the JSON fuzz
/// target found (`scripts/fuzz json`): a byte 0xDC alone inside a string, which the skipper let
/// through while the parser refused it.
@Suite("skipping agrees with parsing")
struct SkipAgreesWithParseTests {
    @Test(
        "parse and skip accept and refuse the same strings",
        arguments: [
            [UInt8](#"{"a":[1,2.5e3,-0,true,false,null,"\u00e9"#.utf8) + [0xDC] + Array(#"ud83d\ude00"],"b":{}}"#.utf8),
            Array(#""\ud800""#.utf8), Array(#""\udc00""#.utf8), Array(#""\ud800\u0041""#.utf8), Array(#""\ud83d\ude00""#.utf8),
            [0x22, 0xC3, 0xA9, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            Array(#""plain ascii longer than twenty-four bytes, to take the long path""#.utf8),
            Array(#""long path with a bad byte after twenty-four bytes "#.utf8) + [0xFF, 0x22],
        ])
    func agree(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser.Reader(buffer)
            var skipper = JSONParser.Reader(buffer)
            let parsed = (try? parser.parseValue()) != nil
            let skipped = (try? skipper.skipValue()) != nil
            #expect(parsed == skipped, "parse \(parsed), skip \(skipped)")
            if parsed { #expect(parser.index == skipper.index) }
        }
    }
}
