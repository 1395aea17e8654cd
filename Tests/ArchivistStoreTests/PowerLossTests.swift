import ArchivistBase
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistStore

/// Crash and power-loss tests: every write of an import, an update, a removal and a compaction is
/// in turn the point where the process dies; the file system then forgets what was not synced, and
/// a real store opened on what is left must hold, for each document, its old or its new version,
/// and everything acknowledged before the crash.
@Suite("PowerLoss")
struct PowerLossTests {
    /// What an entry says of its document, whichever structure it was read from (the log's entries
    /// point into it, the segments' carry a digest of their fields).
    static func content(_ entry: IndexEntry) -> String {
        "\(entry.id) \(entry.hash) \(entry.size) \(entry.storedAt.milliseconds) \(entry.updatedAt.milliseconds) \(entry.sequence)"
    }

    static let dataFolder = "/root/data"

    // MARK: Documents

    static func hex(_ n: Int, width: Int) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }

    /// The ID of article `n`: mostly NYT URIs, with a few 24-hex IDs (the older form).
    static func articleID(_ n: Int) -> String {
        if n % 11 == 4 { return "5a" + hex(n, width: 22) }
        return "nyt://article/\(hex(n, width: 8))-0000-4000-8000-\(hex(n * 7919, width: 12))"
    }

    /// A small NYT-shaped document; `revision` changes its headline, abstract and word count.
    static func article(_ n: Int, revision: Int = 0) -> JSONValue {
        let sections = ["World", "U.S.", "Business Day", "Arts", "Sports", "Opinion"]
        let section = sections[n % sections.count]
        return .object(sorting: [
            JSONMember(key: "_id", value: .string(articleID(n))),
            JSONMember(
                key: "abstract", value: .string("Abstract of article \(n), revision \(revision): \(String(repeating: "é", count: n % 5))")),
            JSONMember(
                key: "byline",
                value: .object(sorting: [
                    JSONMember(key: "original", value: .string("By Reporter \(n % 7)")),
                    JSONMember(
                        key: "person",
                        value: .array([
                            .object(sorting: [
                                JSONMember(key: "firstname", value: .string("Reporter")),
                                JSONMember(key: "lastname", value: .string("\(n % 7)")),
                            ])
                        ])),
                ])),
            JSONMember(key: "document_type", value: .string("article")),
            JSONMember(
                key: "headline",
                value: .object(sorting: [
                    JSONMember(key: "main", value: .string("Headline \(n), revision \(revision)")),
                    JSONMember(key: "print_headline", value: revision == 0 ? .null : .string("Print \(n)")),
                ])),
            JSONMember(
                key: "keywords",
                value: .array([
                    .object(sorting: [
                        JSONMember(key: "name", value: .string("subject")), JSONMember(key: "value", value: .string("Topic \(n % 4)")),
                    ]),
                    .object(sorting: [
                        JSONMember(key: "name", value: .string("glocations")), JSONMember(key: "value", value: .string("Place \(n % 3)")),
                    ]),
                ])),
            JSONMember(key: "news_desk", value: .string(section)),
            JSONMember(
                key: "pub_date",
                value: .string("2024-01-\(hex(n % 28 + 1, width: 2).replacingOccurrences(of: "a", with: "1"))T05:00:00+0000")),
            JSONMember(key: "section_name", value: .string(section)),
            JSONMember(key: "type_of_material", value: .string("News")),
            JSONMember(key: "web_url", value: .string("https://www.nytimes.com/2024/01/\(n)/article-\(n).html")),
            JSONMember(key: "word_count", value: .number(String(400 + n * 13 + revision))),
        ])
    }

    static func articles(_ range: Range<Int>, revision: Int = 0) -> [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: range.map { (articleID($0), article($0, revision: revision)) })
    }

    // MARK: Scenarios

    typealias Documents = [String: JSONValue]

    /// One store call and the documents the store holds once it has returned.
    struct Step {
        var name: String
        var run: (DocumentStore) throws -> Void
        var after: Documents
    }

    /// Calls run without faults to build the starting state, then the calls under test.
    struct Scenario {
        var name: String
        var setup: [Step]
        var steps: [Step]
        /// The options of the stores the scenario runs in.
        var options = DocumentStore.Options()

        /// The documents after `completed` steps under test (0: the starting state).
        func state(after completed: Int) -> Documents {
            completed == 0 ? (setup.last?.after ?? [:]) : steps[completed - 1].after
        }

        /// Every ID any state holds.
        var universe: Set<String> {
            var ids: Set<String> = []
            for step in setup + steps { ids.formUnion(step.after.keys) }
            return ids
        }
    }

    /// Builds a list of steps, each given its resulting documents from the previous ones.
    struct StepBuilder {
        var documents: Documents
        var steps: [Step] = []

        init(_ documents: Documents = [:]) { self.documents = documents }

        mutating func upsert(_ name: String, _ batch: [JSONValue]) {
            for document in batch { documents[document["_id"]!.stringValue!] = document }
            steps.append(
                Step(
                    name: name,
                    run: { store in
                        let results = try store.upsert(batch)
                        for result in results { _ = try result.outcome.get() }
                    }, after: documents))
        }

        mutating func put(_ document: JSONValue) {
            let id = document["_id"]!.stringValue!
            documents[id] = document
            steps.append(Step(name: "put \(id)", run: { store in try store.put(document, id: id) }, after: documents))
        }

        mutating func remove(_ name: String, _ ids: [String]) {
            for id in ids { documents[id] = nil }
            steps.append(Step(name: name, run: { store in try store.remove(ids) }, after: documents))
        }

        /// A mixed batch through the internal `commit`: puts and removals, in order; with `bulk`, a
        /// batch of a bulk import (`defersMerges`), whose flushes may be built in the background.
        mutating func commit(_ name: String, _ operations: [DocumentStore.Operation], bulk: Bool = false) {
            for operation in operations {
                switch operation {
                case .put(let id, let document): documents[id] = document
                case .remove(let id): documents[id] = nil
                }
            }
            steps.append(
                Step(
                    name: name,
                    run: { store in
                        if bulk { store.defersMerges = true }
                        for outcome in try store.commit(operations) { _ = try outcome.get() }
                    }, after: documents))
        }

        mutating func compact(purgeRemovals: Bool = false) {
            steps.append(
                Step(
                    name: purgeRemovals ? "compact --purge-removals" : "compact",
                    run: { store in try store.compact(purgeRemovals: purgeRemovals) }, after: documents))
        }

        /// `index add` (or drop): the log rewritten from the documents, every number kept.
        mutating func changeProjection(adding path: String) {
            steps.append(
                Step(
                    name: "index add \(path)",
                    run: { store in try store.changeProjection(to: Projection(paths: store.projection.paths + [path])) },
                    after: documents))
        }

        mutating func merge() {
            steps.append(Step(name: "merge", run: { store in try store.merge() }, after: documents))
        }

        /// The end of a bulk import: the flush built in the background is installed.
        mutating func finishBulk() {
            steps.append(
                Step(
                    name: "the import's last flush",
                    run: { store in
                        store.defersMerges = false
                        try store.finishBackgroundFlush()
                    }, after: documents))
        }

        mutating func mergeInBackground() {
            steps.append(Step(name: "merges in the background", run: { store in try store.runDueMerges() }, after: documents))
        }
    }

    /// An empty store, then three batches of ten documents.
    static func importScenario() -> Scenario {
        var steps = StepBuilder()
        for batch in 0..<3 {
            steps.upsert("import batch \(batch)", (batch * 10..<batch * 10 + 10).map { article($0) })
        }
        return Scenario(name: "import", setup: [], steps: steps.steps)
    }

    /// Thirty documents stored, which the steps under test start from.
    static func thirtyStored() -> StepBuilder {
        var setup = StepBuilder()
        setup.upsert("setup import", (0..<30).map { article($0) })
        return setup
    }

    /// Single puts, a batch of changed versions (with one new and one unchanged document), and a
    /// mixed batch of puts and removals.
    static func updateScenario() -> Scenario {
        let setup = thirtyStored()
        var steps = StepBuilder(setup.documents)
        steps.put(article(3, revision: 1))
        steps.put(article(17, revision: 1))
        steps.put(article(4, revision: 1))
        steps.upsert("update batch", stride(from: 0, to: 30, by: 3).map { article($0, revision: 2) } + [article(30), article(1)])
        steps.commit(
            "mixed batch",
            [
                .put(id: articleID(5), document: article(5, revision: 3)),
                .remove(id: articleID(8)),
                .put(id: articleID(9), document: article(9, revision: 3)),
                .remove(id: articleID(9)),
                .remove(id: articleID(10)),
                .put(id: articleID(10), document: article(10, revision: 3)),
            ])
        return Scenario(name: "update", setup: setup.steps, steps: steps.steps)
    }

    /// Removals: a batch, one with a missing ID, then a single one.
    static func removeScenario() -> Scenario {
        let setup = thirtyStored()
        var steps = StepBuilder(setup.documents)
        steps.remove("remove five", [0, 5, 10, 15, 20].map(articleID))
        steps.remove("remove one and a missing one", [articleID(25), "nyt://article/missing"])
        steps.remove("remove one", [articleID(1)])
        return Scenario(name: "remove", setup: setup.steps, steps: steps.steps)
    }

    /// An index with dead lines (updates and removals), then a compaction (which keeps the
    /// removals as tombstones), a write, a removal, a compaction that purges the tombstones, and a
    /// rewrite of the log for a new projection (every number kept).
    static func compactScenario() -> Scenario {
        var setup = thirtyStored()
        setup.upsert("setup update", (0..<6).map { article($0, revision: 1) })
        setup.remove("setup remove", [articleID(20), articleID(21)])
        var steps = StepBuilder(setup.documents)
        steps.compact()
        steps.put(article(22, revision: 1))
        steps.remove("remove one", [articleID(23)])
        steps.compact(purgeRemovals: true)
        steps.changeProjection(adding: "print_page")
        return Scenario(name: "compact", setup: setup.steps, steps: steps.steps)
    }

    /// Snapshots written and installed: an explicit merge, writes after it, merges inside
    /// commits (a threshold of four changes), then a compaction, which writes a new one.
    static func mergeScenario() -> Scenario {
        var setup = thirtyStored()
        setup.upsert("setup update", (0..<3).map { article($0, revision: 1) })
        var steps = StepBuilder(setup.documents)
        steps.merge()
        steps.put(article(7, revision: 2))
        steps.remove("remove two", [articleID(11), articleID(12)])
        steps.upsert("batch that merges", (13..<18).map { article($0, revision: 2) } + [article(31)])
        steps.compact()
        return Scenario(name: "merge", setup: setup.steps, steps: steps.steps, options: .init(flushThreshold: 4, mergeFactor: 2))
    }

    /// Merges left to the background (`runDueMerges`): writes that only flush, the merges planned,
    /// built aside and installed, more writes, the merges again.
    static func backgroundMergeScenario() -> Scenario {
        var setup = thirtyStored()
        setup.upsert("setup update", (0..<8).map { article($0, revision: 1) })
        var steps = StepBuilder(setup.documents)
        steps.mergeInBackground()
        steps.upsert("batch after the merges", (13..<18).map { article($0, revision: 2) } + [article(31)])
        steps.remove("remove two", [articleID(11), articleID(2)])
        steps.mergeInBackground()
        var options = DocumentStore.Options(flushThreshold: 4, mergeFactor: 2)
        options.mergesInBackground = true
        return Scenario(name: "background merge", setup: setup.steps, steps: steps.steps, options: options)
    }

    /// A bulk import whose flushes are built in the background (a threshold of eight changes):
    /// each batch installs the flush the one before planned (its segment renamed from
    /// `segments/flushing/`, what it supersedes deleted, the merges due run, the lines after it
    /// read again) and plans the next; updates and removals of documents in a flush being built;
    /// the import's last flush installed at its end.
    static func backgroundFlushScenario() -> Scenario {
        let setup = thirtyStored()
        var steps = StepBuilder(setup.documents)
        steps.commit("bulk batch 0", (30..<40).map { .put(id: articleID($0), document: article($0)) }, bulk: true)
        steps.commit(
            "bulk batch 1 (updates of the flush being built)",
            (30..<36).map { .put(id: articleID($0), document: article($0, revision: 1)) }
                + (40..<44).map { .put(id: articleID($0), document: article($0)) }, bulk: true)
        steps.commit(
            "bulk batch 2 (removals)",
            [.remove(id: articleID(41)), .remove(id: articleID(3))]
                + (44..<52).map { .put(id: articleID($0), document: article($0)) }, bulk: true)
        steps.finishBulk()
        var options = DocumentStore.Options(flushThreshold: 4, bulkFlushThreshold: 8, mergeFactor: 2)
        options.flushesInBackground = true
        options.waitsForBackgroundFlushes = true
        return Scenario(name: "background flush", setup: setup.steps, steps: steps.steps, options: options)
    }

    /// The names of the scenarios above, the arguments of the tests that run each of them.
    static let scenarioNames = ["import", "update", "remove", "compact", "merge", "background merge", "background flush"]

    static func scenario(named name: String) -> Scenario {
        switch name {
        case "import": importScenario()
        case "update": updateScenario()
        case "remove": removeScenario()
        case "merge": mergeScenario()
        case "background merge": backgroundMergeScenario()
        case "background flush": backgroundFlushScenario()
        default: compactScenario()
        }
    }

    // MARK: Running

    /// A fresh model file system holding the scenario's starting state (acknowledged, so durable).
    static func startingState(_ scenario: Scenario) throws -> FaultInjectingFileSystem {
        let fileSystem = FaultInjectingFileSystem()
        let store = try DocumentStore(folder: dataFolder, schema: .testArticles, options: scenario.options, fileSystem: fileSystem)
        for step in scenario.setup { try step.run(store) }
        #expect(fileSystem.refusedOperationCount == 0)
        return fileSystem
    }

    /// What one run under test did.
    struct Run {
        var fileSystem: FaultInjectingFileSystem
        /// Mutating operations the run performed.
        var operations: Int
        /// Steps that returned before the crash (their results are acknowledged).
        var completed: Int
        /// Whether the failure reached the caller as an error.
        var threw: Bool
        /// The highest sequence number given out when the last acknowledged step returned.
        var acknowledgedSequence = 0
    }

    /// Runs the steps in a new store (a new process) on a copy of the starting state, the process
    /// dying at mutating operation `crashPoint` (counted from the start of the run) when given.
    static func run(_ scenario: Scenario, from base: FaultInjectingFileSystem, crashPoint: Int?) throws -> Run {
        let fileSystem = base.copy()
        let start = fileSystem.mutatingOperationCount
        if let crashPoint { fileSystem.failAfter(operations: crashPoint) }
        var completed = 0
        var threw = false
        var acknowledgedSequence = 0
        do {
            let store = try DocumentStore(folder: dataFolder, schema: .testArticles, options: scenario.options, fileSystem: fileSystem)
            acknowledgedSequence = try store.lastSequence
            for step in scenario.steps {
                try step.run(store)
                // A call during which the process died never returned: it is not acknowledged.
                // (An automatic merge after a commit does not fail the commit: its failure is kept.)
                if fileSystem.refusedOperationCount > 0 {
                    threw = store.lastMergeFailure != nil
                    break
                }
                completed += 1
                // Reading the number writes nothing (the crash point counts writes only).
                acknowledgedSequence = try store.lastSequence
            }
        } catch {
            threw = true
        }
        return Run(
            fileSystem: fileSystem, operations: fileSystem.mutatingOperationCount - start, completed: completed, threw: threw,
            acknowledgedSequence: acknowledgedSequence)
    }

    /// What happens after the process died at the crash point.
    enum Aftermath: CustomStringConvertible {
        /// A power loss: everything not synced is forgotten (LevelDB's model). The result is
        /// materialized to a real folder and opened with `POSIXFileSystem`.
        case powerLoss
        /// Only the process was killed: the kernel keeps every write. Opened on the model.
        case killed
        /// A power loss after an arbitrary part of the unsynced changes reached the disk (torn
        /// appends included), chosen by the seed. Opened on the model.
        case writeback(UInt64)

        var description: String {
            switch self {
            case .powerLoss: "power loss"
            case .killed: "process killed"
            case .writeback(let seed): "power loss after partial writeback (seed \(seed))"
            }
        }

        func apply(to fileSystem: FaultInjectingFileSystem) {
            switch self {
            case .powerLoss: fileSystem.simulatePowerLoss()
            case .killed: fileSystem.clearFault()
            case .writeback(let seed): fileSystem.simulatePowerLoss(writebackSeed: seed)
            }
        }

        var onDisk: Bool {
            if case .powerLoss = self { return true }
            return false
        }
    }

    /// How the in-flight call's documents came back.
    enum Landing: String {
        case old, new, mixed, none
    }

    /// Opens a store on what the model holds (on disk, through a materialized copy and
    /// `POSIXFileSystem`, or on the model itself) and requires: it opens; `check` finds nothing;
    /// recovery left no journal or temporary file; each document is its acknowledged version or
    /// its in-flight one (nil: absent). Returns whether the documents that differ between the two
    /// states came back old, new or mixed.
    @discardableResult
    static func verify(
        _ model: FaultInjectingFileSystem, onDisk: Bool, acknowledged: Documents, inFlight: Documents?,
        universe: Set<String>, acknowledgedSequence: Int = 0, context: String
    ) throws -> Landing {
        let temporary = onDisk ? try TemporaryFolder() : nil
        defer { temporary?.remove() }
        let folder: String
        let fileSystem: any FileSystem
        if let temporary {
            try model.materialize(into: temporary.root)
            folder = temporary.root + dataFolder
            fileSystem = POSIXFileSystem()
        } else {
            folder = dataFolder
            fileSystem = model
        }
        let store: DocumentStore
        do {
            store = try DocumentStore(folder: folder, schema: .testArticles, fileSystem: fileSystem)
        } catch {
            Issue.record("\(context): the store does not open: \(error.localizedDescription)")
            return .none
        }
        let problems = try store.check()
        #expect(problems.isEmpty, "\(context): check found \(problems.map(\.description))")
        #expect(try fileSystem.status(of: folder + "/" + FileNames.journal) == nil, "\(context): the journal remains after open")
        let temporaries = try fileSystem.entries(ofFolder: folder + "/" + FileNames.temporary) ?? []
        #expect(temporaries.isEmpty, "\(context): temporary files remain after open: \(temporaries)")

        // Sequence numbers never go back: the last one given out is at least the last one an
        // acknowledged call saw, and the feed is in strictly increasing order up to it.
        let last = try store.lastSequence
        #expect(last >= acknowledgedSequence, "\(context): the last sequence number went back from \(acknowledgedSequence) to \(last)")
        let numbers = try store.changes().map(\.sequence)
        #expect(
            zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 } && (numbers.last ?? 0) <= last, "\(context): the feed is out of order")

        let indexed = Set(try store.entries().map(\.id))
        #expect(indexed.isSubset(of: universe), "\(context): unknown documents \(indexed.subtracting(universe).sorted())")
        // The feed from its start ends, for each ID, with what the index says: a live document's
        // last change is not a removal, and a removed one's is (or it is not in the feed at all).
        var lastKinds: [String: Change.Kind] = [:]
        for change in try store.changes() { lastKinds[change.id] = change.kind }
        for id in indexed {
            #expect(lastKinds[id] != nil && lastKinds[id] != .removed, "\(context): \(id) is live but its last change is not")
        }
        for (id, kind) in lastKinds where !indexed.contains(id) {
            #expect(kind == .removed, "\(context): \(id) is not live but its last change is \(kind)")
        }
        // Segments, when the store starts from them, hold what the log alone says.
        let logOnly = try DocumentStore(folder: folder, schema: .testArticles, options: .init(usesSegments: false), fileSystem: fileSystem)
        #expect(
            try logOnly.entries().map(Self.content) == store.entries().map(Self.content), "\(context): the segments and the log disagree")

        var sawOld = false
        var sawNew = false
        for id in universe.sorted() {
            let bytes = try store.documentBytes(withID: id)
            let old = acknowledged[id].map(JSONWriter.prettyBytes)
            let new = inFlight.map { $0[id].map(JSONWriter.prettyBytes) } ?? old
            #expect((bytes != nil) == indexed.contains(id), "\(context): \(id) readable but not indexed, or the reverse")
            if bytes == old && bytes == new { continue }
            if bytes == old {
                sawOld = true
            } else if bytes == new {
                sawNew = true
            } else {
                let describe = { (value: [UInt8]?) in value.map { "\($0.count) bytes" } ?? "absent" }
                Issue.record(
                    "\(context): \(id) is \(describe(bytes)), neither its acknowledged version (\(describe(old))) nor its new one (\(describe(new)))"
                )
            }
        }
        switch (sawOld, sawNew) {
        case (true, true): return .mixed
        case (true, false): return .old
        case (false, true): return .new
        case (false, false): return .none
        }
    }

    /// Seeds of the partial-writeback power losses tried at each crash point.
    static let writebackSeedsPerCrashPoint = 3

    /// Counts the operations of a clean run, then crashes at each of them in turn, followed by a
    /// power loss (checked on disk), a kill, and a few partial-writeback power losses (checked on
    /// the model).
    static func exerciseEveryCrashPoint(_ scenario: Scenario) throws {
        let start = try startingState(scenario)
        let clean = try run(scenario, from: start, crashPoint: nil)
        #expect(clean.completed == scenario.steps.count && !clean.threw, "\(scenario.name): the clean run failed")
        let count = clean.operations
        #expect(count > scenario.steps.count, "\(scenario.name): too few operations (\(count))")
        var landings: [String: [Landing: Int]] = [:]
        for crashPoint in 1...count {
            let seeds = (0..<writebackSeedsPerCrashPoint).map { UInt64(crashPoint * 100 + $0) }
            for aftermath in [Aftermath.powerLoss, .killed] + seeds.map(Aftermath.writeback) {
                var context = "\(scenario.name), crash at operation \(crashPoint) of \(count), then \(aftermath)"
                do {
                    let crashed = try run(scenario, from: start, crashPoint: crashPoint)
                    #expect(crashed.fileSystem.refusedOperationCount > 0, "\(context): the crash point was not reached")
                    #expect(crashed.threw, "\(context): the failed operation was not reported to the caller")
                    aftermath.apply(to: crashed.fileSystem)
                    let inFlight = crashed.completed < scenario.steps.count ? scenario.state(after: crashed.completed + 1) : nil
                    context += " (during '\(inFlight == nil ? "-" : scenario.steps[crashed.completed].name)')"
                    let landing = try verify(
                        crashed.fileSystem, onDisk: aftermath.onDisk, acknowledged: scenario.state(after: crashed.completed),
                        inFlight: inFlight, universe: scenario.universe, acknowledgedSequence: crashed.acknowledgedSequence,
                        context: context)
                    let kind =
                        switch aftermath {
                        case .powerLoss: "power loss";
                        case .killed: "killed";
                        case .writeback: "writeback"
                        }
                    landings[kind, default: [:]][landing, default: 0] += 1
                } catch {
                    Issue.record("\(context): \(error)")
                }
            }
        }
        let summary = ["power loss", "killed", "writeback"].map { kind in
            let counts = landings[kind] ?? [:]
            return "\(kind): old \(counts[.old] ?? 0), new \(counts[.new] ?? 0), mixed \(counts[.mixed] ?? 0), same \(counts[.none] ?? 0)"
        }.joined(separator: "; ")
        print(
            "PowerLoss \(scenario.name): \(count) crash points, each with a power loss (on disk), a kill and "
                + "\(writebackSeedsPerCrashPoint) partial writebacks; the in-flight call came back \(summary)")
    }

    // MARK: Tests

    @Test(
        "a crash at any point of an import, update, removal, compaction or merge keeps each document old or new",
        arguments: scenarioNames)
    func crashDuringCalls(_ name: String) throws {
        try Self.exerciseEveryCrashPoint(Self.scenario(named: name))
    }

    @Test("a power loss after the calls returned loses nothing", arguments: scenarioNames)
    func powerLossAfterAcknowledgement(_ name: String) throws {
        let scenario = Self.scenario(named: name)
        let clean = try Self.run(scenario, from: Self.startingState(scenario), crashPoint: nil)
        #expect(clean.completed == scenario.steps.count && !clean.threw)
        clean.fileSystem.simulatePowerLoss()
        let final = scenario.state(after: scenario.steps.count)
        try Self.verify(
            clean.fileSystem, onDisk: true, acknowledged: final, inFlight: nil, universe: scenario.universe,
            context: "\(name), power loss after acknowledgement")
        // The durable state alone, read through the model itself, already holds every document.
        let store = try DocumentStore(folder: Self.dataFolder, schema: .testArticles, fileSystem: clean.fileSystem)
        #expect(Set(try store.entries().map(\.id)) == Set(final.keys))
        for (id, document) in final {
            #expect(try store.documentBytes(withID: id) == JSONWriter.prettyBytes(document), "\(id)")
        }
    }

    @Test("a second crash during recovery still keeps each document old or new")
    func crashDuringRecovery() throws {
        // One batch of changed and new documents on top of thirty stored ones.
        let setup = Self.thirtyStored()
        var steps = StepBuilder(setup.documents)
        steps.upsert("update batch", (12..<18).map { Self.article($0, revision: 5) } + [Self.article(40)])
        let scenario = Scenario(name: "recovery", setup: setup.steps, steps: steps.steps)
        let start = try Self.startingState(scenario)
        let count = try Self.run(scenario, from: start, crashPoint: nil).operations
        var exercised = 0
        var firstWithRecovery = 0
        for first in 1...count {
            for firstAftermath in [Aftermath.powerLoss, .writeback(UInt64(first))] {
                // How many operations the recovery after this first crash takes.
                let probe = try Self.run(scenario, from: start, crashPoint: first)
                firstAftermath.apply(to: probe.fileSystem)
                let before = probe.fileSystem.mutatingOperationCount
                _ = try DocumentStore(folder: Self.dataFolder, schema: .testArticles, fileSystem: probe.fileSystem)
                let recoveryOperations = probe.fileSystem.mutatingOperationCount - before
                guard recoveryOperations > 0 else { continue }
                firstWithRecovery += 1
                for second in 1...recoveryOperations {
                    for secondAftermath in [Aftermath.powerLoss, .writeback(UInt64(first * 1000 + second))] {
                        let context =
                            "recovery: crash at \(first) of \(count), \(firstAftermath); "
                            + "crash in recovery at \(second) of \(recoveryOperations), \(secondAftermath)"
                        do {
                            let crashed = try Self.run(scenario, from: start, crashPoint: first)
                            firstAftermath.apply(to: crashed.fileSystem)
                            crashed.fileSystem.failAfter(operations: second)
                            #expect(throws: StoreError.self, "\(context)") {
                                try DocumentStore(folder: Self.dataFolder, schema: .testArticles, fileSystem: crashed.fileSystem)
                            }
                            secondAftermath.apply(to: crashed.fileSystem)
                            // Checked on disk once per first crash point, on the model otherwise.
                            try Self.verify(
                                crashed.fileSystem, onDisk: second == recoveryOperations && secondAftermath.onDisk,
                                acknowledged: scenario.state(after: 0), inFlight: scenario.state(after: 1),
                                universe: scenario.universe, context: context)
                        } catch {
                            Issue.record("\(context): \(error)")
                        }
                        exercised += 1
                    }
                }
            }
        }
        print(
            "PowerLoss recovery: \(count) crash points in the batch; \(firstWithRecovery) of the resulting states needed "
                + "recovery, which was crashed at each of its operations (\(exercised) double crashes)")
        #expect(exercised > 0)
    }

    @Test("a store just created survives a power loss, its projection included")
    func powerLossAfterCreation() throws {
        let fs = FaultInjectingFileSystem()
        try fs.createFolder("/root")
        try fs.synchronizeAll(containing: "/")
        let projection = Projection(paths: ["headline.main"])
        _ = try DocumentStore(folder: Self.dataFolder, schema: StoreSchema(projection: projection), fileSystem: fs)
        fs.simulatePowerLoss()
        // The data folder is new: its entry in /root must have been made durable, not only the
        // metadata file's entry in the data folder.
        #expect(try fs.status(of: Self.dataFolder) != nil)
        #expect(try fs.contents(of: Self.dataFolder + "/" + FileNames.metadata) != nil)
        let reopened = try DocumentStore(folder: Self.dataFolder, schema: .testArticles, fileSystem: fs)
        #expect(reopened.projection.paths == projection.paths)
    }

    // MARK: The model itself

    @Test("the model forgets an unsynced write and keeps a synced one")
    func modelForgetsUnsyncedWrites() throws {
        let fs = FaultInjectingFileSystem()
        try fs.createFolder("/root/data")
        try fs.synchronizeAll(containing: "/")
        // Synced content and entry: kept.
        try fs.write(Array("kept".utf8), to: "/root/data/kept")
        try fs.synchronize("/root/data/kept")
        try fs.synchronize("/root/data")
        // Never synced: forgotten.
        try fs.write(Array("lost".utf8), to: "/root/data/lost")
        // Content synced but not the entry: forgotten (the folder was not synced).
        try fs.write(Array("orphan".utf8), to: "/root/data/orphan")
        try fs.synchronize("/root/data/orphan")
        // Entry synced but not the latest content: comes back with the synced content.
        try fs.append(Array(" and more".utf8), to: "/root/data/kept")
        #expect(try fs.contents(of: "/root/data/kept") == Array("kept and more".utf8))
        #expect(try fs.contents(of: "/root/data/lost") == Array("lost".utf8))
        fs.simulatePowerLoss()
        #expect(try fs.contents(of: "/root/data/kept") == Array("kept".utf8))
        #expect(try fs.contents(of: "/root/data/lost") == nil)
        #expect(try fs.contents(of: "/root/data/orphan") == nil)
        #expect(try fs.entries(ofFolder: "/root/data") == ["kept"])
    }

    @Test("the model undoes unsynced renames, removals and folders, and keeps synced ones")
    func modelUndoesUnsyncedNamespaceChanges() throws {
        let fs = FaultInjectingFileSystem()
        try fs.createFolder("/d/tmp")
        try fs.write(Array("old".utf8), to: "/d/file")
        try fs.write(Array("new".utf8), to: "/d/tmp/file.new")
        try fs.write(Array("gone".utf8), to: "/d/gone")
        try fs.synchronizeAll(containing: "/d")
        let oldIdentity = try #require(try fs.status(of: "/d/file")).identity

        try fs.rename("/d/tmp/file.new", to: "/d/file")
        try fs.removeFile("/d/gone")
        try fs.createFolder("/d/docs/ab")
        try fs.write([1, 2, 3], to: "/d/docs/ab/x.json")
        try fs.synchronize("/d/docs/ab/x.json")
        try fs.synchronize("/d/docs/ab")
        #expect(try fs.contents(of: "/d/file") == Array("new".utf8))
        fs.simulatePowerLoss()
        // Nothing of /d was synced after the rename: it is undone, and so is the removal; the new
        // folder's entry in /d was never synced, so its synced content is lost with it.
        #expect(try fs.contents(of: "/d/file") == Array("old".utf8))
        #expect(try fs.status(of: "/d/file")?.identity == oldIdentity)
        #expect(try fs.contents(of: "/d/tmp/file.new") == Array("new".utf8))
        #expect(try fs.contents(of: "/d/gone") == Array("gone".utf8))
        #expect(try fs.status(of: "/d/docs") == nil)

        // Synced this time.
        try fs.rename("/d/tmp/file.new", to: "/d/file")
        try fs.removeFile("/d/gone")
        try fs.synchronize("/d/tmp")
        try fs.synchronize("/d")
        fs.simulatePowerLoss()
        #expect(try fs.contents(of: "/d/file") == Array("new".utf8))
        #expect(try fs.entries(ofFolder: "/d") == ["file", "tmp"])
        #expect(try fs.entries(ofFolder: "/d/tmp") == [])
    }

    @Test("the model's crash point refuses the n-th mutating operation and every later one")
    func modelCrashPoint() throws {
        let fs = FaultInjectingFileSystem()
        try fs.createFolder("/d")
        #expect(fs.mutatingOperationCount == 1)
        fs.failAfter(operations: 2)
        try fs.write([1], to: "/d/a")
        #expect(throws: StoreError.self) { try fs.write([2], to: "/d/b") }
        #expect(throws: StoreError.self) { try fs.synchronizeAll(containing: "/d") }
        #expect(fs.mutatingOperationCount == 2)
        #expect(fs.refusedOperationCount == 2)
        // Reads still work; the refused write had no effect.
        #expect(try fs.contents(of: "/d/a") == [1])
        #expect(try fs.contents(of: "/d/b") == nil)
        fs.simulatePowerLoss()
        #expect(try fs.status(of: "/d") == nil)
        try fs.createFolder("/d")
    }

    @Test("a partial writeback keeps, forgets or tears each pending change, and nothing else")
    func modelPartialWriteback() throws {
        var contents: Set<[UInt8]> = []
        var entries: Set<[String]> = []
        for seed in UInt64(0)..<64 {
            let fs = FaultInjectingFileSystem()
            try fs.createFolder("/d")
            try fs.write(Array("ab".utf8), to: "/d/log")
            try fs.synchronizeAll(containing: "/")
            try fs.append(Array("cdef".utf8), to: "/d/log")
            try fs.write(Array("x".utf8), to: "/d/new")
            fs.simulatePowerLoss(writebackSeed: seed)
            contents.insert(try #require(try fs.contents(of: "/d/log")))
            entries.insert(try #require(try fs.entries(ofFolder: "/d")))
        }
        let prefixes = Set((2...6).map { Array(Array("abcdef".utf8).prefix($0)) })
        #expect(contents.isSubset(of: prefixes))
        #expect(contents.contains(Array("ab".utf8)) && contents.contains(Array("abcdef".utf8)) && contents.count > 2)
        #expect(entries == [["log"], ["log", "new"]])
    }

    @Test("a copy of the model is independent of the original")
    func modelCopy() throws {
        let fs = FaultInjectingFileSystem()
        try fs.createFolder("/d")
        try fs.write([1], to: "/d/a")
        try fs.synchronizeAll(containing: "/")
        try fs.write([2], to: "/d/a")
        let copy = fs.copy()
        #expect(copy.mutatingOperationCount == fs.mutatingOperationCount)
        try copy.write([3], to: "/d/b")
        copy.simulatePowerLoss()
        #expect(try copy.contents(of: "/d/a") == [1])
        #expect(try copy.contents(of: "/d/b") == nil)
        #expect(try fs.contents(of: "/d/a") == [2])
        #expect(try fs.status(of: "/d/b") == nil)
    }

    @Test("a store on the model survives a power loss after each acknowledged call, and a materialized copy opens")
    func modelRoundTrip() throws {
        let fs = FaultInjectingFileSystem()
        let store = try DocumentStore(folder: Self.dataFolder, schema: .testArticles, fileSystem: fs)
        try store.put(Self.article(1), id: Self.articleID(1))
        fs.simulatePowerLoss()
        let reopened = try DocumentStore(folder: Self.dataFolder, schema: .testArticles, fileSystem: fs)
        #expect(try reopened.documentBytes(withID: Self.articleID(1)) == JSONWriter.prettyBytes(Self.article(1)))
        #expect(try reopened.check().isEmpty)
        // Unsynced writes made behind the store's back are forgotten.
        try fs.write(Array("{}".utf8), to: Self.dataFolder + "/" + FileNames.documentPath(for: Self.articleID(1), in: .nyt))
        fs.simulatePowerLoss()
        #expect(try reopened.documentBytes(withID: Self.articleID(1)) == JSONWriter.prettyBytes(Self.article(1)))
    }
}
