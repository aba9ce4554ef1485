import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// The whole `iapctl` command line as data: every command, option, argument and help text.
///
/// Parsing, `--help`, usage errors, shell completions and man pages all come from this tree; each
/// command carries its handler. Here: the root, the program's facts and the options several groups
/// share; each command's specification, typed options and handler are one file in its group's
/// folder (`Commands/Orders/OrdersList.swift`, …).
public enum CommandTree {
    /// `--auto-renew on|off`.
    public enum Switch: String, CaseIterable, Sendable {
        case on, off
    }

    /// The program's name.
    static let name = "iapctl"

    /// The program's version, printed by `iapctl --version`.
    public static let version = "0.1.0"

    /// The root `iapctl --version` alone is parsed against (`runIAPCtl(arguments:)`): the program's
    /// name, its version and that one flag, none of the commands.
    static let versionRoot = CommandSpec(
        name: name, abstract: "", options: [StandardOptions.version], program: ProgramInfo(version: version))

    /// Order statuses (`orders.status`).
    public static let orderStatuses = OptionSpec.choices(OrderStatus.self)

    /// Member contract statuses (`member_contracts.status`).
    public static let contractStatuses = OptionSpec.choices(ContractStatus.self)

    /// The fields of an order / a contract that Apple's facts decide (a hand change of one is an override).
    public static let orderDerivedFields = OverrideRule.derivedFields(.order)
    public static let contractDerivedFields = OverrideRule.derivedFields(.contract)

    /// App Store environments a payload may come from.
    public static let environments = OptionSpec.choices(EnvironmentName.self)

    /// Restore policies.
    public static let restorePolicies = OptionSpec.choices(RestorePolicy.self)

    /// Shells `completion` writes scripts for.
    public static let shells = OptionSpec.choices(CompletionScripts.Shell.self)

    /// Options of every command that touches data (inherited from the root).
    public static let globalOptions: [OptionSpec] = [
        dbOption.spec, StandardOptions.output, StandardOptions.quiet, StandardOptions.verbose, configOption.spec,
        actorOption.spec, redactOption, StandardOptions.noColor, StandardOptions.wide, StandardOptions.csvRaw,
    ]

    /// `--db URL`.
    static let dbOption = Option<String>(
        "db", valueName: "url",
        help: "The database: a path or sqlite:PATH for SQLite, mysql://USER@HOST[:PORT]/NAME[?socket=PATH] "
            + "for MySQL/MariaDB (its password only from IAPCTL_DB_PASSWORD or an option file, never argv), or "
            + "postgres://USER@HOST[:PORT]/NAME[?…] for PostgreSQL (libpq's URI; the password from "
            + "IAPCTL_DB_PASSWORD, PGPASSWORD, ~/.pgpass or a service file, never argv).",
        environmentVariable: "IAPCTL_DB", configKey: "db", defaultValue: "iapctl.db", isInherited: true,
        section: "Global options", completion: .file)

    /// `--config FILE`.
    static let configOption = Option<String?>(
        StandardOptions.config(
            help: "A JSON file of settings keyed by long option name, e.g. {\"db\": \"…\", \"bundle-id\": \"…\"}; "
                + "flags win over the environment, the environment over the file.",
            environmentVariable: configEnvironmentVariable))

    /// Where `--config` is also read from.
    static let configEnvironmentVariable = "IAPCTL_CONFIG"

    /// `--actor NAME` (see `Invocation.actor`).
    static let actorOption = Option<String?>(
        "actor", valueName: "name", help: "Who the audit trail records for manual changes.",
        environmentVariable: "IAPCTL_ACTOR", configKey: "actor", defaultDescription: "the OS user",
        isInherited: true, section: "Global options")

    /// `--redact` (see `Redaction`).
    static let redactOption = OptionSpec.flag(
        "redact",
        help: "Mask personal data in the output, to paste it into a ticket: user ids (user-1), order numbers "
            + "and appAccountTokens (order-1), transaction, original transaction and contract ids (txn-1), "
            + "notification UUIDs (uuid-1), actors (actor-1), e-mail addresses (email-1) and phone numbers "
            + "(phone-1), in fields and in free text, on stdout and stderr; the same value the same way within "
            + "one run. Dates, counts, statuses and products are kept.",
        configKey: "redact", isInherited: true, section: "Global options")

    /// How `notify`, `verify` and `restore` decide what to trust.
    public static let trustOptions: [OptionSpec] = [
        rootCAOption.spec, bundleIdOption.spec, appAppleIdOption.spec, environmentOption.spec, atOption.spec,
    ]

    /// `--root-ca FILE`, repeatable.
    static let rootCAOption = Option<[String]>(
        "root-ca", valueName: "file", help: "A trusted root certificate, DER or PEM.",
        configKey: "root-ca", defaultDescription: "the built-in Apple Root CA - G3", section: "Trust options",
        completion: .file)

    /// `--bundle-id ID`.
    static let bundleIdOption = Option<String>(
        "bundle-id", valueName: "id", help: "The app's bundle id; payloads of other apps are rejected.",
        environmentVariable: "IAPCTL_BUNDLE_ID", configKey: "bundle-id",
        section: "Trust options")

