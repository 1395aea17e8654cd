import ArchivistBase
import Foundation

/// `check`: every document read once and compared with the index, the log compared with the
/// segments, and every block of every segment checked against its checksum, in memory that does
/// not grow with the store (a look-up per document and per line, no table of either).
extension DocumentStore {
    /// Compares the documents with the index. Reads every document file.
    ///
    /// Never waits for a writer. While another process commits a batch, its documents may be in
    /// place before their index lines: those named in its journal are not problems, and anything
    /// found is confirmed by a second pass after picking up the writer's progress.
    /// `progress`, when given, hears how many of the document buckets are read (of how many).
    public func check(progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws(StoreError) -> [StoreProblem] {
        try checkDocuments(progress: progress) + sideFileProblems()
    }

    private func checkDocuments(progress: ((Int, Int) -> Void)?) throws(StoreError) -> [StoreProblem] {
        if let lock = try? fileSystem.lockExclusively(path(FileNames.lock), timeout: 0) {
            defer { lock.release() }
            return try withState(lockHeld: true) { (state: inout State) throws(StoreError) -> [StoreProblem] in
                try self.refresh(&state, lockHeld: true)
                return try self.checkLocked(&state, writerActive: false, progress: progress)
            }
        }
        return try withState { (state: inout State) throws(StoreError) -> [StoreProblem] in
            try self.refresh(&state)
            let journalBefore = try self.journalIDs()
            let first = try self.checkLocked(&state, writerActive: true, progress: progress)
            if first.isEmpty { return [] }
            try self.refresh(&state)
            let inFlight = journalBefore.union(try self.journalIDs())
            let second = try self.checkLocked(&state, writerActive: true)
            return second.filter { problem in
                first.contains { $0.kind == problem.kind && $0.file == problem.file }
                    && !(problem.id.map { inFlight.contains(DocumentID($0)) } ?? false)
            }
        }
    }

    /// The IDs named in the journal of a batch being written (empty when there is none).
    func journalIDs() throws(StoreError) -> Set<DocumentID> {
        try journal.read() ?? []
    }

    /// Every problem of the folder as the state holds it. `documents`, when given, are the
    /// problems of the document files as a rebuild of this very log from them found them
    /// (`State.freshDocumentProblems`): the documents are then not read again.
    func checkLocked(
        _ state: inout State, writerActive: Bool, documents: [StoreProblem]? = nil, progress: ((Int, Int) -> Void)? = nil
    ) throws(StoreError) -> [StoreProblem] {
        // The segments' blocks first: every later read of them then skips its checksum's check.
        var problems = try segmentProblems(&state)
        ProcessMemory.releaseFreePages()
        problems += try logProblems(&state)
        ProcessMemory.releaseFreePages()
        if let documents {
            problems += documents
        } else {
            problems += try documentProblems(&state, progress: progress)
        }
        let journalExists = try journal.exists
        let temporaries = try fileSystem.entries(ofFolder: path(FileNames.temporary)) ?? []
        if !writerActive && (journalExists || !temporaries.isEmpty) {
            // No writer is at work: these are a crash's.
            problems.append(
                StoreProblem(
                    kind: .unfinishedWrite, file: journalExists ? FileNames.journal : FileNames.temporary,
                    id: nil,
                    detail: "an interrupted write left \(journalExists ? "its journal" : Plural.count(temporaries.count, "temporary file"))"
                ))
        }
        return problems.sorted { ($0.file, $0.kind.rawValue) < ($1.file, $1.kind.rawValue) }
    }

    // MARK: Documents

    /// How many document files `check` reads at a time, and at most has read ahead besides.
    static let checkPiece = 4_096

    /// Reads every document (a piece of a bucket at a time, several files at once) and compares
    /// each with its live entry, without a look-up per document: each document's ID and the
    /// digest of what its entry must say (hash, size, projected fields) are sorted by ID
    /// (`SortedRuns`, in runs in `tmp/` past `checkRunBytes`) and walked beside the live entries
    /// in ID order (the segments' live records, `SegmentRecordWalk`, each read front to back,
    /// with the tail's changes over them). A look-up per document touched pages all over the
    /// segments' ID filters, IDs and entries (each fault maps the 64 KiB around it), which grew
    /// with the store even when let go every 1,024 look-ups (127 MB at 3M documents, 76 at 1M).
    /// An ID whose digests differ is looked up once to say how (`examine`).
    private func documentProblems(_ state: inout State, progress: ((Int, Int) -> Void)?) throws(StoreError) -> [StoreProblem] {
        var problems: [StoreProblem] = []
        let entries = state.entries
        let projection = state.projection
        let buckets = try documentBuckets()
        var done = 0
        // Fields of tail entries are read from one mapping of the log (the segments' entries
        // carry a digest of theirs).
        let log = try fileSystem.mappedContentsForRandomReads(of: changeLog.path) ?? FileBytes([])
        let runs = SortedRuns(
            fileSystem: fileSystem, folder: path(FileNames.temporary),
            prefix: "check-documents-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))",
            runBytes: options.checkRunBytes)
        defer { runs.discard() }
        // Pieces of a bucket, few read ahead: `check` needs no order across a bucket, and a
        // bucket's files grow with the store.
        try scanDocuments(projection: projection, known: nil, piece: Self.checkPiece, ahead: Self.checkPiece) {
            (_, files, isLast) throws(StoreError) in
            // The fields' digests on several threads (each hashes the document's projected fields).
            let digests = ConcurrentReads.shared.map(files.count) { i -> Result<UInt64?, StoreError> in
                guard case .document(let found) = files[i].content else { return .success(nil) }
                do throws(StoreError) {
                    return .success(Self.documentFacts(found, fields: try self.fieldsDigest(found, log: log)))
                } catch {
                    return .failure(error)
                }
            }
            for (file, digest) in zip(files, digests) {
                if let problem = fileProblem(file) { problems.append(problem) }
                guard case .document(let found) = file.content, let digest = try digest.get() else { continue }
                var id = found.id
                let failure = id.withUTF8 { raw -> StoreError? in
                    do throws(StoreError) {
                        try runs.append(id: UnsafeRawBufferPointer(raw), number: 0, kind: SegmentRecordWalk.Kind.entry, digest: digest)
                        return nil
                    } catch {
                        return error
                    }
                }
                if let failure { throw failure }
            }
            // The documents' bytes read on several threads are freed in their arenas.
            ProcessMemory.releaseFreePages()
            if isLast {
                done += 1
                progress?(done, buckets.count)
            }
        }
        var live = try LiveEntryWalk(
            entries,
            digest: { (entry) throws(StoreError) in
                Self.documentFacts(entry, fields: try self.fieldsDigest(entry, log: log))
            })
        func compare(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Int {
            a.withUnsafeBytes { ValueOrder.compareBytes($0, b) }
        }
        func missing(_ id: [UInt8]) throws(StoreError) {
            let id = String(decoding: id, as: UTF8.self)
            let file = documentPath(for: id)
            // A file there that is not this document was reported as what it is.
            guard try fileSystem.status(of: path(file)) == nil else { return }
            problems.append(
                StoreProblem(
                    kind: .missingDocument, file: file, id: id, detail: "in the index as \(StoreError.quote(id)) but the file is missing"))
        }
        var entry = try live.next()
        try runs.forEach { (document) throws(StoreError) -> Bool in
            while let current = entry, compare(current.id, document.id) < 0 {
                try missing(current.id)
                entry = try live.next()
            }
            let id = String(decoding: document.id, as: UTF8.self)
            guard let current = entry, compare(current.id, document.id) == 0 else {
                problems.append(StoreProblem(kind: .unindexedDocument, file: documentPath(for: id), id: id, detail: "not in the index"))
                return true
            }
            entry = try live.next()
            if current.digest != document.digest {
                // Read again and looked up, to say what differs (or that it changed meanwhile).
                if let file = try scanDocument(documentPath(for: id), projection: projection, known: nil),
                    let problem = try examine(file, against: entries, log: log).0
                {
                    problems.append(problem)
                }
            }
            return true
        }
        while let current = entry {
            try missing(current.id)
            entry = try live.next()
        }
        entries.dropResidentPages()
        return problems
    }

    /// `SegmentRecordWalk.documentFacts` of an entry (a document's, or one of the tail's).
    private static func documentFacts(_ entry: IndexEntry, fields: UInt64) -> UInt64 {
        SegmentRecordWalk.documentFacts(hash: entry.hash, size: UInt64(entry.size), fields: fields)
    }

    /// The problem of a scanned file that is not a document in its place (unreadable, without
    /// `_id`, or under another ID's name); nil for a document.
    func fileProblem(_ file: ScannedFile) -> StoreProblem? {
        switch file.content {
        case .unreadable(let reason):
            return StoreProblem(kind: .unreadableDocument, file: file.file, id: nil, detail: reason)
        case .missingID:
            return StoreProblem(kind: .missingID, file: file.file, id: nil, detail: "no _id (a non-empty string) in the document")
        case .misplaced(let id):
            return StoreProblem(
                kind: .misplacedDocument, file: file.file, id: id,
                detail: "_id \(StoreError.quote(id)) belongs in \(documentPath(for: id))")
        case .document:
            return nil
        }
    }

    /// What is wrong with one scanned file, if anything, and whether it matched a live entry.
    private func examine(_ file: ScannedFile, against entries: EntryTable, log: FileBytes) throws(StoreError) -> (StoreProblem?, Bool) {
        switch file.content {
        case .unreadable, .missingID, .misplaced:
            return (fileProblem(file), false)
        case .document(let found):
            guard let known = try table(try entries.entry(DocumentID(found.id))) else {
                return (StoreProblem(kind: .unindexedDocument, file: file.file, id: found.id, detail: "not in the index"), false)
            }
            if known.hash != found.hash || known.size != found.size {
                return (
                    StoreProblem(
                        kind: .changedDocument, file: file.file, id: found.id,
                        detail:
                            "content differs from the index (hash \(FNV1a64.hex(found.hash)), size \(found.size); index has \(FNV1a64.hex(known.hash)), \(known.size))"
                    ), true
                )
            }
            if try fieldsDigest(known, log: log) != fieldsDigest(found, log: log) {
                return (
                    StoreProblem(kind: .changedDocument, file: file.file, id: found.id, detail: "projected fields in the index are stale"),
                    true
                )
            }
            return (nil, true)
        }
    }

    /// The digest of an entry's fields: a segment's records it; others are hashed from memory or
    /// the log's mapping.
    private func fieldsDigest(_ entry: IndexEntry, log: FileBytes) throws(StoreError) -> UInt64 {
        switch entry.fields {
        case .logLine(let digest):
            return digest
        case .indexFile(let offset, let length) where offset + length <= log.buffer.count:
            return WordHash.striped(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(log.buffer)[offset..<(offset + length)]))
        default:
            return SegmentBuilder.fieldsDigest(try fieldsBytes(of: entry))
        }
    }

    // MARK: The log

    /// Reads every line of the log once: it must parse, and the lines the segments cover must
    /// agree with them (the last line of each ID is its live entry or tombstone there, and every
    /// live record of the segments is such a line).
    ///
    /// Without a look-up per line: the covered lines' IDs, numbers and digests are sorted by ID
    /// (`SortedRuns`, in runs in `tmp/` past `checkRunBytes`) and walked beside the segments'
    /// live records in ID order (`SegmentRecordWalk`), each read front to back. A look-up per line
    /// touched pages all over the segments' IDs and entries, which stayed in the process's memory
    /// in proportion to the store (208 MB of a 3 GB segment at 3M documents).
    private func logProblems(_ state: inout State) throws(StoreError) -> [StoreProblem] {
        guard let status = try fileSystem.status(of: changeLog.path) else { return [] }
        let covered = state.manifest?.coverage.offset ?? 0
        let segments = state.entries.segments
        var problems: [StoreProblem] = []
        var unreadable: StoreProblem?
        var failure: StoreError?
        let runs = SortedRuns(
            fileSystem: fileSystem, folder: path(FileNames.temporary),
            prefix: "check-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))",
            runBytes: options.checkRunBytes)
        defer { runs.discard() }
        _ = try changeLog.forEachLine(
            end: status.size,
            invalid: { line, reason in
                unreadable = StoreProblem(kind: .unreadableIndex, file: FileNames.index, id: nil, detail: "line \(line): \(reason)")
                return false
            }
        ) { line, bytes, sequence, offset in
            guard failure == nil else { return false }
            guard !segments.isEmpty, offset < covered else { return true }
            let kind: UInt8
            let facts: UInt64
            switch line {
            case .entry(let entry):
                kind = SegmentRecordWalk.Kind.entry
                facts = SegmentRecordWalk.entryFacts(
                    hash: entry.hash, size: UInt64(entry.size), storedAt: entry.storedAt.milliseconds,
                    updatedAt: entry.updatedAt.milliseconds, fields: Self.digest(of: entry.fields, in: bytes, lineOffset: offset))
            case .removal(let removal):
                kind = SegmentRecordWalk.Kind.removal
                facts = SegmentRecordWalk.removalFacts(
                    removedAt: (removal.removedAt ?? Timestamp(milliseconds: 0)).milliseconds,
                    fields: removal.fields.map { Self.digest(of: $0, in: bytes, lineOffset: offset) } ?? 0)
            }
            var id = line.id
            failure = id.withUTF8 { raw -> StoreError? in
                do throws(StoreError) {
                    try runs.append(id: UnsafeRawBufferPointer(raw), number: sequence, kind: kind, digest: facts)
                    return nil
                } catch {
                    return error
                }
            }
            return failure == nil
        }
        if let failure { throw failure }
        if let unreadable {
            problems.append(unreadable)
            return problems
        }
        guard !segments.isEmpty else { return problems }
        if let mismatch = try compareLastLines(runs, with: segments) {
            problems.append(Self.segmentProblem(FileNames.segments, mismatch))
        }
        state.entries.dropResidentPages()
        return problems
    }

    /// Walks the sorted lines beside the segments' live records, both in ID order: each ID's last
    /// line must be its record (same number, kind and digest), and each record must be some
    /// ID's last line. The first disagreement, described; nil when they agree.
    private func compareLastLines(_ runs: SortedRuns, with segments: [OpenSegment]) throws(StoreError) -> String? {
        var records = try SegmentRecordWalk(segments)
        var mismatch: String?
        var last: (id: [UInt8], number: Int, kind: UInt8, digest: UInt64)?
        func quote(_ id: some Collection<UInt8>) -> String { StoreError.quote(String(decoding: id, as: UTF8.self)) }
        func notInTheLog(_ record: SegmentRecordWalk.Record) -> String {
            "ID \(quote(record.id)) (seq \(record.number)) is in the segments but not in the log"
        }
        /// Compares one ID's last line with its record, passing the records of smaller IDs.
        func settle(_ line: (id: [UInt8], number: Int, kind: UInt8, digest: UInt64)) throws(StoreError) -> String? {
            let inNoSegment = { "ID \(quote(line.id)) (line seq \(line.number)) is in no segment" }
            guard let record = try records.current() else { return inNoSegment() }
            let order = line.id.withUnsafeBytes { ValueOrder.compareBytes(record.id, $0) }
            if order < 0 { return notInTheLog(record) }
            if order > 0 { return inNoSegment() }
            if record.number != line.number {
                return "ID \(quote(line.id)): the log has change \(line.number), the segments \(record.number)"
            }
            if record.kind != line.kind || record.digest != line.digest {
                return "ID \(quote(line.id)) (seq \(line.number)) differs from the log"
            }
            try records.advance()
            if let next = try records.current(), line.id.withUnsafeBytes({ ValueOrder.compareBytes(next.id, $0) }) == 0 {
                return "ID \(quote(line.id)) is live in two segments"
            }
            return nil
        }
        try runs.forEach { (line) throws(StoreError) -> Bool in
            if let previous = last, previous.id.withUnsafeBytes({ ValueOrder.compareBytes($0, line.id) }) == 0 {
                // The same ID again: a later change of it (the lines come in number order).
                last = (previous.id, line.number, line.kind, line.digest)
                return true
            }
            if let previous = last, let found = try settle(previous) {
                mismatch = found
                return false
            }
            last = (Array(line.id), line.number, line.kind, line.digest)
            return true
        }
        if mismatch == nil, let previous = last { mismatch = try settle(previous) }
        if mismatch == nil, let record = try records.current() { mismatch = notInTheLog(record) }
        return mismatch
    }

    /// The digest of a line's fields, located in the file by the line's decoding (the line's
    /// bytes start at `lineOffset`).
    private static func digest(of fields: FieldsReference, in bytes: UnsafeBufferPointer<UInt8>, lineOffset: Int) -> UInt64 {
        switch fields {
        case .inline(let inline): return SegmentBuilder.fieldsDigest(inline)
        case .logLine(let digest): return digest
        case .indexFile(let offset, let length):
            let start = offset - lineOffset
            guard start >= 0, start + length <= bytes.count else { return 0 }
            return WordHash.striped(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<(start + length)]))
        }
    }

    // MARK: Segments

    /// What is wrong with the segment files: the manifest must decode and cover the log, each
    /// segment must check block by block, and its deletes file must decode.
    private func segmentProblems(_ state: inout State) throws(StoreError) -> [StoreProblem] {
        guard options.usesSegments else { return [] }
        let segments: [OpenSegment]
        if state.manifest != nil {
            // The segments the state reads: checked whole, their later reads skip the checks.
            segments = state.entries.segments
        } else {
            switch try currentSegments(projection: state.projection) {
            case .failure(.missing):
                return []
            case .failure(.unusable(let reason)):
                if reason.hasPrefix("made of another index.jsonl") || reason.hasPrefix("index.jsonl differs")
                    || reason.hasPrefix("built with another projection")
                {
                    // Stale, not damaged (the log rewritten, or the projection changed, after them:
                    // `index add` interrupted between its renames, say): the store does not use
                    // them, and the next writer rebuilds them.
                    return []
                }
                return [Self.segmentProblem(FileNames.manifest, reason)]
            case .success(let (_, opened)):
                segments = opened
            }
        }
        for segment in segments {
            let file = FileNames.segments + "/" + segment.record.fileName
            let filePath = path(file)
            if let damage = try segment.mapped.reader.verifyAll(reading: { (offset, count) throws(StoreError) in
                try fileSystem.contents(of: filePath, from: offset, limit: count)
            }) {
                return [Self.segmentProblem(file, damage.description)]
            }
        }
        return []
    }

    /// A problem of the segments (derived data: `repair` builds them again from the log).
    static func segmentProblem(_ file: String, _ detail: String) -> StoreProblem {
        StoreProblem(kind: .damagedSnapshot, file: file, id: nil, detail: detail + " (derived data: repair builds them again)")
    }
}
