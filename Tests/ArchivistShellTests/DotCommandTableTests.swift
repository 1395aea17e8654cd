import ArchivistBase
import ArchivistClient
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistShell

/// The shell's own commands are declared once, in `DotCommand.all`: its dispatch, `.help` and
/// completion are read from there.
@Suite("the dot-command table")
struct DotCommandTableTests {
    /// Runs one script line in `shell`: its status, and what it wrote to stderr.
    func run(_ line: String, in shell: Shell, errors: TextSink) -> (status: Int32, errors: String) {
        let before = errors.capturedText.count
        var lines = [line]
        let status = shell.runScript(bail: false) { lines.popLast() }
        return (status, String(errors.capturedText.dropFirst(before)))
    }

    @Test("every declared dot-command, and each of its names, is dispatched, listed by .help and completed")
    func everyDotCommandIsDispatchedListedAndCompleted() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let output = TextSink()
        let errors = TextSink()
        let shell = Shell(dataFolder: sandbox.data, output: output, errors: errors)
        let unknown = run(".frobnicate", in: shell, errors: errors)
        #expect(unknown.status == ExitStatus.failure && unknown.errors.contains("unknown or malformed shell command"))
        #expect(run(".help", in: shell, errors: errors).status == ExitStatus.success)
        let help = output.capturedText.split(separator: "\n").map(String.init)
        let first = shell.completions(for: "")
        #expect(!DotCommand.all.isEmpty)
        for command in DotCommand.all {
            let listed = help.filter { $0.hasPrefix(command.names.joined(separator: ", ")) && $0.hasSuffix(" " + command.summary) }
            #expect(listed.count == 1, "\(command.name) in .help:\n\(help.joined(separator: "\n"))")
            let arguments: String
            switch command.arguments {
            case .none, .optional: arguments = ""
            case .word: arguments = " " + sandbox.root + "/other"
            case .oneOf(let words): arguments = " " + words[0]
            }
            for name in command.names {
                let result = run(name + arguments, in: shell, errors: errors)
                #expect(result.status == ExitStatus.success && result.errors.isEmpty, "\(name)\(arguments): \(result)")
                #expect(first.contains(name), "\(name) is offered as a first word")
                #expect(shell.completions(for: name + " ") == command.arguments.completions, "\(name)'s argument")
                #expect(CommandTable.standard.overview.contains(name), "help's overview names \(name)")
            }
        }
    }

    @Test(".help lists the dot-commands, aligned, in the table's order")
    func theHelpList() {
        #expect(
            DotCommand.help == """
                .mode [table|json|jsonl|csv]   show or set the output format
                .timer on|off                  print each command's wall time on stderr
                .pager on|off                  show output taller than the terminal through $PAGER (else less -FRX)
                .open DIR                      switch to another data folder (or a postgresql:// copy, read-only)
                .quit, .exit, quit, exit       stop reading commands (Ctrl-D too)
                .help                          this list

                """)
    }
}
