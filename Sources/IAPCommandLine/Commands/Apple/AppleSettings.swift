import AppStoreAPI

/// `iapctl apple settings`: which key settings are set and from where, and whether the key file is
/// usable — without any request to Apple.
enum AppleSettingsCommand {
    static let command = CommandSpec(
        name: "settings",
        abstract: "Check the App Store Server API settings offline: which are set, from where, whether the key reads.",
        discussion: "Shows --key-file, --key-id, --issuer-id and --bundle-id with where each comes from (the "
            + "command line, an environment variable, --config, or the key file's name AuthKey_KEYID.p8 for the "
            + "key id), then reads and checks the key file. Nothing is sent to Apple. "
            + "Exit 0 when every setting is set and the key is usable, 78 otherwise.",
        examples: [
            CommandExample("iapctl apple settings --config iapctl.json", "Before the first request to Apple.")
        ],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let keyFile = invocation[AppleCommands.keyFileOption]
        let keyFileKeyId = keyFile.flatMap(APIKeyFile.keyId(inFileName:))
        let rows: [(APIClientSetup.Setting, Option<String?>)] = [
            (.keyFile, AppleCommands.keyFileOption), (.keyId, AppleCommands.keyIdOption),
            (.issuerId, AppleCommands.issuerIdOption), (.bundleId, AppleCommands.bundleIdOption),
        ]
        for (setting, option) in rows {
            let value = invocation[option].flatMap { $0.isEmpty ? nil : $0 }
            let line: String
            if let value {
                line = value + "  (" + describe(invocation.source(of: option), option: option) + ")"
            } else if setting == .keyId, let keyFileKeyId {
                line = keyFileKeyId + "  (the key file's name)"
            } else {
                line = "not set"
            }
            let label = "--\(setting.rawValue):"
            invocation.print(label + String(repeating: " ", count: max(1, 14 - label.count)) + line)
        }
        do {
            let setup = try APIClientSetup(
                keyFile: keyFile, keyId: invocation[AppleCommands.keyIdOption],
                issuerId: invocation[AppleCommands.issuerIdOption], bundleId: invocation[AppleCommands.bundleIdOption],
                environment: [:])
            if let mismatch = setup.keyIdMismatch {
                throw CLIError(
                    .config, "--key-id \(mismatch.keyId) differs from the key file's name \(mismatch.fileName)",
                    hint: "Apple refuses a mismatch: use the key id App Store Connect shows next to this key")
            }
            invocation.print("key: an EC P-256 private key, readable only by its owner; nothing was sent to Apple")
            return .success
        } catch let refusal as APIClientSetup.Refusal {
            throw refusal.cliError
        }
    }

    static func describe(_ source: Settings.Source, option: Option<String?>) -> String {
        switch source {
        case .commandLine: "--\(option.spec.long)"
        case .environment(let name): name
        case .configFile(let path): "--config \(path)"
        case .defaultValue, .unset: "default"
        }
    }
}
