/// The exit statuses of `archivist`.
public enum ExitStatus {
    /// Success.
    public static let success: Int32 = 0
    /// A command failed.
    public static let failure: Int32 = 1
    /// Bad usage (as sysexits' EX_USAGE).
    public static let usage: Int32 = 64
    /// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
    public static let interrupted: Int32 = 130
}
