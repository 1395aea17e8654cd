// swift-tools-version:6.0
import Foundation
import PackageDescription

/// Set by `scripts/sanitize`: the executable then links the shared Swift runtime, because the
/// static one's link flags (`--exclude-libs ALL`) also hide the sanitizer runtime's symbols, which
/// the sanitized network library it loads needs.
let linksSharedRuntime = ProcessInfo.processInfo.environment["ARCHIVIST_SHARED_RUNTIME"] == "1"
/// In that build the programs that load the network library (archivist, and the tests, which load
/// it in process) export every symbol: the sanitized library calls into the sanitizer runtime
/// linked into the program, and the runtime's own export list leaves out some of what
/// ThreadSanitizer's instrumentation of Swift calls (`__tsan_external_write`).
let exportsSanitizerRuntime: [LinkerSetting] = linksSharedRuntime ? [.unsafeFlags(["-Xlinker", "--export-dynamic"])] : []
/// Set by `scripts/sanitize thread`: ArchivistBase then compiles a `Mutex.withLock` that tells
/// ThreadSanitizer about the lock (`Support/Mutex+ThreadSanitizer.swift`), which it cannot see.
let sanitizesThreads = ProcessInfo.processInfo.environment["ARCHIVIST_SANITIZE"] == "thread"
/// GCC's folder holding `libstdc++.a` (the newest GCC's, from Debian's libstdc++-dev), or nil.
let staticCXXFolder: String? = {
    let root = "/usr/lib/gcc/x86_64-linux-gnu"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    return versions.compactMap { Int($0) }.sorted(by: >).map { "\(root)/\($0)" }
        .first { FileManager.default.fileExists(atPath: $0 + "/libstdc++.a") }
}()
/// With it, the executable links the C++ runtime statically too (`Sources/archivist/StaticCXX`;
/// also inside the group of Foundation's archives, which refer to it from members pulled late):
/// a process then starts without loading libstdc++.so.6 and binding its symbols (about 1,700
/// look-ups: a third of what `archivist --version` costs). Without it, the shared one as before.
let linksStaticCXX: [String] =
    staticCXXFolder.map { ["-L\(Context.packageDirectory)/Sources/archivist/StaticCXX", "-L\($0)"] } ?? []

