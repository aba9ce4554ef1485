import AppStoreAPI
import AppStoreJWS

/// `iapctl apple notifications …`: Get Notification History (and filling the gap it shows), test
/// notifications.
enum AppleNotifications {
    static let group = CommandSpec(
        name: "notifications",
        abstract: "Notification history (what Apple sent and whether it arrived), keeping up with it, and test notifications.",
        subcommands: [
            AppleNotificationsHistory.command, AppleNotificationSync.command, AppleNotificationsTest.command,
            AppleNotificationsTestStatus.command,
        ])

    /// The server a non-transaction endpoint asks: auto means Production.
    static func server(_ session: AppleSession) -> APIServer { session.environment.singleServer }

    static let columns: [Column] = [
        Column("notification_uuid", title: "NOTIFICATION"), Column("notification_type", title: "TYPE"),
        Column("subtype", title: "SUBTYPE"), Column("signed_date", title: "SIGNED"),
        Column("transaction_id", title: "TRANSACTION"), Column("attempts", title: "ATTEMPTS"),
        Column("last_attempt_result", title: "LAST_RESULT"),
    ]

    static func record(_ item: GapReport.Item, _ report: VerificationReport, structured: Bool) -> Record {
        var r = Record()
        let notification = report.notification
        r.append("notification_uuid", notification?.notificationUUID)
        r.append("notification_type", notification?.notificationType?.rawValue)
        r.append("subtype", notification?.subtype?.rawValue)
        r.append("signed_date", notification?.signedDate)
        let transaction = report.nestedTransaction
        r.append("transaction_id", transaction?.transactionId)
        r.append("original_transaction_id", transaction?.originalTransactionId)
        r.append("attempts", item.attempts.count)
        r.append("last_attempt_result", item.attempts.last?.result)
        r.append("last_attempt_date", item.attempts.last?.date)
        if structured {
            r.append("send_attempts", GapReport.sendAttempts(item.attempts))
            r.append("payload", report.payload ?? .null)
        }
        return r
    }

}

extension NotificationHistoryQuery.Refusal: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .startNotBeforeEnd: .usage("--since must be before --until")
        case .startBeyondRetention:
            .usage("--since is more than 180 days ago", hint: "Apple keeps notification history for 180 days")
        case .typeAndTransaction:
            .usage("--type and --transaction exclude each other (Apple filters by one or the other)")
        case .subtypeWithoutType: .usage("--subtype goes with --type")
        }
    }
}
