import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Ctrl-C during a long command (`search`, `refresh`, `archive`, `import`, `find`, `export`): the first press
/// asks the command to stop at its next safe point (after the page or batch in hand, whose data is
/// committed; a listing before its next document); a second press ends the process at once
/// (exit 130), which the store's atomic writes make safe.
public enum Interruption {
    private static let presses = Atomic<Int>(0)

    /// Whether Ctrl-C was pressed since the current `catching` began (or `acknowledge()`).
    public static var isRequested: Bool { presses.load(ordering: .relaxed) > 0 }

    /// Forgets the presses so far: the command has stopped what they asked it to stop and goes on
    /// (`search` lists what it fetched); a later press asks again.
    public static func acknowledge() {
        presses.store(0, ordering: .relaxed)
    }

    /// Runs `body` with Ctrl-C noted instead of ending the process, then puts back the SIGINT
    /// handler there was (the interactive shell's, or the default).
    public static func catching<T>(_ body: () throws -> T) rethrows -> T {
        presses.store(0, ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            if Interruption.presses.add(1, ordering: .relaxed).newValue >= 2 {
                let message: StaticString = "\ninterrupted twice: stopping now\n"
                _ = write(STDERR_FILENO, message.utf8Start, message.utf8CodeUnitCount)
                _exit(130)
            }
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGINT, &action, &previous)
        // A parent may have started us with SIGINT blocked (threads of a thread pool block signals,
        // and a child inherits the mask): unblock it on this thread while the command runs.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &blocked, &previousMask)
        defer {
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            sigaction(SIGINT, &previous, nil)
            presses.store(0, ordering: .relaxed)
        }
        return try body()
    }
}