let package = Package(
    name: "Archivist",
    products: [
        .library(name: "ArchivistBase", targets: ["ArchivistBase"]),
        .library(name: "ArchivistStore", targets: ["ArchivistStore"]),
        .library(name: "ArchivistClient", targets: ["ArchivistClient"]),
        .library(name: "ArchivistShell", targets: ["ArchivistShell"]),
        // libArchivistNetwork.so, written next to `archivist`, which loads it (dlopen) only to send
        // a request: the commands that do not fetch never load FoundationNetworking and libcurl.
        .library(name: "ArchivistNetwork", type: .dynamic, targets: ["ArchivistNetwork"]),
        .executable(name: "archivist", targets: ["archivist"]),
    ],
    targets: [
        // What the engine and its users share: JSON values, their parser and writer, dates, hashes,
        // and the vocabulary of a store (its schema, filters and sorts as values, errors, side files,
        // the file-system seam, and DataFolder, what the client stores through). Foundation only.
        .target(name: "ArchivistBase", dependencies: ["CMalloc"], swiftSettings: sanitizesThreads ? [.define("ARCHIVIST_TSAN")] : []),
        // The storage engine: documents, index, journal, lock, queries, text search. Foundation
        // only; it knows nothing of NYT articles (the client gives it the NYT schema).
        .target(name: "ArchivistStore", dependencies: ["ArchivistBase"]),
        // The NYT Article Search API client: requests, tolerant decoding, pacing, retries,
        // saved searches. The only async code in the project. It does not link the network stack:
        // its transport loads libArchivistNetwork.so at the first request. Nor does it depend on the
        // engine: it stores into any DataFolder (a DocumentStore is one).
        .target(name: "ArchivistClient", dependencies: ["ArchivistBase"]),
        // URLSession (FoundationNetworking, libcurl) behind a small C ABI, built only as the
        // dynamic library above; nothing depends on it at link time.
        .target(name: "ArchivistNetwork"),
        // glibc's malloc_trim (malloc.h is not in the Glibc module): the heap's free pages handed
        // back between the phases of long maintenance commands (ProcessMemory).
        .systemLibrary(name: "CMalloc"),
        // libedit, through a shim header for its variadic functions (apt: libedit-dev).
        .systemLibrary(name: "CEditLine", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
        // libpq's header (apt: libpq-dev), for its types and a table of its functions: nothing links
        // libpq; ArchivistPostgres opens libpq.so.5 with dlopen when a command talks to PostgreSQL.
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        // Copies of a folder in PostgreSQL: connections, COPY, the replicated table and its
        // checkpoint (`replicate`).
        .target(name: "ArchivistPostgres", dependencies: ["ArchivistBase", "ArchivistStore", "CLibPQ"]),
        // The command table, argument parsing and output formatting shared by the CLI and the REPL.
        .target(
            name: "ArchivistShell", dependencies: ["ArchivistBase", "ArchivistStore", "ArchivistClient", "ArchivistPostgres", "CEditLine"]),
        // The thin executable, linked with the Swift runtime and Foundation statically: a process
        // starts in half the time (no dynamic loading and relocation of libswiftCore, libFoundation
        // and ICU), and exports only Archivist's own symbols, so libArchivistNetwork.so, which
        // brings the shared runtime with FoundationNetworking, never binds to this copy. The
        // libraries named are what the static Foundation needs and the shared one brings itself.
        // It is linked position-dependent (`-no-pie`): the loader then has 2,900 relative
        // relocations to apply at each start instead of the static runtime's 78,000 (its time in
        // the loader, `LD_DEBUG=statistics`: 0.4M cycles instead of 2.8M). And with the C++
        // runtime inside (`linksStaticCXX`).
        .executableTarget(
            name: "archivist", dependencies: ["ArchivistShell"], exclude: ["StaticCXX"],
            linkerSettings: linksSharedRuntime
                ? exportsSanitizerRuntime
                : [
                    .unsafeFlags(
                        [
                            "-static-stdlib", "-Xlinker", "--start-group", "-lFoundation", "-lCoreFoundation",
                            "-lFoundationInternationalization", "-lFoundationEssentials", "-l_FoundationICU",
                            "-l_FoundationCShims", "-l_FoundationCollections",
                        ] + (linksStaticCXX.isEmpty ? [] : ["-lstdc++"]) + ["-Xlinker", "--end-group", "-Xclang-linker", "-no-pie"]
                            + linksStaticCXX)
                ]),
        // Helpers for tests and benchmarks: a fault-injecting file system, a document generator,
        // a fake NYT Article Search server on 127.0.0.1, temporary folders, and the real NYT
        // samples (`nyt-samples/`, with their provenance), the one copy every test target reads.
        // Like the client, it does not depend on the engine.
        .target(name: "ArchivistTestSupport", dependencies: ["ArchivistBase"], resources: [.copy("nyt-samples")]),
        // The fake NYT server as a program, for trying the tool offline.
        .executableTarget(name: "fake-nyt", dependencies: ["ArchivistTestSupport"]),
        // Benchmark driver pieces that need Swift (generator, raw file-system baseline).
        .executableTarget(
            name: "archivist-bench", dependencies: ["ArchivistBase", "ArchivistStore", "ArchivistClient", "ArchivistTestSupport"]),
        .testTarget(
            name: "ArchivistStoreTests", dependencies: ["ArchivistBase", "ArchivistStore", "ArchivistTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "ArchivistClientTests", dependencies: ["ArchivistBase", "ArchivistClient", "ArchivistStore", "ArchivistTestSupport"],
            resources: [.copy("Fixtures")], linkerSettings: exportsSanitizerRuntime),
        .testTarget(name: "ArchivistPostgresTests", dependencies: ["ArchivistBase", "ArchivistPostgres", "ArchivistStore"]),
        .testTarget(name: "FakeNYTServerTests", dependencies: ["ArchivistBase", "ArchivistTestSupport", "ArchivistStore"]),
        // The shell's own types in process: rendering, arguments, scripts' lines, history, completion.
        .testTarget(
            name: "ArchivistShellTests",
            dependencies: ["ArchivistBase", "ArchivistShell", "ArchivistStore", "ArchivistClient", "CEditLine", "ArchivistTestSupport"],
            resources: [.copy("Fixtures")]),
        // The built `archivist` spawned as a process.
        .testTarget(
            name: "ArchivistCLITests",
            dependencies: [
                "ArchivistBase", "ArchivistStore", "ArchivistClient", "ArchivistShell", "ArchivistPostgres", "ArchivistTestSupport",
            ],
            resources: [.copy("Fixtures")]),
    ],
    swiftLanguageModes: [.v6]
)
