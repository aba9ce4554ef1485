// The specification of `iapctl doctor`: the database checks.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let doctor = CommandSpec(
        name: "doctor",
        abstract: "Check the data's invariants; print each finding with the command that fixes it.",
        discussion: """
            Read-only: doctor never changes anything; review the FIX commands and run the ones \
            you agree with. Exit 0 when clean, 1 with findings. Checks:
            """ + "\n\n" + DoctorCommand.checks.map { "  \($0.name): \($0.about)" }.joined(separator: "\n"),
        examples: [
            CommandExample("iapctl doctor", "Check iapctl.db; findings as a table."),
            CommandExample("iapctl doctor -o json --environment Sandbox", "Check a Sandbox database, as JSON."),
            CommandExample("iapctl doctor --lapsed-before 2h", "Report contracts lapsed for more than two hours."),
        ],
        options: [
            environmentOption.with(help: "An environment the database accepts; rows of others are findings."),
            DoctorSpec.lapsedBefore,
        ],
        handler: DoctorCommand.run
    )
}

/// The options only `doctor` has; its handler reads them by these values.
enum DoctorSpec {
    /// `--lapsed-before TIME`: the `lapsed` check's threshold.
    static let lapsedBefore = OptionSpec(
        "lapsed-before", valueName: "time",
        help: "Report an active or canceled contract as lapsed when its paid period ended before this moment "
            + "(default 24h: a day ago, while Apple may still be retrying a notification): \(CommandTree.timeForms).",
        defaultValue: "24h")
}
