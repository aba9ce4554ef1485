import AppStoreAPI
import AppStoreJWS

/// `iapctl apple refunds history TRANSACTION`: Get Refund History, all pages.
enum AppleRefundsHistory {
    static let command = CommandSpec(
        name: "history",
        abstract: "Get Refund History: every refunded transaction of the customer, all pages.",
        examples: [CommandExample("iapctl apple refunds history 2000000123456789 -o table", "Decoded.")],
        arguments: [AppleCommands.transactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        return try AppleCommands.walk(
            session, Endpoint.refundHistory(invocation[AppleCommands.transactionArgument].text), what: "refund history")
    }
}
