import ArchivistStore
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Merges in the background: after a command whose writes left a merge due, the shell starts
/// `archivist merge --background` for the data folder, detached (its own session, standard
/// streams on /dev/null), and returns; the merger builds the merges while writers go on
/// (`DocumentStore.runDueMerges`), one merger per folder at a time.
extension Shell {
    /// Starts a merger when the store leaves merges to the background, the command flushed and
    /// left a merge due, and no merger is at work (one at work runs every due merge before it
    /// stops). A merger that cannot be started leaves the merges due: the next flush starts one,
    /// and past `mergeFactor × 6` segments writes merge inline. Reads start none.
    func startMergesIfDue() {
        reapMergers()
        guard let executable = mergerExecutable, let store = openedStore, store.mergesInBackground,
            store.takeMergeDueAfterFlush(), !store.isMerging
        else { return }
        if let pid = Self.spawnDetached(executable, ["--data", store.folder, "merge", "--background"]) {
            startedMergers.append(pid)
        }
    }

    /// Reaps the mergers this shell started that have ended (an interactive session lives on).
    func reapMergers() {
        startedMergers.removeAll { pid in waitpid(pid, nil, WNOHANG) == pid }
    }

    /// Starts `executable` with `arguments` in a session of its own, its standard streams on
    /// /dev/null and no other descriptor of this process; returns its pid, or nil.
    static func spawnDetached(_ executable: String, _ arguments: [String]) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Descriptors without close-on-exec (a pipe a library opened) are closed in the merger:
        // it must hold no pipe a parent of this process waits on to end.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name), fd > 2 else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc's value; the macro is not imported): a session of its own, so
        // the terminal's Ctrl-C and hang-up do not reach it.
        posix_spawnattr_setflags(&attributes, Int16(0x80))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let status = argv.withUnsafeBufferPointer { pointer in
            posix_spawn(&pid, executable, &actions, &attributes, pointer.baseAddress!, environ)
        }
        return status == 0 ? pid : nil
    }
}
