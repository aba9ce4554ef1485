import AppStoreAPI
import AppStoreJWS

/// `iapctl apple transactions get TRANSACTION`: Get Transaction Info.
enum AppleTransactionsGet {
    static let command = CommandSpec(
        name: "get",
        abstract: "Get Transaction Info: one signed transaction.",
        examples: [CommandExample("iapctl apple transactions get 2000000123456789 -o json", "Decoded.")],
        arguments: [AppleCommands.transactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.transaction(invocation[AppleCommands.transactionArgument].text)
        let answer = try session.send(call)
        let jws = try AppStoreServerAPI.requiredString(answer, "signedTransactionInfo", call: call)
        try session.emitTransactions([jws], from: answer.server, what: "transaction")
        return .success
    }
}
