import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// tmux for the tests that drive a real terminal (the interactive shell, trend's chart).
enum Tmux {
    /// Runs `tmux -L socket ARGUMENTS` and waits for that process alone (posix_spawn and waitpid:
    /// the tmux server it may start inherits descriptors, so waiting for pipes to close, as
    /// Foundation's Process does, would wait for the server). Its output goes through a file in
    /// `folder`; when tmux fails, what it printed on standard error follows its output.
    static func run(_ arguments: [String], socket: String, folder: String) throws -> (status: Int32, output: String) {
        let outputPath = folder + "/tmux-\(UUID().uuidString).out"
        let errorPath = outputPath + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // The test process blocks and ignores signals on some threads, and a spawned process keeps
        // the spawning thread's mask and ignored set; a server that kept them would never see the
        // SIGTERM `kill-server` sends it, and would outlive the test holding the runner's pipes.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ["tmux", "-L", socket] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "tmux", &actions, &attributes, &cArguments, environ)
        try #require(spawned == 0, "cannot run tmux (is it installed? scripts/install-deps installs it): \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        var output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
        let exited = (status & 0x7f) == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        if code != 0 { output += errors }
        return (code, output)
    }

    /// Starts the server on `socket` with a session that outlives the test's own. When its last
    /// session ends a tmux server exits, and a session started while it is exiting can find it
    /// gone ("server exited unexpectedly"); with this one kept, sessions come and go on a server
    /// that stays until `kill-server`. A server that fails to come up is asked again, three times
    /// at most (once in a CI run of 779 tests, a session's start failed on a loaded machine).
    static func startServer(socket: String, folder: String) throws {
        var kept = (status: Int32(0), output: "")
        for attempt in 1...3 {
            kept = try run(["new-session", "-d", "-s", "keep", "-x", "20", "-y", "5", "sleep 3600"], socket: socket, folder: folder)
            if kept.status == 0 { return }
            if attempt < 3 { usleep(200_000) }
        }
        try #require(kept.status == 0, "tmux could not start its server (scripts/install-deps installs tmux): \(kept.output)")
    }
}
