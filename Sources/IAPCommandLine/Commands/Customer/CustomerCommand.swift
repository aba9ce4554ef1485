import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl customer KEY`: one customer from any id, in one screen (``CustomerView``); `customer note
/// add|list` beside it.
enum CustomerCommand {
    static let command = CommandSpec(
        name: "customer",
        abstract: "Show one customer from any id: entitlement, contracts and their risk, orders, refunds, notes.",
        discussion: """
            KEY is any id a ticket carries: the user id, an order number (the appAccountToken), a \
            transactionId, an originalTransactionId, an appTransactionId, or the order ID of the \
            customer's receipt e-mail (MK5TTTVWJH), which only Apple knows: given the Apple API \
            settings (--key-file, --key-id, --issuer-id, --bundle-id, as for 'apple'), iapctl asks \
            Apple's Look Up Order ID and finds the customer of the transactions Apple returns; \
            without them it says so and how. One screen shows: entitlement now and why, each \
            contract with its status and renewal risk in words, the newest orders, refund \
            requests still to answer with their deadlines, hand overrides in force, unmatched \
            items carrying any of the customer's ids, the newest audit rows and the notes. A KEY \
            that leads to several users lists them (exit 1) with the way to pick one (--by user \
            USER); none says what was searched (exit 3). A user id that is also a subcommand's \
            name ('note') follows '--'.
            """,
        examples: [
            CommandExample("iapctl customer u42", "By user id."),
            CommandExample("iapctl customer 2000000123456789 --redact", "By a transactionId, to paste in a ticket."),
            CommandExample(
                "iapctl customer MK5TTTVWJH --key-file AuthKey_ABC123.p8 --issuer-id … --bundle-id com.example.app",
                "By the order ID of a receipt e-mail (asks Apple)."),
            CommandExample("iapctl customer u42 -o json", "As one JSON document."),
        ],
        subcommands: [CustomerNoteCommand.command],
        options: [CustomerResolve.by] + CustomerResolve.appleOptions,
        arguments: [CustomerResolve.key],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let key = invocation[CustomerResolve.key]
        let found = try CustomerResolve.resolve(invocation, key: key)
        let match = try CustomerResolve.one(found, key: key, invocation: invocation)
        let now = Timestamp.now()
        let view = try DbOpen.read(invocation) { session in try CustomerView.of(match.userId, now: now, in: session) }
        for shown in view.overrides { _ = invocation.redactor?.alias(shown.override.actor, .actor) }
        for entry in view.audit { _ = invocation.redactor?.alias(entry.actor, .actor) }
        for note in view.notes { _ = invocation.redactor?.alias(note.actor, .actor) }
        let structured = invocation.output.isStructured
        invocation.emit(detail: CustomerRendering.view(view, match: match, now: now, structured: structured))
        return .success
    }
}
