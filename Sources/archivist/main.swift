#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import ArchivistShell
import Foundation

let environment = ProcessInfo.processInfo.environment
let shell = Shell(dataFolder: environment["ARCHIVIST_DATA"].flatMap { $0.isEmpty ? nil : $0 } ?? "data",
                  output: TextSink(descriptor: STDOUT_FILENO), errors: TextSink(descriptor: STDERR_FILENO))
exit(shell.run(arguments: Array(CommandLine.arguments.dropFirst())))
