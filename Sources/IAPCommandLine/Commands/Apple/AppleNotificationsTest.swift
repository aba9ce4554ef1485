import AppStoreAPI
import AppStoreJWS

/// `iapctl apple notifications test`: Request a Test Notification.
enum AppleNotificationsTest {
    static let command = CommandSpec(
        name: "test",
        abstract: "Request a Test Notification: Apple sends a TEST notification to your server URL.",
        discussion: "Prints the testNotificationToken; pass it to 'apple notifications test-status'.",
        examples: [CommandExample("iapctl apple notifications test --environment Sandbox", "Ping the Sandbox URL.")],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.requestTestNotification()
        let answer = try session.explaining { () throws(AppStoreAPIError) in
            try session.api.send(call, to: AppleNotifications.server(session))
        }
        let token = try AppStoreServerAPI.requiredString(answer, "testNotificationToken", call: call)
        if session.printsSignedItems || invocation.output == .table {
            invocation.print(token)
        } else {
            invocation.emit([["test_notification_token": .string(token), "environment": .string(answer.server.rawValue)]])
        }
        invocation.note(
            "Apple is sending a TEST notification (\(answer.server.rawValue)); check it with "
                + "'iapctl apple notifications test-status \(token)'")
        return .success
    }
}
