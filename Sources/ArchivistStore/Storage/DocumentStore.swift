import ArchivistBase
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A folder of JSON documents, one file per document, with an index of them loaded in memory.
///
/// Writes are atomic and durable: a call that returns has synced its changes, and a crash at any
/// moment leaves each document either its old or its new complete version. One process writes at a
/// time (a lock file); any number read. Every call first picks up what other processes committed.
/// It is the `DataFolder` the NYT client fills.
public final class DocumentStore: DataFolder, Sendable {
    /// How a store behaves.
    public struct Options: Sendable {
        /// How long a writer waits for another process's write lock, in seconds.
        public var lockTimeout: Double
        /// A writer writes the tail (the log after the segments) into a new segment once it holds
        /// this many changes (0: never, as a test of the log alone wants).
        public var flushThreshold: Int
        /// The same while a bulk import defers flushes (`defersMerges`): larger segments, fewer
        /// merges, the memory of that many changes.
        public var bulkFlushThreshold: Int
        /// How many segments of one size class a merge joins (LevelDB's and Lucene's merge
        /// factor): `docs/ARCHITECTURE.md`, "Merges".
        public var mergeFactor: Int
        /// The most documents a merge writes into one segment (Lucene's `maxMergedSegmentMB`;
        /// default 4,194,304): a merge's memory grows with what it writes, about 5 bytes a
        /// document, so this bounds it whatever the store's size; a segment of half this or more
        /// merges no further (`MergePolicy`).
        public var maxSegmentDocuments = 1 << 22
        /// Whether the store starts from its segments when they are usable (false: it reads the
        /// whole log, as a test of the log alone wants).
        public var usesSegments: Bool
        /// Whether writes leave the merges the policy calls for to `runDueMerges()` (a merger in
        /// another process or thread, which builds them without the writers' lock), merging
        /// themselves only once `mergeFactor × 6` segments wait (false: a write that flushes runs
        /// the due merges before it returns).
        public var mergesInBackground = false
        /// Whether a bulk import's flushes (`defersMerges`) are built beside its writes: the tail
        /// as of one commit is written into a segment on another thread while the next batches
        /// commit, and installed at a later commit, the lines after it read again as the tail
        /// (false: a commit that reaches the threshold builds the segment before it returns).
        public var flushesInBackground = false
        /// Whether the store reads the log's tail (the changes after the segments) into memory
        /// (false: a process that only merges segments, as the background merger: the tail, up
        /// to `bulkFlushThreshold` changes while an import runs, some 110 MB at 32,768, is
        /// neither read nor kept, so a merger's memory is that of its merge). Such a store knows
        /// only its segments: it answers nothing about the tail, and neither builds segments,
        /// migrates the folder nor recovers an interrupted write (the next writer does).
        public var readsTail = true
        /// Whether a flush planned in the background is waited for by the commit that planned it
        /// (its failure then that commit's flush failure) and installed by the next (crash tests:
        /// every run then performs the same operations in the same order, and a crash inside the
        /// build is reported by the call it happened in; the build still runs on another thread,
        /// and only writes its own file in `segments/flushing/`).
        var waitsForBackgroundFlushes = false
        /// The bytes of log lines `check` sorts in memory before it writes a sorted run to `tmp/`
        /// (`SortedRuns`): tests make it small to have runs at any size.
        var checkRunBytes = 16 << 20

        /// Options with defaults: a 10 s lock wait, a segment every 1,024 changes (32,768 in a
        /// bulk import), merges of 8. Every process that opens the store reads the tail (the
        /// changes after the segments) and builds its query structures for it: about 25k
        /// instructions a change at 5M, so a tail of 4,096 cost a one-shot `get` some 30 ms.
        public init(
            lockTimeout: Double = 10, flushThreshold: Int = 1024, bulkFlushThreshold: Int = 32_768, mergeFactor: Int = 8,
            usesSegments: Bool = true
        ) {
            self.lockTimeout = lockTimeout
            self.flushThreshold = flushThreshold
            self.bulkFlushThreshold = max(flushThreshold, bulkFlushThreshold)
            self.mergeFactor = max(2, mergeFactor)
            self.usesSegments = usesSegments
        }
    }

