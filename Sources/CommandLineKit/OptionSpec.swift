import IAPFoundation

/// One named option (`--status S`, `-o FORMAT`, `--dry-run`) with its help, values and sources.
public struct OptionSpec: Sendable {
    /// How many values the option takes.
    public enum Kind: Sendable, Equatable {
        /// No value: present or not.
        case flag
        /// One value; given twice, the last wins.
        case value
        /// One value each time; may be given many times.
        case repeatable
    }

    /// Extra checks on a value, beyond an enumerated list.
    public enum Validation: Sendable, Equatable {
        case none
        /// A decimal integer ≥ 1.
        case positiveInteger
        /// One of the keywords (e.g. `signed`, `now`) or an ISO-8601 date/time.
        case timestamp(keywords: [String])
    }

    /// The long name without dashes (`db`); also the key of `ParsedInvocation.value(_:)`.
    public var long: String
    /// The one-letter short name (`o` for `-o`).
    public var short: Character?
    /// The placeholder shown for the value (`url`, `file`).
    public var valueName: String?
    /// One or two sentences.
    public var help: String
    public var kind: Kind
    /// The only accepted values (matched without regard to case, reported in canonical spelling).
    public var allowedValues: [String]?
    /// An environment variable that supplies the value when the option is not given.
    public var environmentVariable: String?
    /// The key in the `--config` JSON file that supplies the value.
    public var configKey: String?
    /// The value used when no source gives one (repeatable: the single default value).
    public var defaultValue: String?
    /// How help describes a computed default (e.g. "the OS user"); overrides `defaultValue` there.
    public var defaultDescription: String?
    /// Whether the command fails with a usage error when the option is missing.
    public var isRequired: Bool
    /// Whether the option also applies to every descendant command.
    public var isInherited: Bool
    /// The help section the option is listed under (`Options`, `Global options`).
    public var section: String
    /// What shells complete for the value.
    public var completion: CompletionKind
    public var validation: Validation
    /// The type the checked text converts to when the line is parsed (`Option<Value>` sets it);
    /// nil: the text itself.
    public var conversion: ValueConversion?

    /// An option; see the properties for the meaning of each parameter.
    public init(
        _ long: String,
        short: Character? = nil,
        valueName: String? = nil,
        help: String,
        kind: Kind = .value,
        allowedValues: [String]? = nil,
        environmentVariable: String? = nil,
        configKey: String? = nil,
        defaultValue: String? = nil,
        defaultDescription: String? = nil,
        isRequired: Bool = false,
        isInherited: Bool = false,
        section: String = "Options",
        completion: CompletionKind? = nil,
        validation: Validation = .none
    ) {
        self.long = long
        self.short = short
        self.valueName = kind == .flag ? nil : (valueName ?? long)
        self.help = help
        self.kind = kind
        self.allowedValues = allowedValues
        self.environmentVariable = environmentVariable
        self.configKey = configKey
        self.defaultValue = defaultValue
        self.defaultDescription = defaultDescription
        self.isRequired = isRequired
        self.isInherited = isInherited
        self.section = section
        self.completion = completion ?? (allowedValues.map { .values($0) } ?? .none)
        self.validation = validation
    }

    /// A flag option (no value).
    public static func flag(
        _ long: String, short: Character? = nil, help: String, environmentVariable: String? = nil,
        configKey: String? = nil, isInherited: Bool = false, section: String = "Options"
    ) -> OptionSpec {
        OptionSpec(
            long, short: short, help: help, kind: .flag, environmentVariable: environmentVariable,
            configKey: configKey, isInherited: isInherited, section: section)
    }

    /// The built-in `-h/--help` every command accepts.
    public static let help = OptionSpec.flag("help", short: "h", help: "Show this help and exit.")

    /// Whether the option takes a value.
    public var takesValue: Bool { kind != .flag }

    /// `--status <status>` or `-o, --output <format>` as shown in help.
    public var displayName: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--\(long)"
        if let valueName { text += " <\(valueName)>" }
        return text
    }

    /// The canonical spelling of `value` if it is allowed (case-insensitive match), else nil.
    public func canonicalValue(_ value: String) -> String? {
        guard let allowedValues else { return value }
        if allowedValues.contains(value) { return value }
        let lower = value.lowercased()
        return allowedValues.first { $0.lowercased() == lower }
    }

    /// `value` checked and converted, once: its canonical text (replacing `value`) and its typed
    /// value (the text itself when the option has no `conversion`), or why it is not acceptable.
    ///
    /// Control characters (C0, C1, bidi overrides) are refused in every value that is not a file
    /// or folder name: ids and audit texts are shown to people later and must not drive their terminal.
    func accept(_ value: inout String) throws(OptionValueProblem) -> any Sendable {
        if let problem = check(&value) { throw OptionValueProblem(problem) }
        guard let conversion else { return value }
        return try conversion.convert(value)
    }

    /// Why `value` is not acceptable to the allowed values and validation, or nil when it is;
    /// `value` is replaced by its canonical form.
    private func check(_ value: inout String) -> String? {
        if completion != .file, completion != .directory, let control = TerminalText.firstControl(value) {
            return "the value holds a control character (\(control)); type it without control or bidi characters"
        }
        if let allowedValues {
            guard let canonical = canonicalValue(value) else {
                return "'\(value)' is not a valid \(valueName ?? long); allowed: "
                    + allowedValues.joined(separator: ", ")
            }
            value = canonical
        }
        switch validation {
        case .none:
            return nil
        case .positiveInteger:
            if let number = Int(value), number >= 1 { return nil }
            return "'\(value)' is not a positive integer"
        case .timestamp(let keywords):
            if keywords.contains(value) || Timestamp.parse(value, now: 0) != nil { return nil }
            let words = keywords.map { "'\($0)'" }.joined(separator: ", ")
            return "'\(value)' is not \(words.isEmpty ? "" : words + " or ")an ISO-8601 time "
                + "(2025-09-05T01:24:32Z, 2025-09-05T09:24:32+08:00, 2025-09-05), milliseconds since 1970"
                + (keywords.contains("now") ? "" : ", now,") + " or a span back like 36h or 7d"
        }
    }
}

/// What a shell completes for an option value or argument.
public enum CompletionKind: Sendable, Equatable {
    /// Nothing (free text).
    case none
    /// File names.
    case file
    /// Folder names.
    case directory
    /// A fixed list of words.
    case values([String])
    /// Names the program looks up when asked (`PROGRAM __complete KIND PREFIX`, e.g. user ids in the
    /// database): quick, read-only, silent on error (``CompletionScripts/lookupCommand``).
    case lookup(String)
}
