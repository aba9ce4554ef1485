/// Turns argv (without the program name) into a `ParsedInvocation` by walking the command tree.
///
/// Rules: subcommand words come first; options may appear anywhere after them (inherited options
/// also before); `--opt value`, `--opt=value`, `-o value`, `-ovalue`, bundled short flags (`-qv`);
/// a repeated value option keeps its last value, a repeatable one keeps all; `--` ends options;
/// `-` alone is an argument (stdin). Errors are `CLIError.usage` with a "did you mean" hint.
public struct CommandLineParser: Sendable {
    /// The root of the command tree.
    public let root: CommandSpec

    /// A parser over the tree under `root`.
    public init(root: CommandSpec) {
        self.root = root
    }

    /// The command path named by the leading words of `arguments`, stopping at the first word that
    /// is not a subcommand (used to show help even when the rest of the line is wrong).
    public func bestEffortPath(_ arguments: [String]) -> [String] {
        var path: [String] = []
        var spec = root
        for word in arguments {
            if word == "--" { break }
            if word.hasPrefix("-") { continue }
            guard let next = spec.subcommand(named: word) else { break }
            path.append(word)
            spec = next
        }
        return path
    }

    /// Whether `-h`/`--help` appears before `--`.
    public func wantsHelp(_ arguments: [String]) -> Bool {
        for word in arguments {
            if word == "--" { return false }
            if word == "--help" || word == "-h" { return true }
        }
        return false
    }

