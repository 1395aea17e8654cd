import Foundation

/// Real NYT API bodies: Article Search pages of every era, Archive API months and the gateway's
/// faults, each with its provenance in `SOURCES.md` beside them (`nyt-samples/`, a resource of this
/// module). The one copy the tests read; the fuzz seeds and `scripts/run` take theirs from it too.
public enum NYTSamples {
    /// The folder holding the samples and `SOURCES.md`.
    public static let folder: String = Bundle.module.resourceURL!.appendingPathComponent("nyt-samples").path

    /// The path of the sample `name` (`01_2016_compact_10docs_ap_reuters.json`).
    public static func path(_ name: String) -> String {
        folder + "/" + name
    }

    /// The bytes of the sample `name`.
    public static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }
}
