import ArchivistBase
import ArchivistStore
import Foundation
import Testing

@testable import ArchivistShell

@Suite("colours of JSON on a terminal")
struct JSONColorsTests {
    static func plain(_ colored: String) -> String {
        colored.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    @Test func keysStringsNumbersBooleansAndNullEachHaveTheirColourAndNothingElseChanges() throws {
        let document = try JSONParser.parse(
            #"{"_id":"a","headline":{"main":"Say \"hi\": now","kicker":null},"word_count":-879.5e2,"is_major":true,"tags":[false,"x"]}"#)
        let bytes = JSONWriter.prettyBytes(document)
        let colored = String(decoding: JSONColors.colored(bytes), as: UTF8.self)
        #expect(Self.plain(colored) == String(decoding: bytes, as: UTF8.self))
        let (k, s, n, b, z, r) = (
            JSONColors.key, JSONColors.string, JSONColors.number, JSONColors.boolean, JSONColors.null, JSONColors.reset
        )
        #expect(colored.contains(k + #""headline""# + r + ":"))
        #expect(colored.contains(s + #""Say \"hi\": now""# + r))  // a colon inside a string is not a key's
        #expect(colored.contains(z + "null" + r))
        #expect(colored.contains(n + "-879.5e2" + r))
        #expect(colored.contains(b + "true" + r) && colored.contains(b + "false" + r))
        #expect(colored.contains(s + #""x""# + r))
    }

    @Test func bytesThatAreNotJSONPassThrough() {
        let text = Array("nope, tru \"open".utf8)
        #expect(Self.plain(String(decoding: JSONColors.colored(text), as: UTF8.self)) == "nope, tru \"open")
    }
}
