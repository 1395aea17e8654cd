#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The variables a shell reads: the process's own, each looked up when it is asked for
/// (`getenv`), or a fixed set (tests, embedding).
///
/// Copying the whole environment into a dictionary at start, as `ProcessInfo.environment`
/// does, cost a few hundred microseconds of every command, most of which read two variables.
public struct Environment: Sendable {
    private let fixed: [String: String]?

    /// The process's environment, read variable by variable.
    public static var process: Environment { Environment(fixed: nil) }

    /// A fixed set of variables; every other name is unset.
    public init(_ variables: [String: String]) {
        fixed = variables
    }

    private init(fixed: [String: String]?) {
        self.fixed = fixed
    }

    /// The value of the variable `name`, or nil when it is unset.
    public subscript(name: String) -> String? {
        if let fixed { return fixed[name] }
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