    /// `--app-apple-id N`.
    static let appAppleIdOption = Option<Int64?>(
        "app-apple-id", valueName: "n", help: "The app's Apple id; required when Production is accepted.",
        environmentVariable: "IAPCTL_APP_APPLE_ID", configKey: "app-apple-id", section: "Trust options",
        validation: .positiveInteger)

    /// `--environment ENV`, repeatable: the accepted environments.
    static let environmentOption = Option<[EnvironmentName]>(
        "environment", valueName: "env",
        help: "An accepted environment. Xcode and LocalTesting only when asked for; their unsigned data is "
            + "then accepted with a warning.",
        allowedValues: environments, configKey: "environment",
        defaultValue: EnvironmentName.production.rawValue, section: "Trust options")

    /// `--at WHEN`: when the certificate chain must be valid.
    static let atOption = Option<TrustConfiguration.ValidationTime>(
        "at", valueName: "when",
        help: "When the certificate chain must be valid: the payload's signedDate (a receipt's creation "
            + "date) (signed), or \(timeForms).",
        configKey: "at", defaultValue: "signed", section: "Trust options", completion: .values(["signed", "now"]),
        validation: .timestamp(keywords: ["signed", "now"]))

    /// `verify` and `restore` also read StoreKit 1 app receipts.
    public static let receiptOptions: [OptionSpec] = [receiptRootCAOption.spec]

    /// `--receipt-root-ca FILE`, repeatable.
    static let receiptRootCAOption = Option<[String]>(
        "receipt-root-ca", valueName: "file",
        help: "A trusted root for StoreKit 1 app receipts, DER or PEM. Give Xcode's StoreKit test "
            + "certificate here to accept Xcode receipts (with --environment Xcode).",
        configKey: "receipt-root-ca", defaultDescription: "the built-in Apple Inc. Root",
        section: "Trust options", completion: .file)

    /// `--dry-run`.
    static let dryRun = OptionSpec.flag("dry-run", help: "Show what would change; write nothing.")

    /// `--apply`; commands say what it applies (`applyOption.with(help:)`).
    static let applyOption = OptionSpec.flag("apply", help: "Apply the changes.")

    /// `--user USER`; commands give it their own help (`userOption(_:)`, `requiredUserOption(_:)`).
    static let userOption = Option<String?>("user", valueName: "user", help: "The user.", completion: .lookup("users"))

    static func userOption(_ help: String) -> Option<String?> { userOption.with(help: help) }

    /// `--user USER` of a command that needs it.
    static func requiredUserOption(_ help: String) -> Option<String> { userOption.reading(String.self, help: help) }

    /// `--limit N|all` (``TerminalPage``).
    static let limitOption = Option<RowLimit?>("limit", valueName: "n|all", help: TerminalPage.help)

    /// `--from FILE`; commands give it their own help (`fromOption(_:)`).
    static let fromOption = Option<String?>("from", valueName: "file", help: "A file.", completion: .file)

    static func fromOption(_ help: String) -> Option<String?> {
        fromOption.with(help: help + " '-' reads stdin.")
    }

    static let reasonOption = Option<String>(
        "reason", valueName: "text", help: "Why: recorded in the audit trail with the actor and the change.")

    /// `--reason TEXT` of `orders update` and `contracts update`: needed, except with `--from` when
    /// every row carries its own `reason`.
    static let batchReasonOption = reasonOption.reading(
        String?.self,
        help: "Why: recorded in the audit trail with the actor and the change. Required, except with "
            + "--from when every row carries its own \"reason\".")

    /// `--reason TEXT` of the writers that apply Apple's word through the engine (`apple reconcile`,
    /// `apple notifications sync`): optional; without it each audit row says which event made it.
    static let engineReasonOption = reasonOption.reading(
        String?.self,
        help: "Why: recorded in every audit row this run writes, with the actor and the change; without it "
            + "each row names the event that made it (its notification type, or 'apple_api submission').")

    static let ticketOption = Option<String?>(
        "ticket", valueName: "id", help: "A support ticket or incident id, recorded with the change.")

    /// `--clear-override FIELD`, repeatable, of `orders update` and `contracts update` (`fields`: the
    /// fields Apple's facts decide, which a hand override holds).
    static func clearOverrideOption(_ fields: [String]) -> Option<[String]> {
        Option<[String]>(
            "clear-override", valueName: "field",
            help: "Lift the hand override of this field and re-derive it from Apple's facts (repeatable).",
            allowedValues: fields)
    }

    /// `--expires TIME` of `orders update` and `contracts update` (the row's new field text).
    static let expiresOption = Option<String?>(
        "expires", valueName: "time", help: "The new expiry: \(timeForms).", validation: .timestamp(keywords: []))

    static let asOfOption = Option<PointInTime?>(
        "as-of", valueName: "time",
        help: "Show the state at this moment, reconstructed from the audit trail dated by the ledger: "
            + "\(timeForms).")

