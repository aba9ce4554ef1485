import SubscriptionEngine
import SubscriptionModel

/// The verdict word of an ``ItemReport`` (the verdicts iapctl-notify(1) lists): the engine's, restore's, `unknown`
/// for a subscription Apple does not know, or `not-applied` for a line of an aborted batch. The raw
/// value is the word printed and written in every output format.
public enum ItemVerdict: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    case applied, duplicate, stale, ignored, unmatched, rejected, conflict
    case restorable
    /// A restorable transaction `restore --apply` committed through the engine.
    case restored
    case ownedByOther = "owned-by-other"
    case transferred
    /// No order or contract matches (restore), or Apple does not know the subscription (reconcile).
    case unknown
    /// Every line of an aborted all-or-nothing batch (``AbortedBatch``).
    case notApplied = "not-applied"

    /// The engine's verdict.
    public init(_ verdict: Verdict) {
        switch verdict {
        case .applied: self = .applied
        case .duplicate: self = .duplicate
        case .stale: self = .stale
        case .ignored: self = .ignored
        case .unmatched: self = .unmatched
        case .rejected: self = .rejected
        case .conflict: self = .conflict
        }
    }

    /// Restore's verdict.
    public init(_ verdict: RestoreVerdict) {
        switch verdict {
        case .restorable: self = .restorable
        case .restored: self = .restored
        case .ownedByOther: self = .ownedByOther
        case .transferred: self = .transferred
        case .unknown: self = .unknown
        case .rejected: self = .rejected
        case .unmatched: self = .unmatched
        case .conflict: self = .conflict
        case .duplicate: self = .duplicate
        case .stale: self = .stale
        case .ignored: self = .ignored
        }
    }

    public var description: String { rawValue }
}
