import IAPFoundation

/// Option values resolved from every source, in order: command line > environment > `--config`
/// file > default.
///
/// Environment values of repeatable options are comma-separated; flags accept
/// 1/0, true/false, yes/no, on/off. Bad values from the environment or the file are configuration
/// errors (exit 78); from the command line, usage errors (64).
public struct Settings: Sendable {
    /// Where a resolved value came from (for `--verbose` diagnostics and tests).
    public enum Source: Sendable, Equatable {
        case commandLine
        case environment(String)
        case configFile(String)
        case defaultValue
        case unset
    }

    private let resolved: [String: (values: [String], source: Source)]
    /// The resolved values converted to their options' types, by long name.
    private let converted: [String: [any Sendable]]
    /// The config file that was read, if any.
    public let configFile: ConfigFile?
    /// Values of a config file named on the command line that an exported environment variable
    /// overrode, as warnings.
    public let overridden: [String]

    /// Resolves every option of `parsed.spec`; reads the config file if one is named.
    public static func resolve(
        _ parsed: ParsedInvocation, environment: [String: String], root: CommandSpec
    ) throws(CLIError) -> Settings {
        var configFile: ConfigFile?
        if let configOption = parsed.option(StandardOptions.configLong) {
            let path =
                parsed.value(StandardOptions.configLong)
                ?? configOption.environmentVariable.flatMap { environment[$0] }.flatMap { $0.isEmpty ? nil : $0 }
            if let path { configFile = try ConfigFile.load(path: path, root: root) }
        }
        var resolved: [String: (values: [String], source: Source)] = [:]
        var converted: [String: [any Sendable]] = [:]
        var overridden: [String] = []
        let namedOnCommandLine = parsed.value(StandardOptions.configLong) != nil
        for option in parsed.options {
            if parsed.flag(option.long) {
                resolved[option.long] = (option.kind == .flag ? ["true"] : parsed.values(option.long), .commandLine)
                converted[option.long] = parsed.converted[option.long]
            } else if let name = option.environmentVariable, let text = environment[name], !text.isEmpty {
                let values = try checked(
                    splitEnvironment(text, option, name), option, place: "environment variable \(name)")
                resolved[option.long] = (values.texts, .environment(name))
                converted[option.long] = values.typed
                // A file named on the command line is what the person means: say when it loses.
                if namedOnCommandLine, let file = configFile, let key = option.configKey, file.value(forKey: key) != nil {
                    overridden.append(
                        "\(file.path) sets '\(key)', but the exported \(name) wins (environment over --config file); "
                            + "unset \(name) or give --\(option.long) to choose")
                }
            } else if let file = configFile, let key = option.configKey, let json = file.value(forKey: key),
                let strings = ConfigFile.strings(json, for: option)
            {
                let values = try checked(strings, option, place: "config file \(file.path): '\(key)'")
                resolved[option.long] = (values.texts, .configFile(file.path))
                converted[option.long] = values.typed
            } else if let value = option.defaultValue {
                let values = try checked([value], option, place: "the default of --\(option.long)", code: .software)
                resolved[option.long] = (values.texts, .defaultValue)
                converted[option.long] = values.typed
            }
        }
        for option in parsed.options where option.isRequired && resolved[option.long] == nil {
            var sources = ["--\(option.long)"]
            if let name = option.environmentVariable { sources.append("\(name)") }
            if let key = option.configKey, parsed.option(StandardOptions.configLong) != nil { sources.append("'\(key)' in --config") }
            throw CLIError.usage(
                "missing required option --\(option.long) <\(option.valueName ?? "value")>",
                hint: sources.count > 1 ? "set it with " + sources.joined(separator: ", ") : nil,
                path: parsed.path)
        }
        return Settings(resolved: resolved, converted: converted, configFile: configFile, overridden: overridden)
    }

    private static func splitEnvironment(_ text: String, _ option: OptionSpec, _ name: String) throws(CLIError)
        -> [String]
    {
        switch option.kind {
        case .value:
            return [text]
        case .repeatable:
            return text.split(separator: ",").map { String($0.trimmed(.spacesAndTabs)) }.filter { !$0.isEmpty }
        case .flag:
            switch text.lowercased() {
            case "1", "true", "yes", "on": return ["true"]
            case "0", "false", "no", "off": return ["false"]
            default:
                throw CLIError(.config, "environment variable \(name): '\(text)' is not a boolean (1 or 0)")
            }
        }
    }

    /// Values from outside the command line, checked and converted like the parser does; a bad one
    /// is a configuration error naming `place`.
    private static func checked(
        _ values: [String], _ option: OptionSpec, place: String, code: ExitCode = .config
    ) throws(CLIError) -> (texts: [String], typed: [any Sendable]) {
        guard option.kind != .flag else { return (values, values.map { $0 == "true" }) }
        var texts: [String] = []
        var typed: [any Sendable] = []
        for var value in values {
            do { typed.append(try option.accept(&value)) } catch {
                throw CLIError(code, "\(place): \(error.message)", hint: error.hint)
            }
            texts.append(value)
        }
        return (texts, typed)
    }

    // By long name, inside the framework only: handlers read options by their spec through
    // `Invocation` (OptionAccess.swift), which checks that the command declares them.

    /// The resolved value of a value option (the last one given on the command line).
    func value(_ long: String) -> String? { resolved[long]?.values.last }

    /// The resolved values of a repeatable option.
    func values(_ long: String) -> [String] { resolved[long]?.values ?? [] }

    /// Whether a flag is on.
    func flag(_ long: String) -> Bool { resolved[long]?.values.last == "true" }

    /// Where the value of an option came from.
    func source(of long: String) -> Source { resolved[long]?.source ?? .unset }

    /// The resolved values of an option converted to its type (`Invocation[option]`).
    func typedValues(_ long: String) -> [any Sendable] { converted[long] ?? [] }
}
