import CMalloc

/// The process's heap, as the long maintenance commands see it.
public enum ProcessMemory {
    /// Hands the free pages of every malloc arena back to the system (glibc's `malloc_trim`).
    ///
    /// glibc keeps what a phase freed in its arenas (the main heap and one per thread that
    /// allocated) and counts it in the resident memory until something reuses it: after a
    /// `repair`'s build of the segments, 109 MB of free heap stayed resident through the `check`
    /// that followed, and the reading threads' arenas grew through it. The builds, merges and
    /// checks call this between phases and batches; it costs a walk of the free lists.
    public static func releaseFreePages() {
        _ = archivist_malloc_trim()
    }
}
