import ArchivistBase

/// Every name the store gives to things on disk, in one place (as LevelDB's `filename.h`); the
/// format of each file is in `docs/FORMAT.md`.
///
/// ```
/// DIR/archivist.json          metadata: format version, projected fields
/// DIR/index.jsonl             the change log: one JSON line per change; the last line for an ID wins
/// DIR/docs/<bb>/<name>.json   one document per file; <bb> is a bucket of 256, from a hash of the ID
/// DIR/journal.jsonl           IDs of the batch being written (present only during a write)
/// DIR/archivist.lock          the writers' lock file (holds the writer's pid)
/// DIR/segments/              derived: the query structures, immutable segment files
///   manifest.json             which segments are live and how far into the log they reach
///   NNNNNN.seg                a segment (`SegmentFile`, layout 4)
///   NNNNNN-G.del              generation G of segment NNNNNN's deletions
///   merge.lock                the background merger's lock (holds its pid)
///   merging/                  the background merger's segment being built, and its spill files
///   flushing/PID-NNNNNN.seg   a tail's segment a writer (process PID) builds beside its writes
/// DIR/tmp/                    documents being written, before they are renamed into docs/
/// DIR/quarantine/             unreadable files moved aside by `repair`
/// DIR/<side file>.json        side files of the store's users (the schema names them)
/// ```
public enum FileNames {
    /// The metadata file.
    public static let metadata = "archivist.json"
    /// The change log (`ChangeLog`).
    public static let index = "index.jsonl"
    /// The snapshot of the index's query structures of formats 2 and 3 (replaced by `segments/`
    /// in format 4: read, on a read-only mount, until the folder is migrated).
    public static let snapshot = "index.snapshot"
    /// The folder of the segment files and their manifest (derived; rebuilt when missing or stale).
    public static let segments = "segments"
    /// The manifest of the live segments.
    public static let manifest = "segments/manifest.json"
    /// The lock a merger in the background holds while it merges (`DocumentStore.runDueMerges`).
    public static let mergeLock = "segments/merge.lock"
    /// The background merger's folder: the segment it builds, and its spill files.
    public static let merging = "segments/merging"
    /// The folder where writers build the segments of their tails beside their writes (a bulk
    /// import's flushes), each file named after the process building it.
    public static let flushing = "segments/flushing"
    /// The write-ahead list of IDs in the batch being written.
    public static let journal = "journal.jsonl"
    /// The lock file.
    public static let lock = "archivist.lock"
    /// The documents folder.
    public static let documents = "docs"
    /// The folder for files being written.
    public static let temporary = "tmp"
    /// The folder unreadable files are moved to.
    public static let quarantine = "quarantine"
    /// The extension of document files.
    public static let documentExtension = ".json"
    /// Encoded names longer than this many bytes are shortened and end in a hash.
    public static let maximumStemLength = 200

    /// The bucket folder name (`00` to `ff`) for an ID.
    public static func bucket(for id: String) -> String {
        // FNV-1a's bits are poorly mixed for short, similar IDs: finish with MurmurHash3's fmix64.
        var hash = FNV1a64.hash(id.utf8)
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hexByte(UInt8(truncatingIfNeeded: hash))
    }

    /// The document file of an ID in a folder of `schema`, relative to the data folder:
    /// `docs/<bb>/<name>.json`.
    public static func documentPath(for id: String, in schema: StoreSchema) -> String {
        "\(documents)/\(bucket(for: id))/\(stem(for: id, in: schema))\(documentExtension)"
    }

