import AppStoreAPI
import AppStoreJWS

/// `iapctl apple notifications test-status TOKEN`: Get Test Notification Status.
enum AppleNotificationsTestStatus {
    /// `test-status TOKEN`.
    static let tokenArgument = Argument<String>("token", help: "The testNotificationToken 'notifications test' printed.")

    static let command = CommandSpec(
        name: "test-status",
        abstract: "Get Test Notification Status: the TEST notification and Apple's attempts to deliver it.",
        examples: [
            CommandExample(
                "iapctl apple notifications test-status ce3af791-365e-4c60-841b-1674b43c1609 -o table",
                "Whether it arrived.")
        ],
        arguments: [tokenArgument],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.testNotificationStatus(invocation[tokenArgument])
        let answer = try session.explaining { () throws(AppStoreAPIError) in
            try session.api.send(call, to: AppleNotifications.server(session))
        }
        _ = try AppStoreServerAPI.requiredString(answer, "signedPayload", call: call)
        let items = try GapReport.entries(
            in: .object([("notificationHistory", .array([answer.json ?? .null]))]), name: call.path)
        if session.printsSignedItems {
            invocation.print(items[0].jws)
        } else {
            let reports = try session.verified([items[0].jws], as: .notification, from: answer.server, what: "test notification")
            invocation.emit(
                [AppleNotifications.record(items[0], reports[0], structured: invocation.output.isStructured)],
                columns: AppleNotifications.columns)
        }
        let delivered = TestNotification.delivered(lastAttemptResult: items[0].attempts.last?.result)
        invocation.note(delivered ? "delivered" : "not delivered (last attempt: \(items[0].attempts.last?.result ?? "none yet"))")
        return delivered ? .success : .failure
    }
}
