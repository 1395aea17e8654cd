import ArchivistStore
import Foundation

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// How a command can fail; each case maps to an exit status.
public enum ShellError: Error, LocalizedError, Sendable, Equatable {
    /// The command line was wrong (exit 64): the message, and the command whose usage to show.
    case usage(String, command: String?)
    /// The command ran and failed (exit 1).
    case failure(String)
    /// The command already reported its errors on stderr; it only needs exit 1.
    case reported
    /// The command stopped early at Ctrl-C, keeping what it had committed (exit 130).
    case interrupted(String)

    /// A one-line message.
    public var errorDescription: String? {
        switch self {
        case .usage(let message, _): return message
        case .failure(let message): return message
        case .reported: return nil
        case .interrupted(let message): return message
        }
    }

    /// The process exit status this error calls for.
    public var exitStatus: Int32 {
        switch self {
        case .usage: return ExitStatus.usage
        case .failure, .reported: return ExitStatus.failure
        case .interrupted: return ExitStatus.interrupted
        }
    }
}

/// The C library's message for the current `errno`, lowercased to sit inside an error line:
/// `no such file or directory`.
func systemErrorMessage() -> String {
    String(cString: strerror(errno)).lowercased()
}
