import SubscriptionEngine
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The command line's side of ``RefundClaims``: who claims, and sending with `AppleSession`.
extension RefundClaims {
    /// Who takes a claim: the actor and this process, so a claim left by a dead run can be told apart.
    static func claimant(_ invocation: Invocation) -> String {
        var host = [CChar](repeating: 0, count: 256)
        let name =
            gethostname(&host, host.count) == 0
            ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return "\(invocation.actor) (pid \(getpid()) on \(name))"
    }

    static func send(
        _ write: AppleWrite, _ claim: RefundAnswerClaim, apple: AppleSession, store: any Store, actor: String,
        reason: String?, ticket: String?
    ) throws -> Sent {
        try send(
            write, claim, api: apple.api, environment: apple.environment, store: store, actor: actor, reason: reason,
            ticket: ticket, explain: apple.explained)
    }
}
