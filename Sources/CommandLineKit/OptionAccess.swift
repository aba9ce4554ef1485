/// Options read by their spec rather than by a string: a handler names the same `OptionSpec`
/// value its command's specification declares (`static let status = OptionSpec(…)`), so a renamed
/// or removed option is a compile error, not a silent nil.
extension Invocation {
    /// The resolved value of `option` (command line > environment > config > default).
    public func value(_ option: OptionSpec) -> String? { settings.value(option.long) }

    /// The resolved values of a repeatable `option`.
    public func values(_ option: OptionSpec) -> [String] { settings.values(option.long) }

    /// Whether the flag `option` is on (from any source).
    public func flag(_ option: OptionSpec) -> Bool { settings.flag(option.long) }

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
    public func value(_ option: OptionSpec) -> String? { value(option.long) }

    /// Every value of a repeatable `option` given on the command line, in order.
    public func values(_ option: OptionSpec) -> [String] { values(option.long) }

    /// Whether `option` was given on the command line.
    public func flag(_ option: OptionSpec) -> Bool { flag(option.long) }
}
