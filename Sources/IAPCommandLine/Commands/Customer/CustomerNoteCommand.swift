import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

extension CustomerNoteError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .empty: return CLIError.usage("--text is empty: write what support learned about the customer")
        case .tooLong(let count):
            return CLIError.usage(
                "--text is \(count) characters long; a note keeps at most \(CustomerNotes.maxLength)",
                hint: "shorten it, or add several notes")
        case .controlCharacter(let value):
            return CLIError.usage(
                "--text holds the control character U+\(String(value, radix: 16, uppercase: true)); a note is plain text "
                    + "(newlines and tabs allowed)")
        }
    }
}

/// `iapctl customer note add|list KEY`: what support learned about a customer, audited.
enum CustomerNoteCommand {
    static let command = CommandSpec(
        name: "note",
        abstract: "Keep and read notes about a customer (audited).",
        discussion: "KEY is any id of the customer, as for 'iapctl customer'. A note is plain text kept in "
            + "iap_customer_notes with the audit row that recorded it; notes are only ever added.",
        examples: [
            CommandExample(
                "iapctl customer note add u42 --text 'paid twice, refund asked from Apple' --ticket T-1042",
                "Keep what support learned."),
            CommandExample("iapctl customer note list u42", "Every note, newest first."),
        ],
        subcommands: [add, list])

    /// `--text TEXT`.
    static let text = Option<String>(
        "text", valueName: "text", help: "The note: plain text (at most \(CustomerNotes.maxLength) characters).")

    static let add = CommandSpec(
        name: "add",
        abstract: "Add a note about a customer (audited).",
        discussion: "Writes the note and its audit row (actor, ticket, the note's text) in one transaction; "
            + "with --dry-run shows it and writes nothing.",
        examples: [
            CommandExample("iapctl customer note add u42 --text 'asked for a refund by mail' --ticket T-1042", "A note.")
        ],
        options: [text, CommandTree.ticketOption, CommandTree.dryRun, CustomerResolve.by]
            + CustomerResolve.appleOptions,
        arguments: [CustomerResolve.key],
        handler: runAdd)

    static let list = CommandSpec(
        name: "list",
        abstract: "List the notes about a customer, newest first.",
        examples: [CommandExample("iapctl customer note list u42 -o json", "As JSON.")],
        options: [CustomerResolve.by] + CustomerResolve.appleOptions,
        arguments: [CustomerResolve.key],
        handler: runList)

    static func runAdd(_ invocation: Invocation) throws -> ExitCode {
        let key = invocation[CustomerResolve.key]
        let text = try CustomerNotes.checked(invocation[text])
        let ticket = invocation[CommandTree.ticketOption]
        let found = try CustomerResolve.resolve(invocation, key: key)
        let user = try CustomerResolve.one(found, key: key, invocation: invocation).userId
        let dryRun = invocation.flag(CommandTree.dryRun)
        let store = try DbOpen.existing(invocation)
        let now = Timestamp.now()
        let note = try store.write(commit: !dryRun) { session in
            try CustomerNotes.add(user: user, text: text, ticket: ticket, actor: invocation.actor, now: now, in: session)
        }
        var r = CustomerRendering.note(note)
        r.append("user_id", user)
        r.append("dry_run", dryRun)
        invocation.emit(document: r)
        invocation.note(
            dryRun ? "dry run: nothing written" : "note #\(note.id) kept about \(user) (audit #\(note.auditId))")
        return .success
    }

    static func runList(_ invocation: Invocation) throws -> ExitCode {
        let key = invocation[CustomerResolve.key]
        let found = try CustomerResolve.resolve(invocation, key: key)
        let user = try CustomerResolve.one(found, key: key, invocation: invocation).userId
        let notes = try DbOpen.read(invocation) { session in try CustomerNotes.list(user: user, in: session) }
        for note in notes { _ = invocation.redactor?.alias(note.actor, .actor) }
        invocation.emit(
            notes.map { note in
                var r = CustomerRendering.note(note)
                r.append("user_id", user)
                return r
            }, columns: CustomerRendering.noteColumns)
        if invocation.output == .table { invocation.note("\(notes.count) note\(notes.count == 1 ? "" : "s") about \(user)") }
        return .success
    }
}
