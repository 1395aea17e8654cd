/// The commands `archivist` knows, in the order `help` lists them.
public struct CommandTable: Sendable {
    /// The commands.
    public var commands: [Command]

    /// A table of these commands.
    public init(_ commands: [Command]) {
        self.commands = commands
    }

    /// Every command of the store.
    public static let standard = CommandTable([
        .put, .add, .get, .remove, .import, .export, .find, .count, .facet, .trend, .index,
        .search, .searches, .refresh, .archive, .archives, .changes, .watch, .replicate, .stats, .check, .repair,
        .compact, .merge, .help,
    ])

    /// The command with this name.
    public func command(named name: String) -> Command? {
        commands.first { $0.name == name }
    }

    /// The command names, for completion.
    public var names: [String] { commands.map(\.name) }
}