    /// The data folder, as given.
    public let folder: String
    /// What the store knows of its documents: projection, long fields, text search, side files (its
    /// ID prefix is the folder's, from `archivist.json`).
    public let schema: StoreSchema
    let fileSystem: any FileSystem
    let options: Options
    let state: Mutex<State>
    /// The projection batches are encoded with before they take the lock: the state's as last
    /// seen, readable while a commit holds the state (a commit checks it and encodes again when
    /// it has changed).
    let encodingProjection: Mutex<Projection>
    /// The last query index built, with the index state it was built from.
    let queryCache = Mutex<(key: IndexGeneration, index: QueryIndex)?>(nil)
    /// The segments' searchers and the tail's query index last built, with the index state.
    let segmentCache = Mutex<(key: IndexGeneration, segments: Segments)?>(nil)

    /// What a rebuild of the log from the documents found: the files that are not a document in
    /// its place (unreadable, without `_id`, misplaced), and the log it wrote (its identity and
    /// length once installed).
    struct DocumentsScan {
        var identity: UInt64?
        var consumed: Int
        var problems: [StoreProblem]
    }

    struct State {
        var metadata: StoreMetadata
        var entries = EntryTable()
        /// How far the index file has been read.
        var index = ChangeLog.Position()
        var knownBuckets: Set<String> = []
        /// The manifest of the segments the entries start from (nil: none, the whole log read).
        var manifest: Manifest?
        /// The bytes of `segments/manifest.json` last found to say what `manifest` says (nil: not
        /// read since the state changed): `refresh` notices another process's merge by them.
        var manifestBytes: [UInt8]?
        /// Whether flushes wait for the bulk threshold (a bulk import in progress).
        var deferFlushes = false
        /// Whether the segments were found damaged: the store reads the whole log from then on
        /// (until a writer installs new ones).
        var refusesSegments = false
        /// Why the last automatic flush or merge failed.
        var lastFlushFailure: StoreError?
        /// What opening the store migrated.
        var migration: FormatMigration?
        /// Whether this process built the segments from the log when it opened the store.
        var builtSegmentsAtOpen = false
        /// Where the feed starts after this process rebuilt an unreadable or missing index from
        /// the documents, numbering every document again (nil: it did not).
        var renumberedFeedStart: Int?
        /// What the last rebuild from the documents found, as of the log it wrote (nil: this
        /// process has not rebuilt one): `repair` takes it instead of reading every document
        /// again while the log is still exactly that one (and, for a rebuild before the repair,
        /// every file's status is as the rebuild found it).
        var documentsScan: DocumentsScan?
        /// Segments just opened and found usable, for the load that follows (taken by it).
        var opened: (Manifest, [OpenSegment], [UInt8])?
        var temporaryCounter = 0
        /// Whether this process flushed the tail since `takeMergeDueAfterFlush` last asked.
        var flushedSinceAsked = false
        /// The tail's segment this process builds beside its writes, installed at a later commit
        /// (`Options.flushesInBackground`).
        var pendingFlush: PendingFlush?
        /// Writes' look-ups of IDs in the segments since their mapped pages were last let go
        /// (`DocumentStore.countLookups`).
        var lookupsSinceDrop = 0
        /// Index lines applied to the entries since the store opened (by refreshes and loads of
        /// the segments): what the tail cost to follow, which a test bounds.
        var linesFollowed = 0

        var projection: Projection { metadata.projection }

        /// The problems of the document files the last rebuild read, when the log is still the
        /// one it wrote (same file, nothing appended since); nil otherwise.
        var freshDocumentProblems: [StoreProblem]? {
            guard let scan = documentsScan, scan.identity == index.identity, scan.consumed == index.consumed else { return nil }
            return scan.problems
        }

        /// The highest sequence number given out: the log's last, or the metadata's floor (when a
        /// rewrite dropped the last lines).
        var lastSequence: Int { max(index.sequence, metadata.sequenceFloor) }

        /// Names the index contents: changes whenever entries change.
        var generation: IndexGeneration {
            IndexGeneration(
                identity: index.identity, consumed: index.consumed, count: entries.provisionalCount, projection: projection.paths,
                manifest: manifest)
        }
    }

