import ArchivistBase
import Foundation
import Synchronization

/// A file system held in memory that forgets, on a simulated power loss, everything not yet made
/// durable, as the fault-injection environment of LevelDB's `fault_injection_test` does.
///
/// The model has inodes. A folder maps names to inode ids; each file has a volatile content (what
/// reads see) and a durable content (what survives a power loss); each folder has volatile entries
/// and durable entries. `write`, `append`, `truncate`, `rename`, `removeFile` and `createFolder`
/// change only the volatile state. `synchronize(_:)` (fsync) makes one file's content, or one
/// folder's entries, durable; `synchronizeAll(containing:)` (syncfs) makes everything durable.
/// `simulatePowerLoss()` puts every inode back to its durable state: a file created, renamed or
/// removed since its folder was last synced is back where the folder's durable entries say, with
/// the content last synced (empty when never synced).
///
/// A crash point is set with `failAfter(operations:)`: from the n-th mutating operation on, every
/// mutating operation throws `StoreError.io` without doing anything, as if the process had died
/// there. Syncs count as mutating operations (they change the durable state), reads do not.
///
/// `simulatePowerLoss(writebackSeed:)` is a harsher power loss: before it, the kernel had written
/// back an arbitrary part of the unsynced changes (torn appends included). `copy()` forks the
/// whole state, so a starting state can be built once and crashed many times.
///
/// Paths are split on `/`; a relative path is taken from the root. Locks do nothing (the model
/// serves one process).
public final class FaultInjectingFileSystem: FileSystem, @unchecked Sendable {
    /// One file or folder.
    struct Inode {
        var isFolder: Bool
        /// What reads see (files).
        var content: [UInt8] = []
        /// What survives a power loss (files).
        var durableContent: [UInt8] = []
        /// Names to inode ids that reads see (folders).
        var entries: [String: Int] = [:]
        /// Names to inode ids that survive a power loss (folders).
        var durableEntries: [String: Int] = [:]
        var modified: Timestamp
        var durableModified: Timestamp
    }

    struct State {
        var inodes: [Int: Inode]
        var nextInode = 2
        /// Mutating operations performed (not refused by the fault).
        var performed = 0
        /// Mutating operations refused because of the fault.
        var refused = 0
        /// The number (in `performed + 1` terms) of the first mutating operation to refuse.
        var failAt: Int?
        /// Reads of each file's content, by the path asked for.
        var reads: [String: Int] = [:]
    }

    static let rootID = 1

    private let state: Mutex<State>

    /// An empty file system: only the root folder, durable.
    public init() {
        let now = Timestamp.now()
        state = Mutex(State(inodes: [Self.rootID: Inode(isFolder: true, modified: now, durableModified: now)]))
    }

    /// An independent copy of this file system, volatile and durable state alike (its crash point
    /// and operation counts included), so a starting state can be built once and crashed many times.
    public func copy() -> FaultInjectingFileSystem {
        let copy = FaultInjectingFileSystem()
        let snapshot = state.withLock { $0 }
        copy.state.withLock { $0 = snapshot }
        return copy
    }

    // MARK: Faults

    /// Makes the `operations`-th mutating operation from now (1 is the very next one), and every
    /// one after it, throw `StoreError.io` without effect: the process dies there. Reads still work.
    /// The fault stays until `clearFault()` or `simulatePowerLoss()`.
    public func failAfter(operations: Int) {
        precondition(operations >= 1, "the crash point counts from 1")
        state.withLock { $0.failAt = $0.performed + operations }
    }

    /// Removes the crash point set by `failAfter(operations:)`.
    public func clearFault() {
        state.withLock { $0.failAt = nil }
    }

    /// How many mutating operations (writes, renames, removals, folder creations and syncs) were
    /// carried out so far; refused ones are not counted.
    public var mutatingOperationCount: Int {
        state.withLock { $0.performed }
    }

    /// How many mutating operations the crash point refused so far.
    public var refusedOperationCount: Int {
        state.withLock { $0.refused }
    }

    /// How many times each file's content has been read, by the path the reader gave.
    public var readCounts: [String: Int] {
        state.withLock { $0.reads }
    }

    /// Forgets everything not durable: each file gets back its durable content and each folder its
    /// durable entries; inodes no longer reachable from the root are dropped. The crash point is
    /// cleared (the machine restarts).
    public func simulatePowerLoss() {
        state.withLock { Self.restart(&$0) }
    }

