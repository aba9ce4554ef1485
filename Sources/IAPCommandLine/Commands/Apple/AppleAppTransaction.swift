import AppStoreAPI
import AppStoreJWS

/// `iapctl apple app-transaction TRANSACTION`: Get App Transaction Info.
enum AppleAppTransaction {
    static let command = CommandSpec(
        name: "app-transaction",
        abstract: "Get App Transaction Info: the customer's signed AppTransaction (their download of the app).",
        discussion: "Its appTransactionId is the same for one Apple Account and app across devices, redownloads "
            + "and refunds (one per family member with Family Sharing). Without -o prints the signed item; -o "
            + "shows it decoded after verification. Exit 3 when Apple has no app transaction for the customer.",
        examples: [
            CommandExample("iapctl apple app-transaction 2000000123456789 -o json", "The customer's AppTransaction, decoded.")
        ],
        arguments: [AppleCommands.transactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.appTransaction(invocation[AppleCommands.transactionArgument].text)
        let answer = try session.send(call)
        let jws = try AppStoreServerAPI.requiredString(answer, "signedAppTransactionInfo", call: call)
        if session.printsSignedItems {
            invocation.print(jws)
            return .success
        }
        let reports = try session.verified([jws], as: .appTransaction, from: answer.server, what: "app transaction")
        invocation.emit(
            reports.map { report in
                let app = report.appTransaction
                var r = Record()
                r.append("app_transaction_id", app?.appTransactionId)
                r.append("bundle_id", app?.bundleId)
                r.append("app_apple_id", app?.appAppleId)
                r.append("environment", app?.receiptType)
                r.append("original_purchase_date", app?.originalPurchaseDate)
                r.append("original_application_version", app?.originalApplicationVersion)
                r.append("original_platform", app?.originalPlatform)
                r.append("application_version", app?.applicationVersion)
                r.append("preorder_date", app?.preorderDate)
                if invocation.output.isStructured { r.append("payload", report.payload ?? .null) }
                return r
            },
            columns: [
                Column("app_transaction_id", title: "APP_TRANSACTION"), Column("bundle_id", title: "BUNDLE"),
                Column("original_purchase_date", title: "FIRST_DOWNLOAD"),
                Column("original_application_version", title: "FIRST_VERSION"),
                Column("original_platform", title: "PLATFORM"), Column("environment", title: "ENV"),
            ])
        return .success
    }
}
