import ArchivistClient
import ArchivistPostgres
import ArchivistStore
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension Shell {
    /// The interactive shell: a banner, a prompt naming the data folder, line editing and history
    /// from `reader`; a command that is not finished continues on a `...>` prompt and is one
    /// history entry. Ctrl-C abandons the line being typed; Ctrl-D on an empty line exits.
    public func runInteractive(reader: LineReader) -> Int32 {
        printBanner()
        EditLineReader.completer = { [self] text in completions(for: text) }
        var pending = PendingCommand()
        while true {
            let folderName =
                isCopy ? "pg:" + ((try? CopyAddress(dataFolder))?.table.description ?? "copy") : (dataFolder as NSString).lastPathComponent
            let prompt = pending.isEmpty ? "\(folderName)> " : "...> "
            output.flush()
            errors.flush()
            switch reader.readLine(prompt: prompt) {
            case .end:
                output.line("")
                output.flush()
                return ExitStatus.success
            case .interrupted:
                pending.clear()
                continue
            case .line(let line):
                let step = pending.add(line)
                if step == .tooLong {
                    reportError("the command is longer than \(PendingCommand.maximumBytes >> 20) MiB: it is dropped")
                    continue
                }
                guard case .command(let command, let words) = step else { continue }
                reader.addToHistory(command)
                guard !words.isEmpty else { continue }
                let paging = usesPager && output.isTerminal
                if paging { output.startHolding() }
                let status = runLine(words)
                if paging { showHeld() }
                if status == Self.quitStatus {
                    output.flush()
                    return ExitStatus.success
                }
            }
        }
    }

    /// Writes the output held while a command ran: through the pager when it is taller than
    /// the terminal, else as it is.
    func showHeld() {
        let held = output.stopHolding()
        if let rows = Pager.terminalRows(), Pager.isTaller(held, than: rows) {
            errors.flush()
            if Pager.show(held, command: Pager.command(in: environment)) { return }
        }
        output.write(bytes: held)
        output.flush()
    }

    /// `archivist 0.1.0 · data folder data · 1,234 documents`.
    func printBanner() {
        var documents = "? documents"
        var place = "data folder \(dataFolder)"
        do {
            if let copy = try copy() {
                place = "copy \(copy.display) (replicated from \(copy.checkpoint.folder))"
                documents = Plural.count(copy.checkpoint.rows, "document")
            } else {
                documents = Plural.count(try store().count, "document")
            }
        } catch {
            reportError(Shell.message(for: error))
        }
        output.line("archivist \(Self.version) · \(place) · \(documents)")
        output.line("Type 'help' for the commands, '.help' for the shell's own, Ctrl-D to leave.")
    }
}
