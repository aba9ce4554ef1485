/// The command tree as the completion scripts state it: each command's options, the option sets
/// commands inherit (stated once, under the command that passes them on), and what an option's
/// value or a command's argument completes to, by option name wherever the name means one kind.
struct CompletionTable {
    let root: CommandSpec

    /// The visible command paths, root first.
    var paths: [[String]] { root.allPaths() }

    /// The command at `path`.
    func command(_ path: [String]) -> CommandSpec? { root.descendant(at: path) }

    /// The options completions offer at `path`: inherited ones, the command's own, `-h/--help`.
    func options(_ path: [String]) -> [OptionSpec] { root.effectiveOptions(at: path) }

    /// The options a command passes on to its descendants (empty for most).
    func passedOn(_ path: [String]) -> [OptionSpec] { command(path)?.options.filter(\.isInherited) ?? [] }

    /// The paths whose passed-on options the scripts state once as a shared set (those some
    /// command's ``layout(_:)`` names), root first.
    var sharedSets: [[String]] {
        let used = paths.flatMap { layout($0).shared }
        return paths.filter(used.contains)
    }

    /// `path`'s options as shared sets (by the path that passes each on) followed by the options
    /// stated at the command, in the order of ``options(_:)``; every option stated once.
    func layout(_ path: [String]) -> (shared: [[String]], own: [OptionSpec]) {
        let effective = options(path)
        guard let target = command(path) else { return ([], effective) }
        let ancestors = target.inheritsOptions ? (0..<path.count).map { Array(path.prefix($0)) } : []
        let withTarget = ancestors + [path]
        for candidate in [withTarget, ancestors] {
            let shared = candidate.filter { !passedOn($0).isEmpty }
            let stated = shared.flatMap(passedOn)
            let names = Set(stated.map(\.long))
            let own = effective.filter { !names.contains($0.long) }
            if (stated + own).map(\.long) == effective.map(\.long) { return (shared, own) }
        }
        return ([], effective)
    }

    /// What a positional word at `path` completes to: its subcommands, else its first argument.
    func argument(_ path: [String]) -> Completion {
        guard let spec = command(path) else { return .kind(.none) }
        let subcommands = spec.visibleSubcommands
        if !subcommands.isEmpty { return .subcommands(subcommands.map(\.name)) }
        return .kind(spec.arguments.first?.completion ?? .none)
    }

    /// A positional word's completion: a command's subcommands or an argument's kind.
    enum Completion: Equatable {
        case subcommands([String])
        case kind(CompletionKind)
    }

    /// Groups `items` by `key`, in order of first appearance.
    static func grouped<Item, Key: Equatable>(_ items: [Item], by key: (Item) -> Key) -> [(key: Key, items: [Item])] {
        var groups: [(key: Key, items: [Item])] = []
        for item in items {
            let itemKey = key(item)
            if let index = groups.firstIndex(where: { $0.key == itemKey }) {
                groups[index].items.append(item)
            } else {
                groups.append((itemKey, [item]))
            }
        }
        return groups
    }

    /// An option's spellings on the line (`-o`, `--output`).
    static func spellings(_ option: OptionSpec) -> [String] {
        (option.short.map { ["-\($0)"] } ?? []) + ["--\(option.long)"]
    }

    /// Commands whose option or argument completes to one kind.
    struct Commands: Equatable {
        var kind: CompletionKind
        var paths: [[String]]
    }

    /// How each spelling of a value-taking option completes: by the spelling alone where every
    /// command that has it means one kind (`byName`), else by command (`byCommand`, the commands
    /// grouped by kind). Kinds that complete nothing are left out: no entry means no words.
    func valueCompletions() -> (
        byName: [(names: [String], kind: CompletionKind)], byCommand: [(names: [String], commands: [Commands])]
    ) {
        var uses: [(name: String, path: [String], kind: CompletionKind)] = []
        for path in paths {
            for option in options(path) where option.takesValue {
                for name in Self.spellings(option) { uses.append((name, path, option.completion)) }
            }
        }
        var plain: [(name: String, kind: CompletionKind)] = []
        var keyed: [(name: String, commands: [Commands])] = []
        for group in Self.grouped(uses, by: \.name) {
            let kinds = Self.grouped(group.items, by: \.kind)
            if kinds.count == 1 {
                plain.append((group.key, kinds[0].key))
            } else {
                let commands = kinds.filter { $0.key != .none }.map { Commands(kind: $0.key, paths: $0.items.map(\.path)) }
                keyed.append((group.key, commands))
            }
        }
        let byName = Self.grouped(plain.filter { $0.kind != .none }, by: \.kind).map { ($0.items.map(\.name), $0.key) }
        let byCommand = Self.grouped(keyed, by: \.commands).map { ($0.items.map(\.name), $0.key) }
        return (byName, byCommand)
    }
}
