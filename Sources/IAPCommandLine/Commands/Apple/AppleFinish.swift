import AppStoreAPI
import IAPOperations

/// `iapctl apple finish-transaction`: Apple's Finish Transaction, an audited write like the others.
enum AppleFinish {
    /// `TRANSACTION`.
    static let transactionArgument = Argument<AppleTransactionId>(
        "transaction", help: "The transactionId of the purchase delivered.")

    static let command = CommandSpec(
        name: "finish-transaction",
        abstract: "Finish Transaction: tell the App Store your server delivered a purchase — audited.",
        discussion: "For apps whose server, not the app, grants what was bought: call it once the content or service "
            + "is delivered. An app that calls StoreKit's finish() does not need it.",
        examples: [
            CommandExample(
                "iapctl apple finish-transaction 2000000123456789 --reason 'delivered by the web shop' --dry-run",
                "Show the exact request without sending it.")
        ],
        options: AppleWrites.writeOptions,
        arguments: [transactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let transaction = invocation[transactionArgument].text
        let write = AppleWrite(
            call: Endpoint.finishTransaction(transaction), entity: .order, key: transaction,
            command: "apple finish-transaction")
        return try AppleWrites.send(write, invocation) { _ in
            invocation.note("Apple finished transaction \(transaction)")
            return .success
        }
    }
}