    /// What every time option accepts, for help text (beside the grammar: `Timestamp.inputFormsInFull`).
    static let timeForms = Timestamp.inputFormsInFull

    static let inputFile = Argument<String?>(
        "file", help: "Where to read from; stdin when left out or '-'.", completion: .file)

    /// The root of the tree.
    ///
    /// Every handler is wrapped alike: `--redact` masks its output, and SQLite's access errors get a
    /// file-permission hint.
    public static let root = tree.mapHandlers { Redaction.wrap(DbOpen.wrap($0)) }

    /// What help and the man pages say about the program beyond the commands.
    static let program = ProgramInfo(
        version: version,
        exitStatuses: ExitCode.allCases.map { ProgramInfo.ExitStatus($0, $0.meaning) },
        manDate: "2026-11-29",
        manEnvironment: [
            .init(
                "IAPCTL_DB_PASSWORD",
                "The MySQL/MariaDB or PostgreSQL password (never taken from the command line). Like a key or a JWT, it never "
                    + "reaches a core dump: iapctl runs not dumpable with a core file size limit of 0, which also "
                    + "keeps other processes of the same user from reading its memory (ptrace, /proc/PID/mem)."),
            .init(
                "IAPCTL_DB_TIMEOUT",
                "Seconds a MySQL/MariaDB or PostgreSQL server may take to answer a statement before the run stops with exit 69 (default 60)."
            ),
            .init("NO_COLOR", "When set and not empty, no colour is used."),
        ],
        manGlobalOptionsLine:
            "The global options (\\fB\\-\\-db\\fR, \\fB\\-o\\fR, \\fB\\-q\\fR, \\fB\\-v\\fR, \\fB\\-\\-config\\fR, "
            + "\\fB\\-\\-actor\\fR, \\fB\\-\\-no\\-color\\fR) are described in",
        // A password in a URL (any setting, from any source) is refused later, but must not be printed first.
        displaySetting: { URLSecrets.redacted($0) })

    /// The root the command line `words` (argv without the program name) is parsed against.
    /// `iapctl --version` alone needs none of the commands; `iapctl verify …` and `iapctl notify …`
    /// (the one-shot runs of a webhook or an app's server) only their own, unless a config file is
    /// given, whose keys are checked against every command's options (`configInEnvironment`:
    /// IAPCTL_CONFIG is set, even empty). Every other run gets the whole tree. Building all the
    /// commands' specs was 6.5 M of the 55 M instructions of a `verify`.
    static func root(for words: [String], configInEnvironment: Bool) -> CommandSpec {
        if words == ["--version"] { return versionRoot }
        guard let first = words.first, !configInEnvironment,
            !words.contains(where: { $0.hasPrefix("--" + configOption.spec.long) })
        else { return root }
        // Only the named command's spec is built (not each candidate's, to read its name).
        let command: CommandSpec
        switch first {
        case "notify": command = NotifyCommand.command
        case "verify": command = VerifyCommand.command
        default: return root
        }
        return command.name == first ? rooted(command) : root
    }

    /// The root with only `command`, its handlers wrapped as in ``root``: the root's own options and
    /// program facts; its abstract, discussion and examples are those of `iapctl --help` only.
    static func rooted(_ command: CommandSpec) -> CommandSpec {
        CommandSpec(
            name: name, abstract: "", subcommands: [command], options: globalOptions + [StandardOptions.version],
            program: program
        ).mapHandlers { Redaction.wrap(DbOpen.wrap($0)) }
    }

    /// The tree as written, handlers unwrapped.
    static let tree = CommandSpec(
        name: name,
        abstract: "App Store in-app purchase operations: orders, subscriptions, notifications.",
        discussion: """
            iapctl keeps orders (one per payment) and member contracts (one per auto-renewing \
            subscription) in a database, applies App Store Server Notifications V2, verifies the \
            signed transactions apps send, and answers restore questions. Every JWS received is \
            kept in a ledger and every manual change is audited, so nothing is lost.

            Start with 'iapctl db init', then 'iapctl orders create' when a user starts a purchase, \
            and feed Apple's notifications to 'iapctl notify'.
            """,
        examples: [
            CommandExample("iapctl db init --db sqlite:shop.db", "Create the database shop.db."),
            CommandExample(
                "iapctl orders create --user u42 --product com.example.pro.monthly",
                "Start a purchase; prints the order number to pass to StoreKit as appAccountToken."),
            CommandExample(
                "iapctl notify --bundle-id com.example.app --app-apple-id 1234567890 < body.json",
                "Apply a notification Apple posted to your webhook."),
        ],
        subcommands: [
            db, orders, contracts, CustomerCommand.command, NotifyCommand.command, VerifyCommand.command,
            RestoreCommand.command, EntitledCommand.command, grants, users, audit, DoctorCommand.command, refunds,
            AppleCommands.group, completion, help,
            versionCommand, man, LookupCommand.command,
        ],
        options: globalOptions + [StandardOptions.version],
        program: program
    )
}
