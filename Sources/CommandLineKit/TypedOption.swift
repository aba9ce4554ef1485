/// Something a command lists among its options: a typed `Option` or a plain `OptionSpec` (flags).
public protocol OptionDeclaration: Sendable {
    /// What the parser, help, completions and man pages read.
    var spec: OptionSpec { get }
}

extension OptionSpec: OptionDeclaration {
    public var spec: OptionSpec { self }
}

/// Something a command lists among its positional arguments.
public protocol ArgumentDeclaration: Sendable {
    /// What the parser, help, completions and man pages read.
    var spec: ArgumentSpec { get }
}

extension ArgumentSpec: ArgumentDeclaration {
    public var spec: ArgumentSpec { self }
}

/// A named option whose value a handler reads typed: `invocation[limit]` is an `Int?` for an
/// `Option<Int?>`, an `Int` for a required or defaulted `Option<Int>`, every value for an
/// `Option<[Int]>` (repeatable). The text is checked and converted once, when the line is parsed
/// (or the environment and config file are read), and a bad value is an error naming the option.
public struct Option<Value: OptionReadable>: OptionDeclaration {
    public private(set) var spec: OptionSpec

    /// An option; the parameters mean what `OptionSpec`'s do. A non-optional, non-array `Value`
    /// makes the option required unless it has a default.
    public init(
        _ long: String, short: Character? = nil, valueName: String? = nil, help: String,
        allowedValues: [String]? = nil, environmentVariable: String? = nil, configKey: String? = nil,
        defaultValue: String? = nil, defaultDescription: String? = nil, isInherited: Bool = false,
        section: String = "Options", completion: CompletionKind? = nil, validation: OptionSpec.Validation = .none
    ) {
        self.init(
            OptionSpec(
                long, short: short, valueName: valueName, help: help, kind: Value.optionKind,
                allowedValues: allowedValues, environmentVariable: environmentVariable, configKey: configKey,
                defaultValue: defaultValue, defaultDescription: defaultDescription,
                isRequired: !Value.mayBeAbsent && defaultValue == nil, isInherited: isInherited, section: section,
                completion: completion, validation: validation))
    }

    /// `spec` read as `Value` (an option the framework declares, such as `StandardOptions.output`).
    public init(_ spec: OptionSpec) {
        precondition(spec.kind == Value.optionKind, "--\(spec.long): its kind does not read as \(Value.self)")
        var spec = spec
        spec.conversion = ValueConversion(Value.Parsed.self)
        self.spec = spec
    }

    /// The same option with another help text (a command that explains it its own way); handlers
    /// read it by either value.
    public func with(help: String) -> Option {
        var copy = self
        copy.spec.help = help
        return copy
    }

    /// The same option read as `Other` with another help text: `Option<String?>` made required
    /// (`Option<String>`) by the one command that needs it.
    public func reading<Other: OptionReadable>(_ type: Other.Type, help: String) -> Option<Other>
    where Other.Parsed == Value.Parsed {
        var spec = spec
        spec.help = help
        spec.isRequired = !Other.mayBeAbsent && spec.defaultValue == nil
        return Option<Other>(spec)
    }
}

/// A positional argument whose value a handler reads typed: `invocation[key]` is a `String` for an
/// `Argument<String>` (required), a `String?` for an `Argument<String?>` (may be left out), and
/// every remaining word for an `Argument<[String]>`.
public struct Argument<Value: OptionReadable>: ArgumentDeclaration {
    public private(set) var spec: ArgumentSpec

    /// An argument; the parameters mean what `ArgumentSpec`'s do.
    public init(_ name: String, help: String, allowedValues: [String]? = nil, completion: CompletionKind? = nil) {
        spec = ArgumentSpec(
            name, help: help, isOptional: Value.mayBeAbsent, isRepeating: Value.optionKind == .repeatable,
            allowedValues: allowedValues, completion: completion)
        spec.conversion = ValueConversion(Value.Parsed.self)
    }
}

extension Invocation {
    /// The typed value of `option`, from the command line, the environment, the config file or its
    /// default (converted when the line was parsed).
    public subscript<Value>(option: Option<Value>) -> Value {
        let long = parsed.checked(option.spec).long
        let values = parsedValues(settings.typedValues(long), as: Value.Parsed.self)
        guard let value = Value.reading(values) else {
            preconditionFailure("\(parsed.commandName): --\(long) is required but has no value")
        }
        return value
    }

    /// The typed value of the positional `argument`.
    public subscript<Value>(argument: Argument<Value>) -> Value { parsed[argument] }
}

extension ParsedInvocation {
    /// The typed value of the positional `argument` (converted when the line was parsed).
    public subscript<Value>(argument: Argument<Value>) -> Value {
        assert(
            declares(argument.spec),
            "\(commandName): a handler reads the argument <\(argument.spec.name)>, which this command does not declare")
        let index = spec.arguments.firstIndex { $0.name == argument.spec.name } ?? convertedArguments.count
        let values = parsedValues(convertedArguments.dropFirst(index), as: Value.Parsed.self)
        guard let value = Value.reading(Value.optionKind == .repeatable ? values : Array(values.prefix(1))) else {
            preconditionFailure("\(commandName): the argument <\(argument.spec.name)> is required but missing")
        }
        return value
    }
}

/// The values of type `Parsed` among `converted`, in order. A loop over the concrete slice, not
/// `compactMap`: that one runs unspecialised here (`Parsed` is the caller's), and the Swift runtime
/// looks up its sequence's associated types by scanning conformance records (0.4 M instructions
/// of a one-shot `iapctl verify`).
private func parsedValues<Parsed>(_ converted: ArraySlice<any Sendable>, as _: Parsed.Type) -> [Parsed] {
    var values: [Parsed] = []
    for value in converted {
        if let value = value as? Parsed { values.append(value) }
    }
    return values
}

private func parsedValues<Parsed>(_ converted: [any Sendable], as type: Parsed.Type) -> [Parsed] {
    parsedValues(converted[...], as: type)
}
