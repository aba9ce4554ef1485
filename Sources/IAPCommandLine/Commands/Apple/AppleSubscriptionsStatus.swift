import AppStoreAPI
import AppStoreJWS

/// `iapctl apple subscriptions status TRANSACTION`: Get All Subscription Statuses.
enum AppleSubscriptionsStatus {
    /// `--status N`, repeatable.
    static let statusOption = Option<[Int]>(
        "status", valueName: "n", help: "Only subscriptions in this status (1–5).",
        allowedValues: OptionSpec.choices(AppleChoices.SubscriptionStatus.self))

    static let command = CommandSpec(
        name: "status",
        abstract: "Get All Subscription Statuses: the latest transaction and renewal info of each subscription.",
        discussion: "Without -o prints each subscription's latest signed transaction, one per line; -o shows "
            + "the status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked) and the decoded "
            + "transaction and renewal info.",
        examples: [CommandExample("iapctl apple subscriptions status 2000000123456789 -o table", "Now, decoded.")],
        options: [statusOption],
        arguments: [AppleCommands.transactionArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.subscriptionStatuses(
            invocation[AppleCommands.transactionArgument].text, statuses: invocation[statusOption])
        let answer = try session.send(call)
        let rows = try SubscriptionStatusItem.items(answer, call: call)
        if session.printsSignedItems {
            for row in rows { invocation.print(row.transaction) }
        } else {
            var records: [Record] = []
            for verified in try session.verified(rows, from: answer.server, what: "subscription status") {
                let row = verified.item
                let renewal = verified.renewal
                var r = Record()
                r.append("subscription_group_identifier", row.group)
                r.append("status", row.status)
                r.append("status_name", row.status.flatMap { SubscriptionStatusItem.statusNames[$0] })
                r.append("auto_renew", renewal?.renewalInfo?.autoRenewStatus.map { $0 == 1 })
                r.append("auto_renew_product_id", renewal?.renewalInfo?.autoRenewProductId)
                for (key, value) in AppleSession.transactionRecord(verified.transaction, structured: false).fields {
                    r.append(key, value)
                }
                if invocation.output.isStructured {
                    r.append("transaction", verified.transaction.payload ?? .null)
                    r.append("renewal", renewal?.payload ?? .null)
                }
                records.append(r)
            }
            invocation.emit(
                records,
                columns: [
                    Column("original_transaction_id", title: "ORIGINAL"), Column("product_id", title: "PRODUCT"),
                    Column("status_name", title: "STATUS"), Column("expires_date", title: "EXPIRES"),
                    Column("auto_renew", title: "AUTO_RENEW"), Column("transaction_id", title: "LATEST"),
                    Column("environment", title: "ENV"),
                ])
        }
        invocation.note("\(rows.count) subscription(s) from \(answer.server.rawValue)")
        return rows.isEmpty ? .notFound : .success
    }
}
