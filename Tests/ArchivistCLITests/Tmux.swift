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
    /// `folder`.
    static func run(_ arguments: [String], socket: String, folder: String) throws -> (status: Int32, output: String) {
        let outputPath = folder + "/tmux-\(UUID().uuidString).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ["tmux", "-L", socket] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "tmux", &actions, nil, &cArguments, environ)
        try #require(spawned == 0, "cannot run tmux (is it installed? scripts/install-deps installs it): \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: outputPath)
        let exited = (status & 0x7f) == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output)
    }
}
