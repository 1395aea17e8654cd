import ArchivistBase
import Foundation
import Testing

@testable import ArchivistShell

/// Options are declared once: each command's `CommandOptions` type gives the spellings that
/// parsing, usage, help and the command's own lookups use, so a command can only look up an option
/// it declared (any other does not compile), and these tests check what is left to check: that the
/// declarations are sound, that each one reaches the command, and that no example or help text
/// names an option nothing declares.
@Suite("option declarations")
struct OptionDeclarationTests {
    /// Each command that takes options, with the type that declares them.
    static let declaringCommands: [(Command, any CommandOptions.Type)] = [
        (.remove, Command.RemoveOption.self), (.export, Command.ExportOption.self), (.find, Command.FindOption.self),
        (.facet, Command.FacetOption.self), (.search, Command.SearchOption.self), (.searches, Command.SearchesOption.self),
        (.refresh, Command.RefreshOption.self), (.archive, Command.ArchiveOption.self), (.changes, Command.ChangesOption.self),
        (.watch, Command.WatchOption.self), (.trend, Command.TrendOption.self), (.replicate, Command.ReplicateOption.self),
        (.compact, Command.CompactOption.self), (.merge, Command.MergeOption.self),
    ]

    /// Every spelling any command or `archivist` itself declares.
    static let everyDeclaredSpelling: Set<String> = Set(CommandTable.standard.commands.flatMap { $0.options.map(\.name) })
        .union(GlobalOption.allCases.flatMap { [$0.name] + $0.aliases })

    @Test("every command's options have distinct -- spellings, none taken by archivist's own options")
    func declarationsAreSound() {
        let global = Set(GlobalOption.allCases.map(\.name))
        for command in CommandTable.standard.commands {
            let names = command.options.map(\.name)
            #expect(Set(names).count == names.count, "\(command.name) declares an option twice: \(names)")
            for name in names {
                #expect(name.hasPrefix("--") && name.count > 2, "\(command.name): '\(name)' is not a -- option")
                // Global options are taken out of the command line first, so the command would never see it.
                #expect(!global.contains(name), "\(command.name): '\(name)' is a global option")
            }
        }
        let globalNames = GlobalOption.allCases.map(\.name)
        #expect(Set(globalNames).count == globalNames.count)
    }

    @Test("the table's commands with options are exactly those whose declarations these tests know")
    func everyDeclaringCommandIsChecked() {
        let withOptions = CommandTable.standard.commands.filter { !$0.options.isEmpty }.map(\.name)
        #expect(Set(withOptions) == Set(Self.declaringCommands.map(\.0.name)))
    }

    @Test(
        "each declared option given on the command line is what the command's lookup of it returns",
        arguments: OptionDeclarationTests.declaringCommands.map(\.0.name))
    func everyDeclarationReachesTheCommand(_ name: String) throws {
        let (command, options) = try #require(Self.declaringCommands.first { $0.0.name == name })
        try Self.roundTrip(command, options)
    }

    /// Parses each of `Options`' declarations alone on `command`'s line and looks it up by its case.
    static func roundTrip<Options: CommandOptions>(_ command: Command, _: Options.Type) throws {
        #expect(command.options == Options.allCases.map(\.declaration), "\(command.name) lists other options than it declares")
        let positionals = Array(repeating: "x", count: command.arity.lowerBound)
        for option in Options.allCases {
            let words = option.declaration.isFlag ? [option.name] : [option.name, "given"]
            let invocation = Invocation<Options>(try command.parse(words + positionals))
            for other in Options.allCases {
                if other.declaration.isFlag {
                    #expect(invocation.isSet(other) == (other == option), "\(command.name) \(words): \(other.name)")
                } else {
                    #expect(invocation.value(other) == (other == option ? "given" : nil), "\(command.name) \(words): \(other.name)")
                }
            }
            #expect(invocation.positionals == positionals)
        }
    }

    @Test("every example in every command's help parses against the options it declares")
    func everyExampleParses() throws {
        for command in CommandTable.standard.commands {
            for example in command.examples {
                guard case .words(var words) = CommandLineSplitter.split(example) else {
                    Issue.record("\(command.name): example '\(example)' is not a whole command")
                    continue
                }
                // Only the first command of a pipeline or redirection is archivist's.
                if let end = words.firstIndex(where: { $0 == "|" || $0 == ">" }) { words = Array(words[..<end]) }
                let rest = try Shell.parseGlobalOptions(words).words
                let named = try #require(CommandTable.standard.command(named: rest.first ?? ""), "\(example)")
                #expect(throws: Never.self, "\(command.name): example '\(example)'") {
                    _ = try named.parse(Array(rest.dropFirst()))
                }
            }
        }
    }

    @Test("every --option the help texts mention is one some command or archivist itself declares")
    func helpMentionsOnlyDeclaredOptions() throws {
        let texts = CommandTable.standard.commands.map(\.helpText) + [CommandTable.standard.overview]
        let pattern = try NSRegularExpression(pattern: "--[a-z][a-z-]*")
        for text in texts {
            let range = NSRange(text.startIndex..., in: text)
            for match in pattern.matches(in: text, range: range) {
                let spelling = String(text[Range(match.range, in: text)!])
                #expect(Self.everyDeclaredSpelling.contains(spelling), "help mentions '\(spelling)', which nothing declares")
            }
        }
    }

    @Test("archivist's own options drive its usage line and help list")
    func globalOptionsDriveHelp() {
        let overview = CommandTable.standard.overview
        #expect(overview.hasPrefix(GlobalOption.usageLine + "\n"))
        for option in GlobalOption.allCases where option.isListed {
            #expect(overview.contains("\n  \(option.declaration.label) "), "help lists \(option.name)")
            #expect(overview.contains(option.declaration.help))
        }
        for option in GlobalOption.allCases where option.usageLabel != nil {
            #expect(GlobalOption.usageLine.contains("[\(option.usageLabel!)]"))
        }
    }

    @Test("arguments parsed for one command cannot be read through another command's declarations")
    func foreignArgumentsStopTheProcess() async throws {
        await #expect(processExitsWith: .failure) {
            let parsed = try Command.search.parse(["--save", "name"])
            _ = Invocation<Command.FindOption>(parsed)
        }
    }

    @Test("asking a flag for a value, or an option with a value whether it is set, stops the process")
    func lookupOfTheWrongKindStopsTheProcess() async throws {
        await #expect(processExitsWith: .failure) {
            let invocation = Invocation<Command.SearchOption>(try Command.search.parse(["--all"]))
            _ = invocation.value(.all)
        }
        await #expect(processExitsWith: .failure) {
            let invocation = Invocation<Command.SearchOption>(try Command.search.parse(["--pages", "2"]))
            _ = invocation.isSet(.pages)
        }
    }
}
