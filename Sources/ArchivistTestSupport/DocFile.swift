import Foundation

/// A Markdown file of the package, read whole for the tests that hold the docs to the code (the
/// commands they show, the filters in them).
public struct DocFile {
    /// The package's root folder, found from this source file's path
    /// (`Sources/ArchivistTestSupport/DocFile.swift`).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path relative to the package root, for messages.
    public let path: String
    /// Its lines.
    public let lines: [String]

    /// Reads the file at `path`, relative to the package root.
    public init(_ path: String) throws {
        self.path = path
        let text = try String(contentsOfFile: Self.packageRoot.appendingPathComponent(path).path, encoding: .utf8)
        lines = text.components(separatedBy: "\n")
    }

    /// The docs whose command lines are checked: the README, every file in `docs/`, and the READMEs
    /// of `bench/` and `data/` (not the history: `CHANGELOG.md`, `bench/RESULTS.md`).
    public static func checkedFiles() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 } + ["bench/README.md", "data/README.md"]
    }
}
