import ArchivistShell
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// The executable links no network stack: `search` and `refresh` load libArchivistNetwork.so (built
// beside it) when they send their first request.
// The data folder is --data, else ARCHIVIST_DATA (both read by `run`), else ./data.
let shell = Shell(dataFolder: "data", output: TextSink(descriptor: STDOUT_FILENO), errors: TextSink(descriptor: STDERR_FILENO))
// Merges run in the background as `archivist merge --background`: this very executable (read
// with readlink: FileManager's set-up is a measurable part of a one-shot command's start).
var executablePath = [UInt8](repeating: 0, count: 4096)
let executableLength = executablePath.withUnsafeMutableBufferPointer { buffer in
    buffer.withMemoryRebound(to: CChar.self) { readlink("/proc/self/exe", $0.baseAddress!, $0.count) }
}
if executableLength > 0, executableLength < executablePath.count {
    let executable = String(decoding: executablePath[0..<executableLength], as: UTF8.self)
    if !executable.hasSuffix(" (deleted)") { shell.mergerExecutable = executable }
}
exit(shell.run(arguments: Array(CommandLine.arguments.dropFirst())))
