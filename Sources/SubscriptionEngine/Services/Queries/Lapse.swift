import IAPFoundation
import SubscriptionModel

/// A subscription whose paid period ended while its status still says `active` or `canceled`:
/// Apple signed no renewal, expiry, grace period or billing retry since (any of them would have
/// moved the expiry or the status), so the database cannot tell whether it renewed, expired or
/// failed to bill. A missed notification, found rather than guessed: `doctor` lists it with the
/// command that asks Apple, and `contracts list/show` and `entitled` say "lapsed" instead of a bare
/// `active`. A presentation derived from the row (or, for `entitled`, from the facts signed by
/// then), never a stored status.
public struct Lapse: Sendable, Equatable {
    /// When the last paid period ended (the contract's `expires_date`).
    public var paidUntil: Int64

    public init(paidUntil: Int64) {
        self.paidUntil = paidUntil
    }

    /// How long after its expiry `doctor` reports a lapsed contract by default: a day, so that a
    /// notification Apple is still retrying is not reported as missed.
    public static let reportedAfter: Int64 = 86_400_000

    /// "lapsed: paid until T, nothing from Apple since".
    public var text: String { "lapsed: paid until \(Timestamp.iso8601(paidUntil)), nothing from Apple since" }

    /// The lapse of a contract in `status`, paid until `expiresDate`, at `time`: nil unless the
    /// status is `active` or `canceled` (grace period and billing retry are Apple's own word on a
    /// failed renewal; expired and revoked are ended) and the paid period ended at or before `time`.
    public static func of(status: ContractStatus, expiresDate: Int64?, at time: Int64) -> Lapse? {
        guard status == .active || status == .canceled, let expires = expiresDate, expires <= time else { return nil }
        return Lapse(paidUntil: expires)
    }

    /// The lapse of a stored contract row at `time` (see ``of(status:expiresDate:at:)``).
    public static func of(_ contract: Contract, at time: Int64) -> Lapse? {
        of(status: contract.status, expiresDate: contract.expiresDate, at: time)
    }
}

extension EntitlementAsOf.Answer {
    /// Not entitled at T: the contract lapsed (status `lapsed`); `period` names the paid period that ended.
    static func lapsed(_ lapse: Lapse, contract: Contract, orders: [Order], period: String) -> Self {
        var answer = Self(
            entitled: false, contract: contract, orders: orders, status: "lapsed",
            reason: lapse.text + " (the last paid period \(period) ended; no renewal, expiry, grace or billing retry "
                + "signed by then)",
            covering: nil)
        answer.lapse = lapse
        return answer
    }
}