    /// Parses `arguments` (argv without the program name).
    public func parse(_ arguments: [String]) throws -> ParsedInvocation {
        var path: [String] = []
        var spec = root
        var options = root.effectiveOptions(at: [])
        var given: [String: [String]] = [:]
        var converted: [String: [any Sendable]] = [:]
        var positional: [String] = []
        var optionsEnded = false
        var index = 0

        func record(_ option: OptionSpec, _ value: String?) throws {
            guard option.takesValue else {
                given[option.long] = [""]
                converted[option.long] = [true]
                return
            }
            guard var value else { throw missingValue(option, path) }
            let typed: any Sendable
            do { typed = try option.accept(&value) } catch {
                let closest = option.allowedValues.flatMap { Suggestion.closest(to: value, among: $0) }
                throw CLIError.usage(
                    error.message(naming: "--\(option.long)"),
                    hint: error.hint ?? closest.map { "did you mean '\($0)'?" }, path: path)
            }
            if option.kind == .repeatable {
                given[option.long, default: []].append(value)
                converted[option.long, default: []].append(typed)
            } else {
                given[option.long] = [value]
                converted[option.long] = [typed]
            }
        }

        func nextValue(for option: OptionSpec) -> String? {
            guard index + 1 < arguments.count else { return nil }
            let candidate = arguments[index + 1]
            if candidate.count > 1, candidate.hasPrefix("-"), looksLikeOption(candidate, options) {
                return nil
            }
            index += 1
            return candidate
        }

        while index < arguments.count {
            let word = arguments[index]
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                if !optionsEnded, positional.isEmpty, !spec.subcommands.isEmpty,
                    spec.handler == nil || spec.subcommand(named: word) != nil
                {
                    guard let next = spec.subcommand(named: word) else {
                        throw unknownCommand(word, under: spec, path: path)
                    }
                    path.append(word)
                    spec = next
                    options = root.effectiveOptions(at: path)
                } else {
                    positional.append(word)
                }
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name: String
                let inline: String?
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                    inline = nil
                }
                guard let option = options.first(where: { $0.long == name }) else {
                    let following = index + 1 < arguments.count ? arguments[index + 1] : nil
                    throw unknownOption("--\(name)", value: inline ?? following, options: options, path: path)
                }
                if !option.takesValue, inline != nil {
                    throw CLIError.usage("option '--\(name)' takes no value", path: path)
                }
                try record(option, option.takesValue ? (inline ?? nextValue(for: option)) : nil)
            } else {
                let letters = Array(word.dropFirst())
                var position = 0
                while position < letters.count {
                    let letter = letters[position]
                    guard let option = options.first(where: { $0.short == letter }) else {
                        throw unknownOption("-\(letter)", options: options, path: path)
                    }
                    if option.takesValue {
                        let rest = String(letters[(position + 1)...])
                        let attached = rest.hasPrefix("=") ? String(rest.dropFirst()) : rest
                        try record(option, attached.isEmpty ? nextValue(for: option) : attached)
                        break
                    }
                    try record(option, nil)
                    position += 1
                }
            }
            index += 1
        }

        for long in given.keys where !options.contains(where: { $0.long == long }) {
            throw CLIError.usage(
                "option '--\(long)' does not apply to '\(([root.name] + path).joined(separator: " "))'", path: path)
        }
        var typedArguments: [any Sendable] = positional
        if given[OptionSpec.help.long] == nil, spec.handler != nil {
            typedArguments = try checkArguments(positional, of: spec, path: path)
        }
        return ParsedInvocation(
            programName: root.name, path: path, spec: spec, options: options, arguments: positional, given: given,
            converted: converted, convertedArguments: typedArguments)
    }

    /// The positional words checked against the command's argument specs, and converted.
    private func checkArguments(_ positional: [String], of spec: CommandSpec, path: [String]) throws -> [any Sendable] {
        let specs = spec.arguments
        for (offset, argument) in specs.enumerated() where offset >= positional.count && !argument.isOptional {
            throw CLIError.usage("missing argument <\(argument.name)>", path: path)
        }
        if !(specs.last?.isRepeating ?? false), positional.count > specs.count {
            let extra = positional[specs.count]
            var hint: String?
            if specs.isEmpty, !spec.subcommands.isEmpty {
                hint = Suggestion.closest(to: extra, among: spec.visibleSubcommands.map(\.name)).map {
                    "did you mean '\($0)'?"
                }
            } else if specs.isEmpty, spec.options.contains(where: { $0.long == "user" }), !extra.hasPrefix("-") {
                // `entitled alice`: the user is an option here.
                hint = "did you mean '--user \(extra)'?"
            }
            throw CLIError.usage("unexpected argument '\(extra)'", hint: hint, path: path)
        }
        for (offset, value) in positional.enumerated() {
            let argument = specs[min(offset, specs.count - 1)]
            if argument.completion != .file, argument.completion != .directory,
                let control = TerminalText.firstControl(value)
            {
                throw CLIError.usage(
                    "<\(argument.name)>: the value holds a control character (\(control)); "
                        + "type it without control or bidi characters", path: path)
            }
            if let allowed = argument.allowedValues, !allowed.contains(value) {
                let closest = Suggestion.closest(to: value, among: allowed)
                throw CLIError.usage(
                    "'\(value)' is not a valid <\(argument.name)>; allowed: \(allowed.joined(separator: ", "))",
                    hint: closest.map { "did you mean '\($0)'?" }, path: path)
            }
        }
        return try positional.enumerated().map { offset, value throws(CLIError) -> any Sendable in
            let argument = specs[min(offset, specs.count - 1)]
            guard let conversion = argument.conversion else { return value }
            do throws(OptionValueProblem) { return try conversion.convert(value) } catch {
                throw CLIError.usage(error.message(naming: "<\(argument.name)>"), hint: error.hint, path: path)
            }
        }
    }

    private func looksLikeOption(_ word: String, _ options: [OptionSpec]) -> Bool {
        if word.hasPrefix("--") { return true }
        guard let letter = word.dropFirst().first else { return false }
        return options.contains { $0.short == letter }
    }

    private func missingValue(_ option: OptionSpec, _ path: [String]) -> CLIError {
        CLIError.usage(
            "option '--\(option.long)' needs a value <\(option.valueName ?? "value")>",
            hint: "give it as '--\(option.long) <\(option.valueName ?? "value")>' "
                + "(a value starting with '-' as --\(option.long)=VALUE)", path: path)
    }

    /// `value`: the inline value or the next word, for the `--format json` → `-o json` hint.
    private func unknownOption(_ word: String, value: String? = nil, options: [OptionSpec], path: [String]) -> CLIError {
        let names = options.map { "--\($0.long)" }
        let closest = word.hasPrefix("--") ? Suggestion.closest(to: word, among: names) : nil
        // `--json` and `--format json`, habits from other tools: here the format is `-o FORMAT`.
        if options.contains(where: { $0.long == "output" && $0.short == "o" }) {
            let bare = String(word.dropFirst(2).prefix { $0 != "=" })
            let formats = ["table", "json", "ndjson", "csv"]
            if word.hasPrefix("--"), formats.contains(bare.lowercased()) {
                return CLIError.usage("unknown option '\(word)'", hint: "did you mean '-o \(bare.lowercased())'?", path: path)
            }
            if word.hasPrefix("--"), bare.lowercased() == "format" {
                let formatValue = value.map { $0.lowercased() }.flatMap { formats.contains($0) ? $0 : nil } ?? "FORMAT"
                return CLIError.usage("unknown option '\(word)'", hint: "did you mean '-o \(formatValue)'?", path: path)
            }
        }
        return CLIError.usage(
            "unknown option '\(word)'", hint: closest.map { "did you mean '\($0)'?" }, path: path)
    }

    private func unknownCommand(_ word: String, under spec: CommandSpec, path: [String]) -> CLIError {
        let names = spec.visibleSubcommands.map(\.name)
        let closest = Suggestion.closest(to: word, among: names)
        let place = path.isEmpty ? "" : " for '\(root.name) \(path.joined(separator: " "))'"
        return CLIError.usage(
            "unknown command '\(word)'\(place)",
            hint: closest.map { "did you mean '\($0)'?" } ?? "commands: \(names.joined(separator: ", "))",
            path: path)
    }
}
