import ArchivistBase
import ArchivistShell
import ArchivistTestSupport
import Foundation
import Testing

/// `help` and `help COMMAND` print exactly the golden files in Fixtures/golden (regenerate them
/// with `archivist help > help.txt` and `archivist help CMD > help-CMD.txt` after a deliberate
/// change, and read the diff).
@Suite("help matches its golden files")
struct HelpGoldenTests {
    let sandbox: TemporaryFolder

    init() throws {
        sandbox = try TemporaryFolder()
    }

    static let commands = CommandTable.standard.names

    func golden(_ name: String) throws -> String {
        try String(contentsOfFile: CLI.fixture("golden/\(name).txt"), encoding: .utf8)
    }

    @Test func helpListsEveryCommandAsInTheGoldenFile() throws {
        let result = try sandbox.run(["help"])
        #expect(result.status == 0)
        #expect(result.stdoutText == (try golden("help")))
        for command in Self.commands {
            #expect(result.stdoutText.contains("\n  \(command) "), "help lists \(command)")
        }
    }

    @Test(arguments: commands)
    func helpCommandMatchesItsGoldenFile(command: String) throws {
        let result = try sandbox.run(["help", command])
        #expect(result.status == 0)
        #expect(result.stdoutText == (try golden("help-\(command)")), "help \(command) changed")
    }

    @Test func everyCommandHasAGoldenFile() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: CLI.fixture("golden"))
        #expect(Set(files) == Set(["help.txt"] + Self.commands.map { "help-\($0).txt" }))
    }
}
