import AppStoreAPI
import AppStoreJWS
import IAPOperations

/// `iapctl apple set-app-account-token ORIGINAL`: Set App Account Token — audited (``AppleWrites``).
enum AppleSetAppAccountToken {
    /// `set-app-account-token ORIGINAL`.
    static let originalArgument = Argument<String>("original", help: "The originalTransactionId.")

    /// `set-app-account-token --token UUID`.
    static let tokenOption = Option<AppAccountToken>("token", valueName: "uuid", help: "The new appAccountToken (a UUID).")

    static let command = CommandSpec(
        name: "set-app-account-token",
        abstract: "Set the appAccountToken (your order number) of a purchase made without one — audited.",
        examples: [
            CommandExample(
                "iapctl apple set-app-account-token 2000000100000001 --token 7389a31a-fb6d-4569-a2a6-db7d85d84813 --reason 'bought on the web flow'",
                "Attach the purchase to an order number.")
        ],
        options: [tokenOption] + AppleWrites.writeOptions,
        arguments: [originalArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let token = invocation[tokenOption].token
        let original = invocation[originalArgument]
        return try AppleWrites.send(AppleWrite.setAppAccountToken(original: original, token: token), invocation) { _ in
            invocation.note("Apple set the appAccountToken of \(original)")
            return .success
        }
    }
}
