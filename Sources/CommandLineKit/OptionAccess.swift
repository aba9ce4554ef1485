/// Options read by their spec rather than by a string (handlers read them typed, `invocation[option]`
/// in TypedOption.swift; the text reads here serve the framework, flags and tools): a handler names
/// the same value its command's specification declares (`static let status = Option<…>(…)`), so a renamed
/// or removed option is a compile error, not a silent nil. There is no look-up by name outside
/// the framework; and in a debug build, reading an option (or argument) the invoked command does
/// not declare stops the program (`ParsedInvocation.declares(_:)`), so a handler cannot silently
/// read another command's option either.
extension Invocation {
    /// The resolved value of `option` (command line > environment > config > default).
    public func value(_ option: OptionSpec) -> String? { settings.value(parsed.checked(option).long) }

    /// The resolved values of a repeatable `option`.
    public func values(_ option: OptionSpec) -> [String] { settings.values(parsed.checked(option).long) }

    /// Whether the flag `option` is on (from any source).
    public func flag(_ option: OptionSpec) -> Bool { settings.flag(parsed.checked(option).long) }

    /// Where the value of `option` came from (the command line, the environment, the config file,
    /// its default, or nowhere).
    public func source(of option: some OptionDeclaration) -> Settings.Source {
        settings.source(of: parsed.checked(option.spec).long)
    }

    /// Whether the invoked command declares `option` (a wrapper around every handler asks before
    /// reading an option some commands lack).
    public func declares(_ option: OptionSpec) -> Bool { parsed.declares(option) }

    /// The positional `argument` of the invoked command, if given.
    public func argument(_ argument: ArgumentSpec) -> String? { parsed.argument(argument) }

    /// The resolved value of `option` as one of its enumerated choices (nil when not given). The
    /// parser already refused any other value, so a value that is not a case here is the program's
    /// error: the option's `allowedValues` and `type` disagree.
    public func value<Choice: RawRepresentable>(_ option: OptionSpec, as type: Choice.Type) throws(CLIError) -> Choice?
    where Choice.RawValue == String {
        guard let text = value(option) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            throw CLIError(.software, "--\(option.long): '\(text)' is not a \(Choice.self)")
        }
        return choice
    }

    /// The resolved values of a repeatable `option` as its enumerated choices.
    public func values<Choice: RawRepresentable>(_ option: OptionSpec, as type: Choice.Type) throws(CLIError)
        -> [Choice]
    where Choice.RawValue == String {
        try values(option).map { text throws(CLIError) in
            guard let choice = Choice(rawValue: text) else {
                throw CLIError(.software, "--\(option.long): '\(text)' is not a \(Choice.self)")
            }
            return choice
        }
    }
}

extension OptionSpec {
    /// The raw values of an enumeration, as an option's `allowedValues` (`choices(OrderStatus.self)`).
    public static func choices<Choice: CaseIterable & RawRepresentable>(_ type: Choice.Type) -> [String]
    where Choice.RawValue == String {
        type.allCases.map(\.rawValue)
    }
}

extension OptionSpec {
    /// The same option with another help text (a command that explains it its own way); handlers
    /// read it by the original value.
    public func with(help: String, isRequired: Bool? = nil) -> OptionSpec {
        var copy = self
        copy.help = help
        if let isRequired { copy.isRequired = isRequired }
        return copy
    }
}

extension ParsedInvocation {
    /// The value of `option` given on the command line (the last one if repeated).
    public func value(_ option: OptionSpec) -> String? { value(checked(option).long) }

    /// Every value of a repeatable `option` given on the command line, in order.
    public func values(_ option: OptionSpec) -> [String] { values(checked(option).long) }

    /// Whether `option` was given on the command line.
    public func flag(_ option: OptionSpec) -> Bool { flag(checked(option).long) }

    /// The positional `argument` (found by its name among the command's arguments), if given.
    public func argument(_ argument: ArgumentSpec) -> String? {
        assert(
            declares(argument),
            "\(commandName): a handler reads the argument <\(argument.name)>, which this command does not declare")
        return self.argument(argument.name)
    }

    /// Whether this command accepts `option` (its own, inherited or `--help`): one of its options
    /// has the same long name, kind, value name, allowed values and validation (help, defaults and
    /// sources may differ: `with(help:)` copies are the same option).
    public func declares(_ option: OptionSpec) -> Bool {
        let text = ValueConversion(String.self).valueType
        return options.contains {
            $0.long == option.long && $0.kind == option.kind && $0.valueName == option.valueName
                && $0.allowedValues == option.allowedValues && $0.validation == option.validation
                && ($0.conversion?.valueType ?? text) == (option.conversion?.valueType ?? text)
        }
    }

    /// Whether this command has a positional argument named like `argument`.
    public func declares(_ argument: ArgumentSpec) -> Bool { spec.arguments.contains { $0.name == argument.name } }

    /// `option`, after checking (in a debug build) that this command declares it: a handler that
    /// reads an option its command lacks would otherwise get nil forever, silently.
    func checked(_ option: OptionSpec) -> OptionSpec {
        assert(
            declares(option), "\(commandName): a handler reads --\(option.long), which this command does not declare")
        return option
    }
}
