/// Runs one command; returns its exit status or throws a `CLIError` (or a `CLIErrorConvertible`).
public typealias CommandHandler = @Sendable (Invocation) throws -> ExitCode

/// One command of the tree: its name, help text, options, arguments, subcommands and handler.
///
/// The whole command line is described by one tree of these values; the parser, `--help`, usage
/// errors, shell completions and man pages are all derived from it, and each runnable node carries
/// the code that runs it (so a command without a handler cannot be written by mistake).
public struct CommandSpec: Sendable {
    /// The word typed on the command line (`orders`, `list`); the root's is the program name.
    public var name: String
    /// One line: what the command does.
    public var abstract: String
    /// Paragraphs that teach how to use it (blank-line separated).
    public var discussion: String
    /// Worked examples.
    public var examples: [CommandExample]
    /// Children; a command with subcommands and no handler is a group.
    public var subcommands: [CommandSpec]
    /// Options declared here (inherited ones come from ancestors, see `OptionSpec.isInherited`).
    public var options: [OptionSpec]
    /// Positional arguments, in order.
    public var arguments: [ArgumentSpec]
    /// The code that runs the command; nil for a group.
    public var handler: CommandHandler?
    /// Whether options marked inherited on ancestors apply here (false for `help`, `completion`).
    public var inheritsOptions: Bool
    /// Hidden commands are parsed but left out of help, completions and man pages.
    public var isHidden: Bool
    /// The root only: the version, the exit-status table and what the man pages add.
    public var program: ProgramInfo

    /// A command; see the properties for the meaning of each parameter.
    public init(
        name: String,
        abstract: String,
        discussion: String = "",
        examples: [CommandExample] = [],
        subcommands: [CommandSpec] = [],
        options: [any OptionDeclaration] = [],
        arguments: [any ArgumentDeclaration] = [],
        handler: CommandHandler? = nil,
        inheritsOptions: Bool = true,
        isHidden: Bool = false,
        program: ProgramInfo = ProgramInfo()
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.examples = examples
        self.subcommands = subcommands
        self.options = options.map(\.spec)
        self.arguments = arguments.map(\.spec)
        self.handler = handler
        self.inheritsOptions = inheritsOptions
        self.isHidden = isHidden
        self.program = program
    }

    /// Whether the command runs (it has a handler), as opposed to a group of commands.
    public var isRunnable: Bool { handler != nil }

    /// This tree with every handler passed through `transform` (to wrap them all alike).
    public func mapHandlers(_ transform: (@escaping CommandHandler) -> CommandHandler) -> CommandSpec {
        var copy = self
        copy.handler = handler.map(transform)
        copy.subcommands = subcommands.map { $0.mapHandlers(transform) }
        return copy
    }

    /// This tree with the handler of the command at `path` replaced (tests, embedding); the tree is
    /// unchanged if there is no such command.
    public func replacingHandler(at path: [String], with handler: @escaping CommandHandler) -> CommandSpec {
        var copy = self
        guard let first = path.first else {
            copy.handler = handler
            return copy
        }
        copy.subcommands = subcommands.map {
            $0.name == first ? $0.replacingHandler(at: Array(path.dropFirst()), with: handler) : $0
        }
        return copy
    }

    /// The direct subcommand named `name`.
    public func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// Subcommands shown in help and completions.
    public var visibleSubcommands: [CommandSpec] { subcommands.filter { !$0.isHidden } }

    /// The descendant at `path` (relative to this command), or nil.
    public func descendant(at path: [String]) -> CommandSpec? {
        var spec = self
        for word in path {
            guard let next = spec.subcommand(named: word) else { return nil }
            spec = next
        }
        return spec
    }

    /// The commands along `path`, starting with this one (nil if the path does not exist).
    public func chain(to path: [String]) -> [CommandSpec]? {
        var chain = [self]
        for word in path {
            guard let next = chain[chain.count - 1].subcommand(named: word) else { return nil }
            chain.append(next)
        }
        return chain
    }

    /// Every command path below this one, depth first (the empty path is this command).
    public func allPaths(includeHidden: Bool = false) -> [[String]] {
        var result: [[String]] = [[]]
        for child in subcommands where includeHidden || !child.isHidden {
            result += child.allPaths(includeHidden: includeHidden).map { [child.name] + $0 }
        }
        return result
    }

    /// The options that apply at `path`: inherited ones of the ancestors, then the command's own,
    /// then the built-in `-h/--help`.
    public func effectiveOptions(at path: [String]) -> [OptionSpec] {
        guard let chain = chain(to: path), let target = chain.last else { return [] }
        var result: [OptionSpec] = []
        if target.inheritsOptions {
            for ancestor in chain.dropLast() {
                result += ancestor.options.filter(\.isInherited)
            }
        }
        result += target.options
        result.append(OptionSpec.help)
        var seen = Set<String>()
        return result.filter { seen.insert($0.long).inserted }
    }
}

/// A worked example shown in help and man pages.
public struct CommandExample: Sendable {
    /// The command line, starting with the program name.
    public var commandLine: String
    /// What it does.
    public var explanation: String

    /// An example command line and what it does.
    public init(_ commandLine: String, _ explanation: String) {
        self.commandLine = commandLine
        self.explanation = explanation
    }
}
