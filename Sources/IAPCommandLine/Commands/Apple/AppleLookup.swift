import AppStoreAPI
import AppStoreJWS

/// `iapctl apple lookup ORDER-ID`: Look Up Order ID, the transactions of a receipt e-mail's order.
enum AppleLookup {
    /// `lookup ORDER-ID`.
    static let orderIdArgument = Argument<AppleOrderId>(
        "order-id", help: "The order ID from the receipt e-mail (e.g. MK5TTTVWJH).")

    static let command = CommandSpec(
        name: "lookup",
        abstract: "Turn the order ID of a customer's receipt e-mail into their signed transactions.",
        discussion: "Apple's Look Up Order ID (Production only: with --environment auto, Production is asked). "
            + "Exit 3 when Apple says the order ID is invalid or unknown.",
        examples: [
            CommandExample(
                "iapctl apple lookup MK5TTTVWJH | iapctl restore --user u42", "Which orders the purchase is, for u42."),
            CommandExample("iapctl apple lookup MK5TTTVWJH -o json", "Decoded, after verification."),
        ],
        arguments: [orderIdArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let orderId = invocation[orderIdArgument].text
        let found = try transactions(ofOrder: orderId, in: session)
        try session.emitTransactions(found.items, from: found.server, what: "lookup \(orderId)")
        invocation.note("order ID \(orderId): \(found.items.count) transaction(s) from \(found.server.rawValue)")
        return found.items.isEmpty ? .notFound : .success
    }

    /// Apple's Look Up Order ID: the transactions of a receipt e-mail's order, as Apple signed them
    /// (not yet verified). An order ID Apple calls invalid is refused (not found).
    static func transactions(ofOrder orderId: String, in session: AppleSession) throws -> SignedTransactions {
        let call = Endpoint.lookup(orderId: orderId)
        // Order IDs exist only in Production: auto asks Sandbox only when Production refuses the token.
        let lookup = try OrderLookup(try session.send(call, sandboxOnNotFound: false), call: call)
        guard lookup.isValid else {
            throw CLIError(
                .notFound, "Apple says order ID \(orderId) is invalid (status \(lookup.status.map(String.init) ?? "missing"))",
                hint: "check it against the customer's receipt e-mail (e.g. MK5TTTVWJH); it is not a transactionId")
        }
        return lookup.transactions
    }
}
