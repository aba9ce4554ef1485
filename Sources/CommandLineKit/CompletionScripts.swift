/// Shell completion scripts (bash, zsh, fish) generated from the command tree.
///
/// They complete commands, subcommands, options, enumerated values (statuses, formats,
/// environments, policies, shells) and file names for FILE arguments and file options. Each
/// states the tree once (``CompletionTable``): an option set that commands inherit is written
/// once, and an option's value completes by the option's name, by command only where one name
/// means different things on different commands.
public enum CompletionScripts {
    /// A shell with a completion script.
    public enum Shell: String, Sendable, CaseIterable {
        case bash, zsh, fish
    }

    /// The hidden command the scripts run for a ``CompletionKind/lookup(_:)`` value: `PROGRAM __complete
    /// KIND PREFIX [--db URL] [--config FILE]` prints the matching names one a line; its errors are
    /// never shown (the runner gives it no stderr).
    public static let lookupCommand = "__complete"

    /// The options whose values the scripts hand to ``lookupCommand`` (where the names are looked up).
    public static let lookupOptions = ["db", "config"]

    /// The completion script for `shell`.
    public static func script(for shell: Shell, root: CommandSpec) -> String {
        switch shell {
        case .bash: return BashCompletion(root: root).script()
        case .zsh: return ZshCompletion(root: root).script()
        case .fish: return FishCompletion(root: root).script()
        }
    }

    /// The first sentence of a help text, without its final period (short descriptions).
    static func summary(_ text: String) -> String {
        var result = ""
        var previous: Character?
        for character in text {
            if previous == ".", character == " " { break }
            result.append(character)
            previous = character
        }
        if result.hasSuffix(".") { result.removeLast() }
        return result
    }
}

/// What the three scripts share: the tree and the program's name in it.
protocol ShellScript {
    var root: CommandSpec { get }
}

extension ShellScript {
    /// The program name.
    var name: String { root.name }
    /// The program name as a shell identifier (`_iapctl`, `__iapctl_at`).
    var ident: String { root.name.replacingDashes() }
    /// The options handed to the look-up command, as the line spells them (`--db --config`).
    var lookupFlags: String { CompletionScripts.lookupOptions.map { "--" + $0 }.joined(separator: " ") }
    /// The same as a shell `case` pattern (`--db|--config`).
    var lookupPattern: String { CompletionScripts.lookupOptions.map { "--" + $0 }.joined(separator: "|") }
    /// The tree as the scripts state it.
    var table: CompletionTable { CompletionTable(root: root) }
    /// A command path as one word (`orders list`; the root: empty).
    func spelled(_ path: [String]) -> String { path.joined(separator: " ") }
    /// The name of the shared option set `path` passes on (`from_root`, `from_apple`).
    func sharedName(_ path: [String]) -> String {
        "from_" + (path.isEmpty ? "root" : path.map { $0.replacingDashes() }.joined(separator: "_"))
    }
}

extension String {
    func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
    func replacingColons() -> String {
        var result = ""
        for character in self {
            if character == ":" { result += "\\:" } else { result.append(character) }
        }
        return result
    }
}
