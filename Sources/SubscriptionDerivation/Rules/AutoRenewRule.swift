import IAPFoundation
import SubscriptionModel

/// Auto-renew: the newest renewal info that gives an `autoRenewStatus`, or the newest
/// DID_CHANGE_RENEWAL_STATUS notification (AUTO_RENEW_ENABLED/DISABLED); on by default.
///
/// - Selects the maximum by (signedDate, source's authority — a toggle below any renewal info —,
///   the value), then by the reason's words (never by arrival order).
/// - Its bound: the newest renewal info giving a status, or the newest toggle signed at or after
///   it. Keeps the renewal infos signed at or after the newest renewal info giving a status, and
///   the notifications signed at or after the bound.
enum AutoRenewRule: DerivationRule {
    static var reads: [any DerivationRule.Type] { [CurrentPeriodRule.self] }

    static func select(_ reading: inout FactReading) -> (on: Bool, reason: FieldReason) {
        enum Said {
            /// A renewal info with its autoRenewStatus.
            case renewal(Versioned<RenewalFacts>, Int)
            /// A DID_CHANGE_RENEWAL_STATUS notification.
            case note(Versioned<NotificationFact>)
        }
        func reason(_ said: Said) -> FieldReason {
            switch said {
            case .renewal(let r, let on):
                return FieldReason(
                    field: "auto_renew", value: on == 1 ? "true" : "false", fact: "renewal info autoRenewStatus \(on)",
                    signedDate: r.signedDate, source: r.source)
            case .note(let note):
                let on = note.value.subtype == .known(.autoRenewEnabled)
                return FieldReason(
                    field: "auto_renew", value: on ? "true" : "false", fact: note.value.name, signedDate: note.signedDate,
                    source: note.source)
            }
        }
        // Renewal infos and toggles signed before the newest of either cannot decide (not decoded).
        let autoRenewBound = bounds(&reading).bound
        var sources: [(Int64, Int, Bool, Said)] = []
        for r in reading.renewals.versions(signedSince: autoRenewBound) {
            if let on = r.value.autoRenewStatus {
                sources.append((r.signedDate, r.source.authority, on == 1, .renewal(r, on)))
            }
        }
        for note in reading.notes.versions(signedSince: autoRenewBound) {
            guard let on = toggled(note) else { continue }
            sources.append((note.signedDate, -1, on, .note(note)))
        }
        let pick = sources.max { a, b in
            if (a.0, a.1, a.2 ? 1 : 0) != (b.0, b.1, b.2 ? 1 : 0) { return (a.0, a.1, a.2 ? 1 : 0) < (b.0, b.1, b.2 ? 1 : 0) }
            return reason(a.3).fact < reason(b.3).fact
        }
        return (
            pick?.2 ?? true,
            pick.map { reason($0.3) }
                ?? FieldReason(field: "auto_renew", value: "true", fact: "no renewal info yet: on by default", signedDate: nil, source: nil)
        )
    }

    /// What a DID_CHANGE_RENEWAL_STATUS notification says of auto-renew, if anything.
    static func toggled(_ note: Versioned<NotificationFact>) -> Bool? {
        guard note.value.notificationType == .known(.didChangeRenewalStatus) else { return nil }
        switch note.value.subtype {
        case .known(.autoRenewEnabled)?: return true
        case .known(.autoRenewDisabled)?: return false
        default: return nil
        }
    }

    /// The newest renewal info giving a status, and the rule's bound (that, or the newest toggle after it).
    static func bounds(_ reading: inout FactReading) -> (newestRenewalInfo: Int64?, bound: Int64?) {
        let newestRenewalInfo = reading.renewals.newestSignedDate { $0.value.autoRenewStatus != nil }
        let bound = [newestRenewalInfo, reading.notes.newestSignedDate(notBefore: newestRenewalInfo) { toggled($0) != nil }]
            .compactMap { $0 }.max()
        return (newestRenewalInfo, bound)
    }

    static func kept(_ reading: inout FactReading, derived: Derived) -> KeptFacts {
        let (newestRenewalInfo, bound) = bounds(&reading)
        return KeptFacts(notificationsSince: bound, renewalsSince: newestRenewalInfo)
    }

    static func selection(_ derived: Derived) -> FieldReason? { derived.contract?.reason("auto_renew") }
}