    /// What a built query index depends on.
    struct IndexGeneration: Equatable {
        var identity: UInt64?
        var consumed: Int
        var count: Int
        var projection: [String]
        var manifest: Manifest?
    }

    /// Opens (creating when missing) the data folder at `folder`.
    ///
    /// A crash left by an earlier writer is recovered here: temporary files are removed and the
    /// index entries of the interrupted batch are rederived from the documents. An unreadable index
    /// is rebuilt from the documents; a folder of an older format is migrated (see `migration`), and
    /// one of a newer format is refused.
    public init(
        folder: String, schema: StoreSchema, options: Options = Options(),
        fileSystem: any FileSystem = POSIXFileSystem()
    ) throws(StoreError) {
        self.folder = folder
        self.fileSystem = fileSystem
        self.options = options
        if let status = try fileSystem.status(of: folder) {
            guard status.isFolder else { throw .notAFolder(path: folder) }
        } else {
            try fileSystem.createFolder(folder)
        }
        // The store's folders are its own: a link out of the data folder would put documents
        // where its renames, syncs and lock do not reach (and across file systems, renames fail).
        for inside in [FileNames.documents, FileNames.temporary] {
            if let target = try fileSystem.symbolicLinkTarget(of: folder + "/" + inside) {
                throw .invalidFile(
                    path: folder + "/" + inside,
                    reason:
                        "is a symbolic link (to \(target)); the store's folders must be inside the data folder (move the files in and remove the link)"
                )
            }
        }
        let metadataPath = folder + "/" + FileNames.metadata
        let existing = try fileSystem.contents(of: metadataPath)
        let metadata = try existing.map { (bytes) throws(StoreError) in try StoreMetadata.decode(bytes, path: metadataPath, schema: schema)
        }
        var created = StoreMetadata(createdAt: .now(), projection: schema.projection)
        created.idPrefix = schema.idPrefix
        let initial = State(metadata: metadata ?? created)
        // The files are named by the folder's rule (`archivist.json`), not by the schema's: a
        // folder opened with another schema still finds every document where it is.
        var folderSchema = schema
        folderSchema.idPrefix = initial.metadata.idPrefix
        self.schema = folderSchema
        state = Mutex(initial)
        encodingProjection = Mutex(initial.projection)
        if existing == nil {
            try writeMetadataIfMissing()
        }
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.open(&state)
        }
        try migrateIfNeeded()
    }

    /// The path of a file inside the folder.
    func path(_ relative: String) -> String { folder + "/" + relative }

    /// The file of the document `id`, relative to the folder (named by the schema's rule).
    func documentPath(for id: String) -> String { FileNames.documentPath(for: id, in: schema) }

    /// The change log (`index.jsonl`), or, on the thread of a rebuild that builds the segments
    /// while it writes the new log aside, that file (`LogAside`).
    var changeLog: ChangeLog {
        if let aside = Self.logAside, aside.folder == folder {
            return ChangeLog(folder: folder, fileSystem: fileSystem, file: aside.file)
        }
        return ChangeLog(folder: folder, fileSystem: fileSystem)
    }

    /// A log being written aside that the state follows, for the segments built from it before it
    /// is renamed into place: their manifests name that file (its identity), so none is used if
    /// the rebuild stops before the rename, and all are once it is `index.jsonl`.
    struct LogAside: Sendable {
        /// The data folder, as the store was given it.
        var folder: String
        /// The file, relative to the folder.
        var file: String
    }

    /// The log written aside on this thread (bound only for the rebuild's own calls).
    @TaskLocal static var logAside: LogAside?

    /// The journal of the batch being written.
    var journal: Journal { Journal(folder: folder, fileSystem: fileSystem) }

    // MARK: Reading

    /// Runs `body` on the state (under its lock). When it finds the snapshot damaged, the store
    /// stops using it (for the rest of the process: the next writer writes a new one), reads the
    /// whole log instead, and runs `body` once more: a damaged snapshot costs time, never an answer.
    func withState<T>(lockHeld: Bool = false, _ body: (inout State) throws(StoreError) -> T) throws(StoreError) -> T {
        try state.withLock { (state: inout State) throws(StoreError) -> T in
            do throws(StoreError) {
                return try body(&state)
            } catch {
                guard case .damagedSnapshot = error else { throw error }
                state.refusesSegments = true
                try self.reopen(&state, lockHeld: lockHeld)
                return try body(&state)
            }
        }
    }

    /// Runs a read of the entry table, reporting a damaged segment as a store error.
    func table<T>(_ body: @autoclosure () throws(SegmentDamage) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .damagedSnapshot(path: path(FileNames.segments), reason: error.description)
        }
    }

    /// Picks up changes other processes have committed since the last call.
    public func refresh() throws(StoreError) {
        try state.withLock { (state: inout State) throws(StoreError) in
            try self.refresh(&state)
        }
    }

    /// The number of live documents.
    public var count: Int {
        get throws(StoreError) {
            try withState { (state: inout State) throws(StoreError) -> Int in
                try self.refresh(&state)
                try self.table(try state.entries.resolve())
                return try self.table(try state.entries.count)
            }
        }
    }

    /// The fields projected into the index.
    public var projection: Projection {
        state.withLock { $0.projection }
    }

    /// The index entry of a document, or nil when there is none.
    public func entry(forID id: String) throws(StoreError) -> IndexEntry? {
        try withState { (state: inout State) throws(StoreError) -> IndexEntry? in
            try self.refresh(&state)
            return try self.table(try state.entries.entry(DocumentID(id)))
        }
    }

    /// The next `limit` live entries in ID byte order whose ID comes after `after` (from the first
    /// when nil): a listing of the whole store a page at a time (`export`), each page costing a
    /// binary search per segment, not the store.
    public func entries(after: String?, limit: Int) throws(StoreError) -> [IndexEntry] {
        try withState { (state: inout State) throws(StoreError) -> [IndexEntry] in
            try self.refresh(&state)
            var page: [IndexEntry] = []
            page.reserveCapacity(min(limit, 65_536))
            try self.table(
                try state.entries.forEachLive(after: after) { entry in
                    page.append(entry)
                    return page.count < limit
                })
            return page
        }
    }

    /// Up to `limit` live IDs that start with `prefix`, in byte order (Tab completion): a binary
    /// search per segment, then a walk while the IDs share the prefix.
    public func ids(startingWith prefix: String, limit: Int) throws(StoreError) -> [String] {
        try withState { (state: inout State) throws(StoreError) -> [String] in
            try self.refresh(&state)
            var found: [String] = []
            try self.table(
                try state.entries.forEachLive(after: prefix, including: true) { entry in
                    guard entry.id.utf8.starts(with: prefix.utf8) else { return false }
                    found.append(entry.id)
                    return found.count < limit
                })
            return found
        }
    }

    /// Every index entry, sorted by ID bytes.
    public func entries() throws(StoreError) -> [IndexEntry] {
        try withState { (state: inout State) throws(StoreError) -> [IndexEntry] in
            try self.refresh(&state)
            return try self.table(try state.entries.sorted())
        }
    }

    /// The stored bytes of a document (pretty JSON with a trailing newline), or nil when none.
    public func documentBytes(withID id: String) throws(StoreError) -> [UInt8]? {
        guard let entry = try entry(forID: id) else { return nil }
        if let bytes = try documentFile(documentPath(for: entry.id)) { return bytes }
        // Another process may have removed the document between the two calls, or be removing
        // it now: a writer unlinks the file, then appends the removal to the log. Look again for
        // a moment (about 100 ms) before calling the index stale.
        for _ in 0..<50 {
            try refresh()
            guard let current = try self.entry(forID: id) else { return nil }
            if let bytes = try documentFile(documentPath(for: current.id)) { return bytes }
            usleep(2_000)
        }
        throw .staleIndex(path: path(documentPath(for: entry.id)), id: id)
    }

    /// The bytes of the file `entry` names, nil when it is gone: for a caller that already holds
    /// the entry (a listing), one read and no look-up. The file may have been replaced since the
    /// entry was read: compare its hash with `entry.hash` before trusting it.
    public func documentBytes(of entry: IndexEntry) throws(StoreError) -> [UInt8]? {
        try documentFile(documentPath(for: entry.id))
    }

    /// The largest document file read: 256 MiB (the NYT's are a few KB, a whole Archive month is
    /// 90 MB). A larger file in `docs/` is refused, never read whole: `check` reports it as
    /// unreadable and `repair` quarantines it.
    public static let maximumDocumentBytes = 256 << 20

    /// The bytes of a document file (relative to the folder), nil when it is gone; a file larger
    /// than `maximumDocumentBytes` fails as a read of it.
    func documentFile(_ relative: String) throws(StoreError) -> [UInt8]? {
        if let status = try fileSystem.status(of: path(relative)), !status.isFolder, status.size > Self.maximumDocumentBytes {
            throw .io(
                path: path(relative), operation: "read",
                message: "is \(status.size >> 20) MiB, larger than the \(Self.maximumDocumentBytes >> 20) MiB a document may be")
        }
        return try fileSystem.contents(of: path(relative))
    }

    /// A stored document, or nil when there is none.
    public func document(withID id: String) throws(StoreError) -> JSONValue? {
        guard let bytes = try documentBytes(withID: id) else { return nil }
        return try parsedDocument(bytes, id: id)
    }

    /// A stored document as one line of compact JSON, byte for byte what
    /// `JSONWriter.compactBytes` of `document(withID:)` gives, copied from the file without
    /// building the value when it can be (`JSONParser.compactCopy`); nil when there is none.
    public func compactDocument(withID id: String) throws(StoreError) -> [UInt8]? {
        guard let bytes = try documentBytes(withID: id) else { return nil }
        return try compactDocument(bytes, id: id)
    }

    /// Documents as compact JSON lines (see `compactDocument(withID:)`), in the order of `ids`, nil
    /// for an ID without a document: the entries are looked up at once, then the files read
    /// several at a time (`ConcurrentReads`), so a cold disk serves a long listing (`export`) at
    /// its rate rather than at one read's latency. Give a window of a listing (a few thousand
    /// IDs), not all of it: what is read is held until it is returned.
    public func compactDocuments(withIDs ids: [String]) throws(StoreError) -> [Result<[UInt8]?, StoreError>] {
        let entries = try withState { (state: inout State) throws(StoreError) -> [IndexEntry?] in
            try self.refresh(&state)
            var entries: [IndexEntry?] = []
            entries.reserveCapacity(ids.count)
            for id in ids { entries.append(try self.table(try state.entries.entry(DocumentID(id)))) }
            return entries
        }
        return ConcurrentReads.shared.map(ids.count) { i -> Result<[UInt8]?, StoreError> in
            do throws(StoreError) {
                guard let entry = entries[i] else { return .success(nil) }
                // Gone since the look-up (another process removed it): as one read decides.
                guard let bytes = try self.documentFile(self.documentPath(for: entry.id)) else {
                    return .success(try self.compactDocument(withID: ids[i]))
                }
                return .success(try self.compactDocument(bytes, id: ids[i]))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The stored bytes of document `id` as one line of compact JSON (see
    /// `compactDocument(withID:)`); an error names its file.
    public func compactDocument(_ bytes: [UInt8], id: String) throws(StoreError) -> [UInt8] {
        if let compact = JSONParser.compactCopy(bytes) { return compact }
        return JSONWriter.compactBytes(try parsedDocument(bytes, id: id))
    }

    /// The stored bytes of document `id`, parsed; an error names its file.
    public func parsedDocument(_ bytes: [UInt8], id: String) throws(StoreError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw .invalidJSON(path: path(documentPath(for: id)), error: error)
        }
    }

    // MARK: Opening and refreshing

    func writeMetadataIfMissing() throws(StoreError) {
        let lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout)
        defer { lock.release() }
        let metadataPath = path(FileNames.metadata)
        guard try fileSystem.contents(of: metadataPath) == nil else { return }
        let bytes = state.withLock { $0.metadata.encoded() }
        try writeDurably(bytes, to: FileNames.metadata)
        // The folder may be new: its entry in the parent folder must be durable too.
        try fileSystem.synchronizeAll(containing: folder)
    }

    /// Writes a whole file through a temporary file, a sync and a rename.
    func writeDurably(_ bytes: [UInt8], to relative: String) throws(StoreError) {
        let temporary = try temporaryPath(for: relative)
        do {
            try fileSystem.write(bytes, to: temporary)
            try install(temporary, as: relative)
        } catch {
            _ = try? fileSystem.removeFile(temporary)
            throw error
        }
    }

    /// The temporary file a whole file is written to before it is installed (`tmp/` created).
    func temporaryPath(for relative: String) throws(StoreError) -> String {
        try fileSystem.createFolder(path(FileNames.temporary))
        return path(FileNames.temporary + "/" + relative.replacingOccurrences(of: "/", with: "_") + ".new")
    }

    /// Syncs a written temporary file and renames it into place, durably.
    func install(_ temporary: String, as relative: String) throws(StoreError) {
        try fileSystem.synchronize(temporary)
        try fileSystem.rename(temporary, to: path(relative))
        try fileSystem.synchronize(folder)
    }

    /// Loads the index and finishes what a crashed writer left. With `lockHeld` (a write in
    /// this process holds the lock), recovery runs at once instead of taking the lock.
    func open(_ state: inout State, lockHeld: Bool = false) throws(StoreError) {
        guard options.readsTail else {
            // A merger: its segments, if usable, and nothing else (`Options.readsTail`).
            if try !loadFromSegments(&state) {
                state.manifest = nil
                state.entries = EntryTable()
            }
            return
        }
        try rebuildSegmentsIfNeeded(&state, lockHeld: lockHeld)
        let loaded = try loadIndex(&state)
        let journalExists = try journal.exists
        let temporaries = try fileSystem.entries(ofFolder: path(FileNames.temporary)) ?? []
        let needsRebuild = try self.needsRebuild(after: loaded)
        guard needsRebuild || journalExists || !temporaries.isEmpty else { return }
        if lockHeld {
            if needsRebuild { try rebuildEntries(&state, persist: true, keepingOldIndex: loaded.isUnreadable) }
            try recoverLocked(&state)
            return
        }
        // Recovery writes, so it needs the lock; when another process is writing right now, the
        // leftovers are its own and are not ours to touch.
        let lock: any FileLockToken
        do {
            lock = try fileSystem.lockExclusively(path(FileNames.lock), timeout: needsRebuild ? options.lockTimeout : 0)
        } catch {
            if needsRebuild {
                // Serve reads from a rebuild in memory; the writer will repair the file.
                try rebuildEntries(&state, persist: false)
            }
            return
        }
        defer { lock.release() }
        // Reload under the lock: the state may have moved since the first read.
        let reloaded = try loadIndex(&state)
        if try self.needsRebuild(after: reloaded) {
            try rebuildEntries(&state, persist: true, keepingOldIndex: reloaded.isUnreadable)
        }
        try recoverLocked(&state)
    }

    /// The log size from which a folder without usable segments has them built (by a replay of
    /// the log, a chunk at a time) before it is opened, rather than the whole log read into memory.
    static let segmentRebuildBytes = 16 << 20

    /// Builds the segments from the log when they are missing, stale or damaged and the log is
    /// large (under the writers' lock, taken here unless `lockHeld`). A folder that cannot be
    /// locked (a read-only mount, another writer past the lock timeout) or whose log cannot be
    /// read is left for the whole-log load and the usual recovery.
    func rebuildSegmentsIfNeeded(_ state: inout State, lockHeld: Bool) throws(StoreError) {
        guard options.usesSegments, !state.refusesSegments,
            let size = try fileSystem.status(of: changeLog.path)?.size, size >= Self.segmentRebuildBytes
        else { return }
        let found = try currentSegmentsRead(projection: state.projection)
        if case .success(let opened) = found {
            // Usable: the load that follows starts from them, without opening them again.
            state.opened = opened
            return
        }
        func rebuild() throws(StoreError) {
            do {
                try rebuildSegments(&state)
                state.builtSegmentsAtOpen = true
            } catch {
                // An unreadable log is rebuilt from the documents by the usual path.
                guard case .invalidFile = error else { throw error }
                try? removeUnlistedSegmentFiles(keeping: nil)
            }
        }
        if lockHeld {
            try rebuild()
            return
        }
        guard let lock = try? fileSystem.lockExclusively(path(FileNames.lock), timeout: options.lockTimeout) else { return }
        defer { lock.release() }
        guard case .failure = try currentSegments(projection: state.projection) else { return }
        try rebuild()
    }

    /// Whether the entries must be rebuilt from the documents: the index is unreadable, or missing
    /// while there are documents.
    func needsRebuild(after load: ChangeLog.Load) throws(StoreError) -> Bool {
        switch load {
        case .loaded: return false
        case .unreadable: return true
        case .missing: return try !(fileSystem.entries(ofFolder: path(FileNames.documents)) ?? []).isEmpty
        }
    }

    /// Reads the whole index into `state`, replacing what it held.
    @discardableResult
    func loadIndex(_ state: inout State) throws(StoreError) -> ChangeLog.Load {
        if try loadFromSegments(&state) { return .loaded }
        state.manifest = nil
        let expected = (try? fileSystem.status(of: changeLog.path))??.size ?? 0
        var position = ChangeLog.Position()
        var entries = EntryTable()
        defer {
            state.index = position
            state.entries = entries
        }
        return try changeLog.readAll(
            into: &position,
            reset: {
                entries = EntryTable()
                entries.reserveCapacity(expected / 400)
            }, apply: { line in try? entries.apply(line) })
    }

    /// Picks up index lines other processes appended, or reads everything again when the index
    /// was replaced (compacted, rebuilt) or cannot be followed.
    func refresh(_ state: inout State, lockHeld: Bool = false) throws(StoreError) {
        // A manifest another process installed first: the state then starts from its segments
        // and reads only the lines after what they cover. Following the log first would apply
        // to the tail every line appended since the last refresh, which the manifest may cover:
        // a merger back from a long merge while an import wrote half a million lines held them
        // all (703 MB at 5M documents) only to drop them.
        try followSegments(&state)
        guard options.readsTail else { return }
        // The entries are moved out, not copied, while the tail is applied to them.
        var entries = EntryTable()
        swap(&entries, &state.entries)
        var position = state.index
        var damage: SegmentDamage?
        var lines = 0
        let progress: ChangeLog.Progress
        do {
            progress = try changeLog.follow(&position) { line in
                lines += 1
                do throws(SegmentDamage) { try entries.apply(line) } catch { damage = error }
            }
        } catch {
            swap(&entries, &state.entries)
            throw error
        }
        swap(&entries, &state.entries)
        state.index = position
        state.linesFollowed += lines
        if progress == .replaced || damage != nil {
            try reopen(&state, lockHeld: lockHeld)
        }
    }

    /// Starts the state again from the segments when another process installed a manifest (a
    /// merge in the background, another writer's flush): a writer must build on the segments
    /// that are live, and a reader gains the merged ones. One small read when nothing changed;
    /// when the new segments cannot be used, the state stays as it was.
    func followSegments(_ state: inout State) throws(StoreError) {
        guard options.usesSegments, !state.refusesSegments else { return }
        let bytes = try fileSystem.contents(of: path(FileNames.manifest))
        guard let bytes, !Self.sameBytes(bytes, state.manifestBytes) else { return }
        if let manifest = state.manifest, let found = try? Manifest.decode(bytes, path: path(FileNames.manifest)), found == manifest {
            state.manifestBytes = bytes
            return
        }
        var reloaded = state
        reloaded.opened = nil
        guard try loadFromSegments(&reloaded) else {
            // Not usable: not tried again until the manifest changes.
            state.manifestBytes = bytes
            return
        }
        state = reloaded
    }

    /// Whether two byte arrays are equal, compared as memory by `ValueOrder.compareBytes` (the
    /// generic `==` goes a byte at a time, and a refresh at each look-up of a listing's documents
    /// compares the manifest).
    static func sameBytes(_ a: [UInt8], _ b: [UInt8]?) -> Bool {
        guard let b, a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in ValueOrder.compareBytes(x, y) == 0 } }
    }

    /// Reads everything again, as at open (another process compacted or rebuilt the index).
    func reopen(_ state: inout State, lockHeld: Bool) throws(StoreError) {
        if let bytes = try fileSystem.contents(of: path(FileNames.metadata)) {
            state.metadata = try StoreMetadata.decode(bytes, path: path(FileNames.metadata), schema: schema)
        }
        try open(&state, lockHeld: lockHeld)
    }
}
