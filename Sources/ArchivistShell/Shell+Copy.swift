import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import Foundation

extension Shell {
    /// The commands that read, which a PostgreSQL copy answers; every other command writes to a
    /// folder (or fetches into one, or maintains one) and is refused on a copy.
    static let copyCommands: Set<String> = ["find", "count", "facet", "trend", "get", "export", "changes", "stats", "help"]

    /// Whether the data folder is a PostgreSQL copy (`postgresql://...`) rather than a folder.
    public var isCopy: Bool { CopyAddress.isAddress(dataFolder) }

    /// The PostgreSQL copy, opened on first use; nil when the data folder is a folder.
    public func copy() throws -> PostgresCopy? {
        guard isCopy else { return nil }
        if let openedCopy { return openedCopy }
        let copy = try openCopy(dataFolder)
        openedCopy = copy
        return copy
    }

    /// Connects to the copy at `address` (its checkpoint read), with the folder schema's text
    /// search.
    func openCopy(_ address: String) throws -> PostgresCopy {
        try PostgresCopy(address: try CopyAddress(address), textSearch: StoreSchema.nyt.textSearch)
    }

    /// The copy's name in messages and the prompt: the server (no password) and the table.
    var copyDisplay: String {
        openedCopy?.display ?? ((try? CopyAddress(dataFolder)).map { "postgresql copy table \($0.table)" } ?? "postgresql copy")
    }

    /// The one-line refusal of a command that writes (or any use of the store) on a copy: it is
    /// read-only, and names the folder it is replicated from (from the checkpoint).
    func readOnlyError(command: String?) throws -> ShellError {
        let copy = try self.copy()
        let folder = copy?.checkpoint.folder ?? ""
        let what = command.map { "'\($0)' needs a data folder" } ?? "this needs a data folder"
        return ShellError.failure(
            "\(copy?.display ?? copyDisplay) is a read-only copy (replicated from \(folder.isEmpty ? "a folder" : folder)): \(what); run it there, and 'archivist replicate' brings the change here"
        )
    }
}
