import ArchivistShell
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// The executable links no network stack: `search` and `refresh` load libArchivistNetwork.so (built
// beside it) when they send their first request.
// The data folder is --data, else ARCHIVIST_DATA (both read by `run`), else ./data.
let shell = Shell(dataFolder: "data", output: TextSink(descriptor: STDOUT_FILENO), errors: TextSink(descriptor: STDERR_FILENO))
// Merges run in the background as `archivist merge --background`: this very executable.
if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), !executable.hasSuffix(" (deleted)") {
    shell.mergerExecutable = executable
}
exit(shell.run(arguments: Array(CommandLine.arguments.dropFirst())))
