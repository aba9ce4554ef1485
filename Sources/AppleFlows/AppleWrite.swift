import AppStoreAPI
import ClientSubmissions
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// A change at Apple (`apple extend`, `consumption`, `set-app-account-token`): the exact request, the
/// entity it concerns, and recording Apple's answer — or its refusal — in the audit trail.
public struct AppleWrite: Sendable {
    public var call: APICall
    public var entity: EntityKind
    public var key: String
    /// The command the audit row names (`apple extend`, …).
    public var command: String
    /// It names a transaction: with `--environment auto` Sandbox is asked when Production does not
    /// know the id. Otherwise it goes to Production (or Sandbox with `--environment Sandbox`).
    public var byTransaction: Bool

    public init(call: APICall, entity: EntityKind, key: String, command: String, byTransaction: Bool = true) {
        self.call = call
        self.entity = entity
        self.key = key
        self.command = command
        self.byTransaction = byTransaction
    }

    /// Extend a Subscription Renewal Date; `requestIdentifier` nil: a new one (``RequestIdentifier/random()``),
    /// so two extensions asked for at different times are two extensions; the client's retries of this
    /// request keep it, and a caller repeats one on purpose by passing it.
    public static func extend(
        original: String, days: Int64, reasonCode: Int64, requestIdentifier: String?
    ) -> AppleWrite {
        let requestId = requestIdentifier ?? RequestIdentifier.random()
        return AppleWrite(
            call: Endpoint.extend(original: original, days: days, reasonCode: reasonCode, requestIdentifier: requestId),
            entity: .contract, key: original, command: "apple extend")
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers of `product`; `requestIdentifier` as
    /// ``extend(original:days:reasonCode:requestIdentifier:)``.
    public static func massExtend(
        product: String, days: Int64, reasonCode: Int64, storefronts: [String], requestIdentifier: String?
    ) -> AppleWrite {
        let requestId = requestIdentifier ?? RequestIdentifier.random()
        return AppleWrite(
            call: Endpoint.massExtend(
                productId: product, days: days, reasonCode: reasonCode, requestIdentifier: requestId,
                storefronts: storefronts),
            entity: .contract, key: "product:\(product)", command: "apple extend", byTransaction: false)
    }

    /// Send Consumption Information (v2) for `transaction`; `customerConsented` is in the body only
    /// when true (Apple refuses any other value: the operator asserts it). `command`: the audit row's.
    public static func consumption(
        transaction: String, customerConsented: Bool = true, sampleContentProvided: Bool, deliveryStatus: String,
        consumptionPercentage: Int64?, refundPreference: String?, command: String = "apple consumption"
    ) -> AppleWrite {
        var body: [(key: String, value: JSONValue)] = customerConsented ? [("customerConsented", .bool(true))] : []
        body += [
            ("sampleContentProvided", .bool(sampleContentProvided)),
            ("deliveryStatus", .string(deliveryStatus)),
        ]
        if let consumptionPercentage { body.append(("consumptionPercentage", .int(consumptionPercentage))) }
        if let refundPreference { body.append(("refundPreference", .string(refundPreference))) }
        return AppleWrite(
            call: Endpoint.consumption(transaction, body: .object(body)), entity: .order, key: transaction,
            command: command)
    }

    /// Set the appAccountToken of `original`'s purchase.
    public static func setAppAccountToken(original: String, token: String) -> AppleWrite {
        AppleWrite(
            call: Endpoint.setAppAccountToken(original: original, token: token.lowercased()), entity: .contract,
            key: original, command: "apple set-app-account-token")
    }

    /// The `requestIdentifier` of its body (extensions), to repeat this very write on purpose.
    public var requestIdentifier: String? { call.body?["requestIdentifier"]?.stringValue }

    /// The server it goes to when it names no transaction: Production, or Sandbox with `--environment Sandbox`.
    public static func server(for environment: APIEnvironment) -> APIServer { environment.singleServer }

    /// Sends it. Apple's refusal is returned, not thrown (it is recorded too); `sandboxTried`: whether
    /// Sandbox was (or may have been) asked. A write Apple refused as unknown in Production changed
    /// nothing there: asking Sandbox then is safe.
    public func send(_ api: AppStoreServerAPI, _ environment: APIEnvironment) -> (
        result: Result<APIAnswer, AppStoreAPIError>, sandboxTried: Bool
    ) {
        do {
            return (
                .success(byTransaction ? try api.send(call, environment) : try api.send(call, to: Self.server(for: environment))), false
            )
        } catch {
            return (.failure(error), environment.mayHaveAskedSandbox(followsEnvironment: byTransaction))
        }
    }

    /// What ``perform(_:_:store:actor:reason:ticket:explain:)`` did: the audit row and Apple's answer
    /// or refusal.
    public struct Outcome: Sendable {
        public var auditId: Int64
        public var result: Result<APIAnswer, AppStoreAPIError>
    }

    /// Sends it and records Apple's answer — or its refusal — in the audit trail (the store must be
    /// open first: nothing is sent that cannot be recorded; nothing is recorded when nothing can be
    /// sent, as without libcurl). `explain` rewords a refusal before it is returned (given whether
    /// Sandbox was asked); the audit row keeps Apple's own code and message.
    public func perform(
        _ api: AppStoreServerAPI, _ environment: APIEnvironment, store: any Store, actor: String, reason: String?,
        ticket: String?, explain: (AppStoreAPIError, _ sandboxTried: Bool) -> AppStoreAPIError = { error, _ in error }
    ) throws -> Outcome {
        try api.prepare()
        let sent = send(api, environment)
        let result = sent.result.mapError { explain($0, sent.sandboxTried) }
        let auditId = try record(result, environment: environment, in: store, actor: actor, reason: reason, ticket: ticket)
        return Outcome(auditId: auditId, result: result)
    }

    /// The audit row's `after`: the request as sent and Apple's answer or refusal. `environment`: the
    /// `--environment` asked, named when no server answered.
    public func auditAfter(_ result: Result<APIAnswer, AppStoreAPIError>, environment: APIEnvironment) -> String {
        let answered = (try? result.get().server.rawValue) ?? environment.rawValue
        let request = JSONValue.object([
            ("method", .string(call.method)), ("path", .string(call.target)), ("environment", .string(answered)),
            ("body", call.body ?? .null),
        ])
        let response: JSONValue
        switch result {
        case .success(let answer):
            response = .object([("status", .int(Int64(answer.status))), ("body", answer.json ?? .null)])
        case .failure(let error):
            response = .object([
                ("status", error.httpStatus.map { .int(Int64($0)) } ?? .null),
                ("errorCode", error.appleCode.map(JSONValue.int) ?? .null),
                ("errorMessage", .string(error.appleMessage ?? error.message)),
            ])
        }
        return JSONValue.object([("apple_request", request), ("apple_response", response)]).serialized()
    }

    /// Records `result` in the audit trail; returns the audit row's id.
    public func record(
        _ result: Result<APIAnswer, AppStoreAPIError>, environment: APIEnvironment, in store: any Store, actor: String,
        reason: String?, ticket: String?, at: Int64 = Timestamp.now()
    ) throws -> Int64 {
        let after = auditAfter(result, environment: environment)
        return try store.write { session in
            try session.appendAudit(
                AuditEntry(
                    at: at, actor: actor, command: command, reason: reason, ticket: ticket, entity: entity, key: key,
                    before: nil, after: after))
        }
    }
}
