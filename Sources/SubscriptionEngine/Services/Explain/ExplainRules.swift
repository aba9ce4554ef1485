import IAPFoundation
import SubscriptionDerivation
import SubscriptionModel

/// The engine's rules by name, for people: what an event of a type/subtype does to a contract.
///
/// `contracts explain` and `doctor` use these so their wording and expectations follow the
/// engine's own `Effect` table.
public struct EventRule: Sendable, Equatable {
    /// The rule's name (`purchase`, `renewal`, `auto-renew off`, …).
    public var name: String
    /// What the rule does when the event is the newest (`→ active`, `auto_renew off, → canceled`).
    public var transition: String
    /// The contract status the event leaves when it applies and nothing later overrides it; nil
    /// when it depends on more than the event (refunds of an older period, preference changes).
    public var resultingStatus: ContractStatus?
    /// Whether the event is subject to the ordering guard (state changes are; money facts and
    /// informational types are not).
    public var changesState: Bool

    /// An in-app entry of a StoreKit 1 app receipt (a client or restore submission of lower authority).
    public static let receiptSubmission = EventRule(
        name: "receipt submission", transition: "payment recorded; expiry may extend; state set by Apple kept",
        resultingStatus: nil, changesState: false)

    private init(name: String, transition: String, resultingStatus: ContractStatus?, changesState: Bool) {
        self.name = name
        self.transition = transition
        self.resultingStatus = resultingStatus
        self.changesState = changesState
    }

    /// The rule for a notification type/subtype; nil type means a client or restore submission.
    public init(type: NotificationType?, subtype: NotificationSubtype?) {
        let effect = Effect(type: type, subtype: subtype)
        changesState = effect.changesState
        switch effect {
        case .purchase:
            (name, transition, resultingStatus) = ("purchase", "order paid; contract created or → active", .active)
        case .renewal:
            (name, transition, resultingStatus) = ("renewal", "new paid period; expiry extended; → active", .active)
        case .submission:
            (name, transition, resultingStatus) = ("submission", "payment recorded; → active", .active)
        case .autoRenew(true):
            (name, transition, resultingStatus) = (
                "auto-renew on", "auto_renew on; status stays what Apple's data.status says (canceled → active)", nil
            )
        case .autoRenew(false):
            (name, transition, resultingStatus) = ("auto-renew off", "auto_renew off; → canceled (entitled until expiry)", .canceled)
        case .failToRenew(grace: true):
            (name, transition, resultingStatus) = ("fail to renew (grace)", "→ grace_period (still entitled)", .gracePeriod)
        case .failToRenew(grace: false):
            (name, transition, resultingStatus) = ("fail to renew", "→ billing_retry (not entitled)", .billingRetry)
        case .expired where type == .known(.gracePeriodExpired):
            (name, transition, resultingStatus) = (
                "grace period expired", "→ billing_retry (Apple keeps retrying; not entitled)", .billingRetry
            )
        case .expired:
            (name, transition, resultingStatus) = ("expired", "→ expired", .expired)
        case .refund:
            (name, transition, resultingStatus) = ("refund", "order refunded; → revoked if it is the current period", nil)
        case .revoke:
            (name, transition, resultingStatus) = ("revoke", "order revoked; → revoked if it is the current period", nil)
        case .refundReversed:
            (name, transition, resultingStatus) = ("refund reversed", "order paid again; revoked → active if current", nil)
        case .renewalPreference:
            (name, transition, resultingStatus) = ("renewal preference", "next product changes; status kept", nil)
        case .expiryUpdate:
            (name, transition, resultingStatus) = ("expiry update", "expiry may move; status kept", nil)
        case .oneTimeCharge:
            (name, transition, resultingStatus) = ("one-time charge", "order paid; no contract", nil)
        case .informational:
            (name, transition, resultingStatus) = ("informational", "recorded; nothing to change", nil)
        }
    }
}

extension LedgerEntry {
    /// The raw text of the second and later entries of one StoreKit 1 app receipt: the receipt is
    /// kept once per submission, in the row of its first applied entry, and the others point there.
    public static let receiptReferencePrefix = "app receipt of ledger #"

    /// Whether this ledger item came from an app receipt (its raw text is a base64 PKCS#7 or a
    /// reference to one, never a JWS, which starts `eyJ` and holds dots).
    public var isReceiptSubmission: Bool {
        raw.hasPrefix(Self.receiptReferencePrefix) || raw.hasPrefix("MI") && !raw.contains(".")
    }
}

extension LedgerEntry {
    /// The stored `notificationType`, typed.
    public var appleType: NotificationType? { notificationType.map(NotificationType.init(rawValue:)) }
    /// The stored `subtype`, typed.
    public var appleSubtype: NotificationSubtype? { subtype.map(NotificationSubtype.init(rawValue:)) }
}

extension EventRule {
    /// The rule that explains a ledger item (receipt items never change a contract's state).
    public init(for entry: LedgerEntry) {
        self = entry.isReceiptSubmission ? .receiptSubmission : EventRule(type: entry.appleType, subtype: entry.appleSubtype)
    }

    /// The ordering rule (the newest signed state change decides) applied to the ledger: the applied
    /// state change that made `event` stale — signed later, received no later — or nil when the
    /// ledger does not show one (the contract's last state change then came from elsewhere).
    public static func newerStateChange(than event: LedgerEntry, in events: [LedgerEntry]) -> LedgerEntry? {
        events.filter {
            $0.id != event.id && $0.verdict == .applied && ($0.signedDate ?? 0) > (event.signedDate ?? 0)
                && EventRule(for: $0).changesState && $0.receivedAt <= event.receivedAt
        }.max { ($0.signedDate ?? 0) < ($1.signedDate ?? 0) }
    }
}

extension EventRule {
    /// What the ledger says of a notification that carries no transaction (nothing to change).
    public static func withoutTransaction(_ type: NotificationType?) -> String {
        switch type {
        case .known(.test)?:
            return "TEST notification: accepted, nothing to change"
        case .known(.rescindConsent)?:
            return "RESCIND_CONSENT: consent for this app's user was withdrawn (a parent or guardian); "
                + "no row changed: end the user's sessions and delete the data kept under that consent "
                + "(listed by `iapctl refunds list --consent`)"
        default:
            return "\(type?.rawValue ?? "submission") carries no transaction: recorded, nothing to change"
        }
    }
}

extension EventRule {
    /// What the ledger says of an informational notification that carries a transaction; a refund
    /// request says when Apple stops waiting and how to answer it.
    static func informational(_ event: SubscriptionEvent) -> String {
        guard event.notificationType == .known(.consumptionRequest), let tx = event.transaction?.transactionId else {
            return "\(event.notificationType?.rawValue ?? "event") needs no change (facts recorded)"
        }
        let deadline = (event.signedDate ?? 0) + RefundRequests.answerWindow
        return "CONSUMPTION_REQUEST: a refund request; Apple waits for the answer until \(Timestamp.iso8601(deadline)): "
            + "`iapctl refunds answer \(ShellWord.word(tx))` (facts recorded, no row changed)"
    }
}
