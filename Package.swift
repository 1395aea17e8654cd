// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Archivist",
    products: [
        .library(name: "ArchivistStore", targets: ["ArchivistStore"]),
        .library(name: "ArchivistShell", targets: ["ArchivistShell"]),
        .executable(name: "archivist", targets: ["archivist"]),
    ],
    targets: [
        // The storage engine: documents, index, journal, lock. Foundation only.
        .target(name: "ArchivistStore"),
        // libedit, through a shim header for its variadic functions (apt: libedit-dev).
        .systemLibrary(name: "CEditLine", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
        // The command table, argument parsing and output formatting shared by the CLI and the REPL.
        .target(name: "ArchivistShell", dependencies: ["ArchivistStore", "CEditLine"]),
        // The thin executable.
        .executableTarget(name: "archivist", dependencies: ["ArchivistShell"]),
        // Helpers for tests and benchmarks: a fault-injecting file system, a document generator.
        .target(name: "ArchivistTestSupport", dependencies: ["ArchivistStore"]),
        // Benchmark driver pieces that need Swift (generator, raw file-system baseline).
        .executableTarget(name: "archivist-bench", dependencies: ["ArchivistStore", "ArchivistTestSupport"]),
        .testTarget(name: "ArchivistStoreTests", dependencies: ["ArchivistStore", "ArchivistTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ArchivistCLITests", dependencies: ["ArchivistStore", "ArchivistShell", "ArchivistTestSupport"],
                    resources: [.copy("Fixtures")]),
    ],
    swiftLanguageModes: [.v6]
)
