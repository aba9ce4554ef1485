import AppStoreAPI
import AppStoreJWS
import IAPOperations

/// `iapctl apple extend-status PRODUCT REQUEST-ID`: Get Status of Subscription Renewal Date Extensions.
enum AppleExtendStatus {
    /// `extend-status PRODUCT REQUEST-ID`.
    static let massProductArgument = Argument<String>("product", help: "The product id of the mass extension.")
    static let massRequestIdArgument = Argument<String>(
        "request-id", help: "Its requestIdentifier ('apple extend --all-active' printed it).")

    static let command = CommandSpec(
        name: "extend-status",
        abstract: "Whether a mass renewal-date extension is complete, and how many succeeded and failed.",
        examples: [
            CommandExample(
                "iapctl apple extend-status com.example.pro.monthly 758883e8-151b-47b7-abd0-60c4d804c2f5 -o table",
                "The status of a mass extension.")
        ],
        arguments: [
            massProductArgument, massRequestIdArgument,
        ],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let session = try AppleSession(invocation)
        let call = Endpoint.massExtendStatus(
            productId: invocation[massProductArgument], requestIdentifier: invocation[massRequestIdArgument])
        let answer = try session.explaining { () throws(AppStoreAPIError) in
            try session.api.send(call, to: AppleNotifications.server(session))
        }
        var r = Record()
        for key in WriteAnswer.massExtensionStatusFields {
            r.append(key.snakeCased, answer.json?[key] ?? .null)
        }
        invocation.emit([r])
        return WriteAnswer.massExtensionComplete(answer.json) ? .success : .failure
    }
}
