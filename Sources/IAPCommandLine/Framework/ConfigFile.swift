import IAPFoundation

/// The `--config` JSON file: one object whose keys are long option names.
///
/// ```json
/// {"db": "sqlite:/var/lib/iapctl.db", "bundle-id": "com.example.app", "environment": ["Sandbox"]}
/// ```
/// Value options take a string (or a number), repeatable options a string or an array of strings,
/// flags a boolean. Unknown keys and wrong types are configuration errors (exit 78), so a typo
/// never silently falls back to a default. Relative paths are relative to the current folder.
public struct ConfigFile: Sendable {
    /// The path the file was read from.
    public let path: String
    let members: [(key: String, value: JSONValue)]

    /// Reads and checks the file against the options of the whole tree (`root`).
    public static func load(path: String, root: CommandSpec) throws(CLIError) -> ConfigFile {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readAll(path: path, maxBytes: 1 << 20)
        } catch {
            let reason = error.message.hasPrefix("cannot open ") ? String(error.message.dropFirst(12)) : error.message
            throw CLIError(.config, "cannot read config file \(reason)", hint: "check --config or IAPCTL_CONFIG")
        }
        let document: JSONValue
        do {
            document = try JSONText.parse(bytes)
        } catch {
            throw CLIError(.config, "config file \(path): not valid JSON: \(error)")
        }
        guard let members = document.objectMembers else {
            throw CLIError(.config, "config file \(path): expected a JSON object of settings")
        }
        let known = ConfigFile.knownOptions(root)
        for (key, value) in members {
            guard let option = known[key] else {
                let hint = Suggestion.closest(to: key, among: Array(known.keys)).map { "did you mean '\($0)'?" }
                throw CLIError(
                    .config, "config file \(path): unknown setting '\(key)'",
                    hint: hint ?? "settings: " + known.keys.sorted().joined(separator: ", "))
            }
            guard ConfigFile.strings(value, for: option) != nil else {
                throw CLIError(.config, "config file \(path): '\(key)' must be \(ConfigFile.expected(option))")
            }
        }
        return ConfigFile(path: path, members: members)
    }

    /// The raw value of `key`, if present.
    public func value(forKey key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    /// The options (anywhere in the tree) that may be set in the file, by config key.
    static func knownOptions(_ root: CommandSpec) -> [String: OptionSpec] {
        var result: [String: OptionSpec] = [:]
        for path in root.allPaths(includeHidden: true) {
            for option in root.effectiveOptions(at: path) {
                if let key = option.configKey { result[key] = option }
            }
        }
        return result
    }

    /// The values of a JSON setting as strings (flags: "true"/"false"); nil if the type is wrong.
    static func strings(_ value: JSONValue, for option: OptionSpec) -> [String]? {
        func scalar(_ value: JSONValue) -> String? {
            switch value {
            case .string(let text): return text
            case .int(let number): return String(number)
            default: return nil
            }
        }
        switch option.kind {
        case .flag:
            return value.boolValue.map { [$0 ? "true" : "false"] }
        case .value:
            return scalar(value).map { [$0] }
        case .repeatable:
            if let single = scalar(value) { return [single] }
            guard let items = value.arrayValue else { return nil }
            let strings = items.compactMap(scalar)
            return strings.count == items.count ? strings : nil
        }
    }

    private static func expected(_ option: OptionSpec) -> String {
        switch option.kind {
        case .flag: return "true or false"
        case .value: return "a string"
        case .repeatable: return "a string or an array of strings"
        }
    }
}
