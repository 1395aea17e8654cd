import ArchivistBase

extension Timestamp {
    /// A form safe in file names: `20261129T192556.123Z`.
    var compactName: String {
        description.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
    }
}