    /// A power loss after the kernel had written back an arbitrary part of the unsynced changes,
    /// chosen by `seed`: each file's pending content is kept, forgotten, or kept in part (a prefix,
    /// as a torn write), and each folder's pending entries are kept or forgotten as a whole (a
    /// rename or creation reaches the disk with the rest of its folder's changes). Then as
    /// `simulatePowerLoss()`.
    public func simulatePowerLoss(writebackSeed seed: UInt64) {
        state.withLock { state in
            var random = SplitMix64(state: seed)
            for id in state.inodes.keys.sorted() {
                var inode = state.inodes[id]!
                if inode.isFolder {
                    if inode.entries != inode.durableEntries, random.next() & 1 == 1 {
                        inode.durableEntries = inode.entries
                    }
                } else if inode.content != inode.durableContent {
                    switch random.next() % 3 {
                    case 0:
                        break
                    case 1:
                        inode.durableContent = inode.content
                    default:
                        // Appended data reaches the disk in part; rewritten data may be cut anywhere.
                        let floor = inode.content.starts(with: inode.durableContent) ? inode.durableContent.count : 0
                        let length = floor + Int(random.next() % UInt64(inode.content.count - floor + 1))
                        inode.durableContent = Array(inode.content.prefix(length))
                    }
                    inode.durableModified = inode.modified
                }
                state.inodes[id] = inode
            }
            Self.restart(&state)
        }
    }

    static func restart(_ state: inout State) {
        for id in Array(state.inodes.keys) {
            state.inodes[id]!.content = state.inodes[id]!.durableContent
            state.inodes[id]!.entries = state.inodes[id]!.durableEntries
            state.inodes[id]!.modified = state.inodes[id]!.durableModified
        }
        var reachable: Set<Int> = [rootID]
        var stack = [rootID]
        while let id = stack.popLast() {
            for child in state.inodes[id]!.entries.values where reachable.insert(child).inserted {
                stack.append(child)
            }
        }
        state.inodes = state.inodes.filter { reachable.contains($0.key) }
        state.failAt = nil
    }

    // MARK: Materializing

    /// Writes the current (volatile) tree of this file system into `folder` on the real disk
    /// (created when missing), so a store using `POSIXFileSystem` can open it: `/root/data/x`
    /// lands in `folder/root/data/x`.
    public func materialize(into folder: String) throws {
        enum Item {
            case folder(String)
            case file(String, [UInt8])
        }
        let items = state.withLock { state -> [Item] in
            var items: [Item] = []
            var stack: [(Int, String)] = [(Self.rootID, "")]
            while let item = stack.popLast() {
                let (id, relative) = item
                let inode = state.inodes[id]!
                if inode.isFolder {
                    items.append(.folder(relative))
                    for (name, child) in inode.entries.sorted(by: { $0.key < $1.key }) {
                        stack.append((child, relative + "/" + name))
                    }
                } else {
                    items.append(.file(relative, inode.content))
                }
            }
            return items
        }
        let manager = FileManager.default
        for item in items {
            switch item {
            case .folder(let relative):
                try manager.createDirectory(atPath: folder + relative, withIntermediateDirectories: true)
            case .file(let relative, let bytes):
                try Data(bytes).write(to: URL(fileURLWithPath: folder + relative))
            }
        }
    }

    // MARK: Paths

    enum Resolution {
        case found(Int)
        case missing
        /// A component before the last one is a file.
        case notAFolder
    }