    /// The bucket of a path made by `documentPath(for:)` (its `<bb>`), read from the path.
    static func bucket(ofDocumentPath path: String) -> String {
        let bytes = path.utf8.dropFirst(documents.utf8.count + 1).prefix(2)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file name (without extension) for an ID in a folder of `schema`.
    ///
    /// IDs stay readable: one made of the schema's ID prefix, a type of lowercase letters, `/` and
    /// the rest becomes `TYPE~REST` (with the NYT schema's `nyt://`, `nyt://article/<uuid>` becomes
    /// `article~<uuid>`), and a 24-hex ID is itself. Any other byte than `a-z 0-9 - _ .` (and `.` in
    /// first place, and every upper-case letter, so IDs that differ only in case never share a file
    /// on any file system) is written `%XX`. The mapping is reversed by `id(forStem:in:)`; names
    /// over `maximumStemLength` bytes are cut and end in `+` and a hash, and then the ID is read
    /// from the document's `_id`.
    public static func stem(for id: String, in schema: StoreSchema) -> String {
        var stem: String
        if let (type, rest) = prefixedParts(of: id, prefix: schema.idPrefix) {
            stem = type + "~" + escape(rest, leadingDotAllowed: true)
        } else {
            stem = escape(id, leadingDotAllowed: false)
        }
        if stem.utf8.count > maximumStemLength {
            var cut = Array(stem.utf8.prefix(maximumStemLength - 20))
            // Do not split a %XX triple.
            if let percent = cut.suffix(2).lastIndex(of: UInt8(ascii: "%")) { cut.removeSubrange(percent...) }
            stem = String(decoding: cut, as: UTF8.self) + "+" + FNV1a64.hex(FNV1a64.hash(id.utf8))
        }
        return stem
    }

    /// The ID a file name stands for in a folder of `schema`, or nil when the name is not one
    /// `stem(for:in:)` makes reversibly (a shortened name, or a file the store does not own).
    public static func id(forStem stem: String, in schema: StoreSchema) -> String? {
        if stem.isEmpty || stem.contains("+") { return nil }
        if let tilde = stem.firstIndex(of: "~") {
            let type = String(stem[..<tilde])
            guard !schema.idPrefix.isEmpty, !type.isEmpty, type.utf8.allSatisfy({ $0 >= 97 && $0 <= 122 }),
                let rest = unescape(String(stem[stem.index(after: tilde)...])), !rest.isEmpty
            else { return nil }
            let id = "\(schema.idPrefix)\(type)/\(rest)"
            return self.stem(for: id, in: schema) == stem ? id : nil
        }
        guard stem.utf8.first != UInt8(ascii: "."), let id = unescape(stem) else { return nil }
        // Only accept the canonical spelling, so each ID has exactly one file.
        return self.stem(for: id, in: schema) == stem ? id : nil
    }

    /// The type and the rest of an ID made of `prefix`, a type of lowercase letters, `/` and a
    /// rest; nil for any other ID, and for every ID when `prefix` is empty.
    static func prefixedParts(of id: String, prefix: String) -> (String, String)? {
        guard !prefix.isEmpty, id.utf8.starts(with: prefix.utf8) else { return nil }
        let afterPrefix = id.utf8.dropFirst(prefix.utf8.count)
        guard let slash = afterPrefix.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let type = afterPrefix[afterPrefix.startIndex..<slash]
        let rest = afterPrefix[afterPrefix.index(after: slash)...]
        guard !type.isEmpty, type.allSatisfy({ $0 >= 97 && $0 <= 122 }), !rest.isEmpty else { return nil }
        return (String(decoding: type, as: UTF8.self), String(decoding: rest, as: UTF8.self))
    }

    static func isPlain(_ byte: UInt8) -> Bool {
        (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 45 || byte == 95 || byte == 46
    }

    static func hexByte(_ byte: UInt8) -> String {
        Hex.digits(UInt64(byte), width: 2)
    }

    /// Whether a folder name inside `docs/` is one of the 256 buckets (`00` to `ff`, lowercase).
    static func isBucket(_ name: String) -> Bool {
        name.utf8.count == 2 && Hex.value(name) != nil && name == name.lowercased()
    }

    static func escape(_ text: String, leadingDotAllowed: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for (i, byte) in text.utf8.enumerated() {
            if isPlain(byte) && (byte != 46 || i > 0 || leadingDotAllowed) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + hexByte(byte)
            }
        }
        return out
    }

    static func unescape(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = Hex.value([high, low]).map(UInt8.init),
                    hexByte(value) == String(decoding: [high, low], as: UTF8.self)
                else { return nil }
                bytes.append(value)
            } else if isPlain(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
