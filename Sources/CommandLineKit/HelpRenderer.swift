/// Help text and usage lines, derived from the command tree.
public struct HelpRenderer: Sendable {
    /// The root of the command tree.
    public let root: CommandSpec
    /// The line width help is wrapped to.
    public var width = 80

    /// A renderer over the tree under `root`.
    public init(root: CommandSpec) {
        self.root = root
    }

    /// `iapctl orders list`.
    public func commandName(_ path: [String]) -> String { ([root.name] + path).joined(separator: " ") }

    /// The usage line(s) without the `Usage:` label.
    public func usage(for path: [String]) -> String {
        guard let spec = root.descendant(at: path) else { return commandName(path) }
        var parts = [commandName(path)]
        if spec.handler == nil, !spec.visibleSubcommands.isEmpty {
            parts.append("<command>")
        }
        let options = root.effectiveOptions(at: path)
        for option in options where option.isRequired {
            parts.append("--\(option.long) <\(option.valueName ?? "value")>")
        }
        if options.contains(where: { !$0.isRequired }) { parts.append("[options]") }
        parts += spec.arguments.map(\.usageText)
        return parts.joined(separator: " ")
    }

    /// The full help of the command at `path`.
    public func help(for path: [String]) -> String {
        guard let spec = root.descendant(at: path) else { return "" }
        var out: [String] = []
        out += TextWrap.fill(
            path.isEmpty ? "\(root.name) — \(spec.abstract)" : "\(commandName(path)) — \(spec.abstract)", width: width,
            indent: "")
        out.append("")
        out.append("Usage: \(usage(for: path))")
        if !spec.discussion.isEmpty {
            out.append("")
            out += TextWrap.wrap(spec.discussion, width: width)
        }
        let commands = spec.visibleSubcommands
        if !commands.isEmpty {
            out.append("")
            out.append("Commands:")
            out += twoColumns(commands.map { ($0.name, $0.abstract) })
        }
        if !spec.arguments.isEmpty {
            out.append("")
            out.append("Arguments:")
            out += twoColumns(spec.arguments.map { ("<\($0.name)>", argumentHelp($0)) })
        }
        var globals: [OptionSpec] = []
        for (section, options) in sections(root.effectiveOptions(at: path)) {
            // The global options are listed once, by `help options`, not in every command's help.
            guard section != Self.globalSection else {
                globals = options
                continue
            }
            out.append("")
            out.append("\(section):")
            out += twoColumns(options.map { ($0.displayName, optionHelp($0)) })
        }
        if !globals.isEmpty {
            out.append("")
            out += TextWrap.fill(
                "\(Self.globalSection) (\(globals.map { "--" + $0.long }.joined(separator: ", "))): "
                    + "see '\(root.name) help options'.", width: width, indent: "")
        }
        if !spec.examples.isEmpty {
            out.append("")
            out.append("Examples:")
            for example in spec.examples {
                out += TextWrap.command(example.commandLine, width: width, indent: "  ", continuation: "    ")
                out += TextWrap.fill(example.explanation, width: width, indent: "      ")
            }
        }
        if path.isEmpty {
            out.append("")
            out.append("Exit status:")
            for status in root.program.exitStatuses {
                let lines = TextWrap.fill(status.meaning, width: width, indent: String(repeating: " ", count: 7))
                let code = TextWidth.pad(String(status.code.rawValue), to: 5, leading: true)
                out.append(code + "  " + (lines.first?.dropFirst(7) ?? ""))
                out += lines.dropFirst()
            }
            out.append("")
            out.append("See '\(root.name) help <command>' or '\(root.name) <command> --help' for a command's help.")
        } else if !commands.isEmpty {
            out.append("")
            out.append("See '\(commandName(path)) <command> --help' for a command's help.")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The section of the options every command takes.
    static let globalSection = "Global options"

    /// `PROGRAM help options`: the options every command takes, once.
    public func globalOptionsHelp() -> String {
        let globals = root.effectiveOptions(at: []).filter { $0.section == Self.globalSection }
        var out = TextWrap.fill(
            "The options every \(root.name) command takes (see a command's --help for its own):", width: width, indent: "")
        out.append("")
        out += twoColumns(globals.map { ($0.displayName, optionHelp($0)) })
        return out.joined(separator: "\n") + "\n"
    }

    /// Options grouped by section, in order of first appearance, `--help` last in its section.
    func sections(_ options: [OptionSpec]) -> [(String, [OptionSpec])] {
        var order: [String] = []
        var groups: [String: [OptionSpec]] = [:]
        for option in options where option.long != OptionSpec.help.long {
            if groups[option.section] == nil { order.append(option.section) }
            groups[option.section, default: []].append(option)
        }
        if groups["Options"] == nil { order.append("Options") }
        groups["Options", default: []].append(OptionSpec.help)
        // The command's own options first, the global ones last.
        func rank(_ section: String) -> Int { section == "Options" ? 0 : section == "Global options" ? 2 : 1 }
        order = order.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(
            \.element)
        return order.map { ($0, groups[$0]!) }
    }

    /// An option's help with its values, sources and default.
    public func optionHelp(_ option: OptionSpec) -> String {
        var text = option.help
        var notes: [String] = []
        if let values = option.allowedValues { notes.append("values: " + values.joined(separator: ", ")) }
        if option.kind == .repeatable { notes.append("repeatable") }
        if option.isRequired { notes.append("required") }
        if let name = option.environmentVariable { notes.append("env: \(name)") }
        if let description = option.defaultDescription ?? option.defaultValue {
            notes.append("default: \(description)")
        }
        if !notes.isEmpty { text += " [" + notes.joined(separator: "; ") + "]" }
        return text
    }

    /// An argument's help with its values.
    func argumentHelp(_ argument: ArgumentSpec) -> String {
        var text = argument.help
        if let values = argument.allowedValues { text += " [values: " + values.joined(separator: ", ") + "]" }
        return text
    }

    /// `  name   text` rows, the text wrapped in its column.
    func twoColumns(_ rows: [(String, String)]) -> [String] {
        let nameWidth = min(max(rows.map { TextWidth.of($0.0) }.max() ?? 0, 8), 28)
        let indent = String(repeating: " ", count: nameWidth + 4)
        var lines: [String] = []
        for (name, text) in rows {
            let wrapped = TextWrap.fill(text, width: width, indent: indent)
            if TextWidth.of(name) > nameWidth {
                lines.append("  " + name)
                lines += wrapped
            } else if let first = wrapped.first {
                lines.append("  " + TextWidth.pad(name, to: nameWidth) + "  " + first.dropFirst(indent.count))
                lines += wrapped.dropFirst()
            } else {
                lines.append("  " + name)
            }
        }
        return lines
    }
}
