/// What the parser understood: the command path, its spec, the options given and the arguments.
///
/// Values here are exactly what the command line said (enumerated values in canonical spelling);
/// `Settings` adds the environment, the config file and the defaults on top.
public struct ParsedInvocation: Sendable {
    /// The program's name (the root command's).
    public let programName: String
    /// The command path (`["orders", "list"]`); empty for the bare program.
    public let path: [String]
    /// The command the path leads to.
    public let spec: CommandSpec
    /// The options that apply to this command (inherited, own, `--help`).
    public let options: [OptionSpec]
    /// Positional arguments, in order (after `--` too).
    public let arguments: [String]
    /// Values given on the command line, by long option name, in the order given (flags: one "").
    let given: [String: [String]]
    /// The same values converted to their options' types (`OptionSpec.conversion`; flags: `true`).
    let converted: [String: [any Sendable]]
    /// `arguments` converted to their specs' types (`ArgumentSpec.conversion`).
    let convertedArguments: [any Sendable]

    /// The value of a value option given on the command line (the last one if repeated). Handlers
    /// read options by their spec (`value(_: OptionSpec)`), so this stays inside the framework.
    func value(_ long: String) -> String? { given[long]?.last }

    /// Every value of a (repeatable) option given on the command line, in order.
    func values(_ long: String) -> [String] { given[long] ?? [] }

    /// Whether a flag (or any option) was given on the command line.
    func flag(_ long: String) -> Bool { given[long] != nil }

    /// The spec of an option that applies to this command.
    func option(_ long: String) -> OptionSpec? { options.first { $0.long == long } }

    /// The positional argument named `name` (by the command's argument specs), if given.
    func argument(_ name: String) -> String? {
        guard let index = spec.arguments.firstIndex(where: { $0.name == name }) else { return nil }
        return index < arguments.count ? arguments[index] : nil
    }

    /// `iapctl orders list`.
    public var commandName: String { ([programName] + path).joined(separator: " ") }
}
