// The specification of `iapctl verify [--apply]`: signed transactions and receipts apps send.
// Handlers are the functions named by `handler:`; the tree is assembled in CommandTree.swift.
extension CommandTree {
    static let verify = CommandSpec(
        name: "verify",
        abstract: "Verify and decode any App Store JWS or StoreKit 1 app receipt; optionally apply a transaction.",
        discussion: """
            Detects what the JWS is (notification, transaction or renewal info), prints each \
            check it passed or failed and the decoded payload. With --apply, a transaction the \
            app sent is run through the subscription engine (the client verification path): \
            whichever of the app and Apple arrives second finds the work already done.

            A StoreKit 1 app receipt (base64 or DER, or a verifyReceipt body {"receipt-data": "…"}) \
            is verified offline: its PKCS#7 signature, the chain to Apple Inc. Root at the \
            receipt's creation date with Apple's OIDs, the bundle id and the receipt type. A \
            receipt proves what was paid when it was signed, and no more: it cannot show renewals \
            after that, refunds or revocations made later, or family sharing. With --apply each \
            in-app entry is a lower-authority client submission: it records payments and extends \
            expiry dates, but never revokes, expires or reopens a state Apple set; Apple's \
            notifications do that.
            """,
        examples: [
            CommandExample(
                "iapctl verify transaction.jws --bundle-id com.example.app --environment Sandbox",
                "Check a transaction and show its fields."),
            CommandExample(
                "iapctl verify --apply --bundle-id com.example.app --app-apple-id 1234567890 < tx.jws",
                "Record the app's purchase before Apple's notification arrives."),
            CommandExample(
                "iapctl verify receipt.b64 --bundle-id com.example.app --environment Sandbox",
                "Check a StoreKit 1 app receipt and list its in-app purchases."),
        ],
        options: [
            applyOption.with(
                help: "Run the transaction (or each in-app entry of a receipt) through the subscription engine."),
            dryRun,
        ] + trustOptions + receiptOptions,
        arguments: [inputFile],
        handler: VerifyCommand.run
    )
}