    static func components(_ path: String) -> [String] {
        var parts: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(String(part))
        }
        return parts
    }

    static func resolve(_ parts: [String], in state: State) -> Resolution {
        var current = rootID
        for part in parts {
            let inode = state.inodes[current]!
            guard inode.isFolder else { return .notAFolder }
            guard let child = inode.entries[part] else { return .missing }
            current = child
        }
        return .found(current)
    }

    static func failure(_ path: String, _ operation: String, _ message: String) -> StoreError {
        .io(path: path, operation: operation, message: message)
    }

    /// The folder that holds `path`'s last component, and that component.
    static func parent(of path: String, operation: String, in state: State) throws(StoreError) -> (folder: Int, name: String) {
        var parts = components(path)
        guard let name = parts.popLast() else { throw failure(path, operation, "is a directory") }
        switch resolve(parts, in: state) {
        case .found(let id):
            guard state.inodes[id]!.isFolder else { throw failure(path, operation, "not a directory") }
            return (id, name)
        case .missing:
            throw failure(path, operation, "no such file or directory")
        case .notAFolder:
            throw failure(path, operation, "not a directory")
        }
    }

    /// Runs a mutating operation unless the crash point has been reached.
    func mutate<T>(_ path: String, _ operation: String, _ body: (inout State) throws(StoreError) -> T) throws(StoreError) -> T {
        try state.withLock { (state: inout State) throws(StoreError) -> T in
            let number = state.performed + 1
            if let failAt = state.failAt, number >= failAt {
                state.refused += 1
                throw Self.failure(path, operation, "injected fault: the process died at mutating operation \(number)")
            }
            state.performed = number
            return try body(&state)
        }
    }

    func newInode(_ state: inout State, isFolder: Bool, content: [UInt8] = []) -> Int {
        let id = state.nextInode
        state.nextInode += 1
        let now = Timestamp.now()
        state.inodes[id] = Inode(isFolder: isFolder, content: content, modified: now, durableModified: now)
        return id
    }

    // MARK: Reading

    /// The volatile content of a file; `nil` when missing.
    public func contents(of path: String) throws(StoreError) -> [UInt8]? {
        try contents(of: path, from: 0)
    }

    /// The volatile content of a file from `offset`; `nil` when missing.
    public func contents(of path: String, from offset: Int) throws(StoreError) -> [UInt8]? {
        try state.withLock { (state: inout State) throws(StoreError) -> [UInt8]? in
            switch Self.resolve(Self.components(path), in: state) {
            case .missing: return nil
            case .notAFolder: throw Self.failure(path, "open", "not a directory")
            case .found(let id):
                let inode = state.inodes[id]!
                if inode.isFolder { throw Self.failure(path, "read", "is a folder") }
                state.reads[path, default: 0] += 1
                return offset >= inode.content.count ? [] : Array(inode.content[max(offset, 0)...])
            }
        }
    }

    /// The volatile names in a folder, sorted; `nil` when missing.
    public func entries(ofFolder path: String) throws(StoreError) -> [String]? {
        try state.withLock { (state: inout State) throws(StoreError) -> [String]? in
            switch Self.resolve(Self.components(path), in: state) {
            case .missing: return nil
            case .notAFolder: throw StoreError.notAFolder(path: path)
            case .found(let id):
                let inode = state.inodes[id]!
                guard inode.isFolder else { throw StoreError.notAFolder(path: path) }
                return inode.entries.keys.sorted()
            }
        }
    }

    /// Size, modification time, inode id and kind; `nil` when missing.
    public func status(of path: String) throws(StoreError) -> FileStatus? {
        state.withLock { state -> FileStatus? in
            guard case .found(let id) = Self.resolve(Self.components(path), in: state) else { return nil }
            let inode = state.inodes[id]!
            return FileStatus(
                size: inode.isFolder ? 4096 : inode.content.count, modified: inode.modified,
                identity: UInt64(id), isFolder: inode.isFolder)
        }
    }

    // MARK: Mutating

    /// Creates or truncates a file and writes `bytes` (volatile).
    public func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
        try changeFile(path, "create") { $0 = bytes }
    }

    /// Appends `bytes` to a file, creating it when missing (volatile).
    public func append(_ bytes: [UInt8], to path: String) throws(StoreError) {
        try changeFile(path, "open for appending") { $0.append(contentsOf: bytes) }
    }

    /// Applies `change` to a file's content, creating the file (empty, then changed) when missing.
    func changeFile(_ path: String, _ operation: String, _ change: (inout [UInt8]) -> Void) throws(StoreError) {
        try mutate(path, operation) { (state: inout State) throws(StoreError) in
            let (folder, name) = try Self.parent(of: path, operation: operation, in: state)
            if let id = state.inodes[folder]!.entries[name] {
                guard !state.inodes[id]!.isFolder else { throw Self.failure(path, operation, "is a directory") }
                change(&state.inodes[id]!.content)
                state.inodes[id]!.modified = .now()
            } else {
                var content: [UInt8] = []
                change(&content)
                let id = newInode(&state, isFolder: false, content: content)
                state.inodes[folder]!.entries[name] = id
                state.inodes[folder]!.modified = .now()
            }
        }
    }

    /// Cuts (or extends with zeros) a file to `size` bytes (volatile).
    public func truncate(_ path: String, to size: Int) throws(StoreError) {
        try mutate(path, "truncate") { (state: inout State) throws(StoreError) in
            guard size >= 0 else { throw Self.failure(path, "truncate", "invalid argument") }
            switch Self.resolve(Self.components(path), in: state) {
            case .missing: throw Self.failure(path, "truncate", "no such file or directory")
            case .notAFolder: throw Self.failure(path, "truncate", "not a directory")
            case .found(let id):
                guard !state.inodes[id]!.isFolder else { throw Self.failure(path, "truncate", "is a directory") }
                var content = state.inodes[id]!.content
                if size < content.count {
                    content.removeSubrange(size...)
                } else {
                    content.append(contentsOf: repeatElement(0, count: size - content.count))
                }
                state.inodes[id]!.content = content
                state.inodes[id]!.modified = .now()
            }
        }
    }

    /// Moves an entry, replacing any file at `destination` (volatile, as an unsynced rename(2)).
    public func rename(_ source: String, to destination: String) throws(StoreError) {
        let operation = "rename \(source) to"
        try mutate(destination, operation) { (state: inout State) throws(StoreError) in
            let (fromFolder, fromName) = try Self.parent(of: source, operation: operation, in: state)
            guard let moving = state.inodes[fromFolder]!.entries[fromName] else {
                throw Self.failure(destination, operation, "no such file or directory")
            }
            let (toFolder, toName) = try Self.parent(of: destination, operation: operation, in: state)
            let movingIsFolder = state.inodes[moving]!.isFolder
            if movingIsFolder {
                let sourceParts = Self.components(source)
                let destinationParts = Self.components(destination)
                if destinationParts.count > sourceParts.count, Array(destinationParts.prefix(sourceParts.count)) == sourceParts {
                    throw Self.failure(destination, operation, "invalid argument")
                }
            }
            if let replaced = state.inodes[toFolder]!.entries[toName] {
                if replaced == moving { return }
                let replacedIsFolder = state.inodes[replaced]!.isFolder
                if replacedIsFolder && !movingIsFolder { throw Self.failure(destination, operation, "is a directory") }
                if !replacedIsFolder && movingIsFolder { throw Self.failure(destination, operation, "not a directory") }
                if replacedIsFolder && !state.inodes[replaced]!.entries.isEmpty {
                    throw Self.failure(destination, operation, "directory not empty")
                }
            }
            state.inodes[fromFolder]!.entries[fromName] = nil
            state.inodes[toFolder]!.entries[toName] = moving
            state.inodes[fromFolder]!.modified = .now()
            state.inodes[toFolder]!.modified = .now()
        }
    }

    /// Unlinks a file (volatile); false when there was none.
    @discardableResult
    public func removeFile(_ path: String) throws(StoreError) -> Bool {
        try mutate(path, "remove") { (state: inout State) throws(StoreError) -> Bool in
            let folder: Int
            let name: String
            do throws(StoreError) {
                (folder, name) = try Self.parent(of: path, operation: "remove", in: state)
            } catch {
                if case .io(_, _, "no such file or directory") = error { return false }
                throw error
            }
            guard let id = state.inodes[folder]!.entries[name] else { return false }
            guard !state.inodes[id]!.isFolder else { throw Self.failure(path, "remove", "is a directory") }
            state.inodes[folder]!.entries[name] = nil
            state.inodes[folder]!.modified = .now()
            return true
        }
    }

    /// Creates a folder and any missing parents (volatile: each new entry needs its parent synced).
    public func createFolder(_ path: String) throws(StoreError) {
        try mutate(path, "create folder") { (state: inout State) throws(StoreError) in
            var current = Self.rootID
            for part in Self.components(path) {
                if let child = state.inodes[current]!.entries[part] {
                    guard state.inodes[child]!.isFolder else { throw StoreError.notAFolder(path: path) }
                    current = child
                } else {
                    let child = newInode(&state, isFolder: true)
                    state.inodes[current]!.entries[part] = child
                    state.inodes[current]!.modified = .now()
                    current = child
                }
            }
        }
    }

    /// fsync: makes one file's content, or one folder's entries, durable.
    public func synchronize(_ path: String) throws(StoreError) {
        try mutate(path, "sync") { (state: inout State) throws(StoreError) in
            switch Self.resolve(Self.components(path), in: state) {
            case .missing: throw Self.failure(path, "open for sync", "no such file or directory")
            case .notAFolder: throw Self.failure(path, "open for sync", "not a directory")
            case .found(let id):
                var inode = state.inodes[id]!
                if inode.isFolder {
                    inode.durableEntries = inode.entries
                } else {
                    inode.durableContent = inode.content
                }
                inode.durableModified = inode.modified
                state.inodes[id] = inode
            }
        }
    }

    /// syncfs: makes every file's content and every folder's entries durable.
    public func synchronizeAll(containing path: String) throws(StoreError) {
        try mutate(path, "sync") { (state: inout State) throws(StoreError) in
            guard case .found = Self.resolve(Self.components(path), in: state) else {
                throw Self.failure(path, "open for sync", "no such file or directory")
            }
            for id in Array(state.inodes.keys) {
                var inode = state.inodes[id]!
                inode.durableContent = inode.content
                inode.durableEntries = inode.entries
                inode.durableModified = inode.modified
                state.inodes[id] = inode
            }
        }
    }

    /// Returns a token that does nothing: the model serves a single process.
    public func lockExclusively(_ path: String, timeout: Double) throws(StoreError) -> any FileLockToken {
        NoLock()
    }
}

/// The lock token of `FaultInjectingFileSystem`: there is nothing to release.
final class NoLock: FileLockToken {
    func release() {}
}
