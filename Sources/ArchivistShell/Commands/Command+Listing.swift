import ArchivistBase
import ArchivistPostgres
import ArchivistStore
import Foundation

extension Command {
    /// The columns `find` shows in table and csv formats without `--fields`.
    static let defaultColumns = ["_id", "pub_date", "section_name", "headline.main"]

    /// Says on stderr that a query read documents from disk.
    static func noteScan(_ paths: [String], shell: Shell) {
        guard !paths.isEmpty else { return }
        shell.errors.line(
            "note: \(paths.joined(separator: ", ")) \(Plural.word(for: paths.count, "is", "are")) not in the index projection, so the documents were read from disk ('archivist index add FIELD' adds a field)"
        )
    }

    /// Throws `.interrupted` when Ctrl-C was pressed during a long listing.
    static func stopIfInterrupted(printed: Int, of total: Int) throws {
        guard Interruption.isRequested else { return }
        throw ShellError.interrupted("interrupted after \(printed) of \(Plural.count(total, "document"))")
    }

    /// Prints documents: whole ones in jsonl and json without `--fields`, else the fields asked
    /// (or the default columns) as records.
    static func printDocuments(_ ids: [String], fields: [String]?, store: DocumentStore, shell: Shell) throws {
        let format = shell.effectiveFormat
        if fields == nil && (format == .jsonl || format == .json) {
            var documents: [JSONValue] = []
            for (printed, id) in ids.enumerated() {
                try stopIfInterrupted(printed: printed, of: ids.count)
                if format == .jsonl {
                    guard var line = try store.compactDocument(withID: id) else { continue }
                    line.append(0x0A)
                    shell.output.write(bytes: line)
                } else if let document = try store.document(withID: id) {
                    documents.append(document)
                }
            }
            if format == .json { shell.output.write(bytes: JSONWriter.prettyBytes(.array(documents))) }
            return
        }
        let columns = fields ?? defaultColumns
        // Projected fields come from each document's index line: the cost follows the listing.
        let projection = store.projection.paths
        let projected = try store.projectedValues(of: ids, paths: columns)
        var records: [Record] = []
        for (read, id) in ids.enumerated() {
            try stopIfInterrupted(printed: read, of: ids.count)
            var document: JSONValue?
            var values: [(String, JSONValue)] = []
            for column in columns {
                if column == "_id" {
                    values.append((column, .string(id)))
                    continue
                }
                if let row = projected[read], projection.contains(column) {
                    values.append((column, row[column] ?? .null))
                    continue
                }
                if document == nil { document = try store.document(withID: id) }
                let found = document?.values(atPath: column) ?? []
                values.append((column, found.count == 1 ? found[0] : (found.isEmpty ? .null : .array(found))))
            }
            records.append(Record(values))
        }
        shell.renderer.render(list: records, to: shell.output, clippingTo: shell.output.isTerminal ? Renderer.terminalWidth() : nil)
    }

    /// Prints documents of a PostgreSQL copy as `printDocuments(_:fields:store:shell:)` prints a
    /// folder's: the documents are read from the copy at once (a window of `find`'s).
    static func printDocuments(_ ids: [String], fields: [String]?, copy: PostgresCopy, shell: Shell) throws {
        let documents = try copy.documents(withIDs: ids)
        let format = shell.effectiveFormat
        if fields == nil && (format == .jsonl || format == .json) {
            if format == .jsonl {
                for (printed, id) in ids.enumerated() {
                    try stopIfInterrupted(printed: printed, of: ids.count)
                    guard let document = documents[id] else { continue }
                    shell.output.write(bytes: JSONWriter.compactBytes(document) + [0x0A])
                }
            } else {
                shell.output.write(bytes: JSONWriter.prettyBytes(.array(ids.compactMap { documents[$0] })))
            }
            return
        }
        let columns = fields ?? defaultColumns
        var records: [Record] = []
        for id in ids {
            guard let document = documents[id] else { continue }
            records.append(
                Record(
                    columns.map { column in
                        if column == "_id" { return (column, .string(id)) }
                        let found = document.values(atPath: column)
                        return (column, found.count == 1 ? found[0] : (found.isEmpty ? .null : .array(found)))
                    }))
        }
        shell.renderer.render(list: records, to: shell.output, clippingTo: shell.output.isTerminal ? Renderer.terminalWidth() : nil)
    }
}
