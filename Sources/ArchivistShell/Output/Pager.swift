import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Long output of the interactive shell shown through a pager, as psql does: `$PAGER`, else
/// `less -FRX` (which leaves at once when the text fits after all, keeps colours, and leaves the
/// text on the screen). Never in scripts or pipes: the shell holds a command's output only when
/// standard output is a terminal.
enum Pager {
    /// The pager to run through `sh -c`: `$PAGER` when set and not blank, else `less -FRX`.
    static func command(in environment: Environment) -> String {
        if let pager = environment["PAGER"], !pager.trimmingCharacters(in: .whitespaces).isEmpty { return pager }
        return "less -FRX"
    }

    /// The rows of the terminal on `descriptor`, or nil when it is not one.
    static func terminalRows(of descriptor: Int32 = STDOUT_FILENO) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// Whether `bytes` need more rows than `rows` (one is kept for the next prompt).
    static func isTaller(_ bytes: [UInt8], than rows: Int) -> Bool {
        var lines = 0
        for byte in bytes where byte == 0x0A {
            lines += 1
            if lines >= rows { return true }
        }
        return false
    }

    /// Pipes `bytes` into `sh -c command` and waits for it; false when it could not be started
    /// (the caller then prints them itself). A pager quit before the end (`q` in less) is not an
    /// error: the rest is dropped.
    static func show(_ bytes: [UInt8], command: String) -> Bool {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return false }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, STDIN_FILENO)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        let argv = ["/bin/sh", "-c", command]
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &cArguments, environ)
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            return false
        }
        // A pager that quits early closes the pipe: a failed write, not a SIGPIPE.
        let previous = signal(SIGPIPE, SIG_IGN)
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(writeEnd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    break
                }
                offset += n
            }
        }
        close(writeEnd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        signal(SIGPIPE, previous)
        return true
    }
}
