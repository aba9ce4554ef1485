/// What the framework says about the program as a whole (set on the root command): its version,
/// its exit-status table, and what its man pages add beyond the command tree.
public struct ProgramInfo: Sendable {
    /// One row of the exit-status table shown by `--help` and the man page.
    public struct ExitStatus: Sendable {
        public var code: ExitCode
        public var meaning: String

        /// A status and what it means.
        public init(_ code: ExitCode, _ meaning: String) {
            self.code = code
            self.meaning = meaning
        }
    }

    /// One ENVIRONMENT entry of the main man page that no option names.
    public struct EnvironmentNote: Sendable {
        public var name: String
        public var text: String

        /// A variable and what it does.
        public init(_ name: String, _ text: String) {
            self.name = name
            self.text = text
        }
    }

    /// Printed by `--version` and in the man pages' header.
    public var version: String
    /// The exit statuses, in the order shown.
    public var exitStatuses: [ExitStatus]
    /// The date in each man page's header.
    public var manDate: String
    /// ENVIRONMENT entries after those of the options.
    public var manEnvironment: [EnvironmentNote]
    /// The roff line of a command page that names the global options (they are described in the main page).
    public var manGlobalOptionsLine: String
    /// How `-v` shows a setting's value (e.g. a password in a URL masked).
    public var displaySetting: @Sendable (String) -> String

    /// A program's description; see the properties.
    public init(
        version: String = "",
        exitStatuses: [ExitStatus] = [],
        manDate: String = "",
        manEnvironment: [EnvironmentNote] = [],
        manGlobalOptionsLine: String = "The global options are described in",
        displaySetting: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.version = version
        self.exitStatuses = exitStatuses
        self.manDate = manDate
        self.manEnvironment = manEnvironment
        self.manGlobalOptionsLine = manGlobalOptionsLine
        self.displaySetting = displaySetting
    }
}
