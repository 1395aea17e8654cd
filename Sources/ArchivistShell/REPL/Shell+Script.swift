import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension Shell {
    /// Runs a script: each line one command (blank lines and `#` comments skipped; an unfinished
    /// quote, JSON argument or trailing `\` continues on the next line). Errors go to stderr as
    /// `error: line N: ...`; later lines still run unless `bail`. Returns 1 if any command failed.
    /// A line or a command longer than ``PendingCommand/maximumBytes`` stops the script (what
    /// follows it cannot be told apart from its text).
    public func runScript(bail: Bool, nextLine: () -> String?) -> Int32 {
        runScript(bail: bail) { nextLine().map(ScriptLineReader.Line.text) }
    }

    /// Runs a script read with a bound on its lines (``ScriptLineReader``).
    func runScript(bail: Bool, nextLine: () -> ScriptLineReader.Line?) -> Int32 {
        var failed = false
        var pending = PendingCommand()
        var firstLine = 0
        var number = 0
        defer {
            lineNumber = nil
            output.flush()
            errors.flush()
        }
        while let read = nextLine() {
            number += 1
            if pending.isEmpty { firstLine = number }
            let step: PendingCommand.Step
            switch read {
            case .text(let line): step = pending.add(line)
            case .tooLong: step = .tooLong
            }
            if step == .tooLong {
                lineNumber = number
                reportError(
                    "the command is longer than \(PendingCommand.maximumBytes >> 20) MiB (started on line \(firstLine)); the script stops here"
                )
                lineNumber = nil
                return ExitStatus.failure
            }
            guard case .command(_, let words) = step, !words.isEmpty else { continue }
            lineNumber = firstLine
            let status = runLine(words)
            output.flush()
            errors.flush()
            if status == Self.quitStatus { break }
            if status != ExitStatus.success {
                failed = true
                if bail { break }
            }
        }
        if !pending.isEmpty {
            lineNumber = firstLine
            reportError("the command is not finished at the end of the input (an open quote, bracket or trailing '\\')")
            failed = true
        }
        return failed ? ExitStatus.failure : ExitStatus.success
    }

    /// What `runLine` returns for `.quit`.
    static let quitStatus: Int32 = -1

    /// Runs one command line's words: a dot-command or a command of the table.
    func runLine(_ words: [ShellWord]) -> Int32 {
        let name = words[0].text
        let arguments = Array(words.dropFirst())
        // A dot-command, or an alias of one without the dot (`quit`) alone on its line.
        if name.hasPrefix(".") || (arguments.isEmpty && DotCommand.named(name) != nil) {
            return runDotCommand(name, arguments.map(\.text))
        }
        let start = Date()
        let status = execute(command: name, words: arguments)
        if showsTimer {
            errors.line(String(format: "time: %.3f s", Date().timeIntervalSince(start)))
        }
        return status
    }
}
