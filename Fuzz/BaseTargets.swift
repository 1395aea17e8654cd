// What the libFuzzer targets of every module share, compiled into the ArchivistBase module itself
// (`scripts/fuzz`), which every other module imports.

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Traps with a message when two implementations disagree (used by the targets of every module).
public func agree(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fputs("disagreement: \(message())\n", stderr)
        abort()
    }
}
