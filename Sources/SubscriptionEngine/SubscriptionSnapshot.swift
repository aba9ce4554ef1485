import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the engine keeps with a subscription's contract (`member_contracts.snapshot`) so that an
/// event that only *adds* facts reads the facts that can still decide the rows, not the whole
/// history (issue 25: the 120th renewal should cost what the 10th does).
///
/// Every rule of ``Derivation`` is a maximum over candidates. A fact is left out ("pruned") only when
/// a kept fact beats it under every rule whatever facts are added later:
/// - transactions: kept are the current period, every paid period with the greatest
///   `paymentEvidenceTime` (ties included), every revoked one and every one without an environment;
///   the others are settled periods (their order row no longer changes when facts are only added);
/// - notifications: those signed at or after the lower of the status bound (the newest payment, or
///   the newest statement after it) and the auto-renew bound, and every REFUND, REVOKE and
///   REFUND_REVERSED (their meaning depends on the current period);
/// - renewal infos: those signed at or after the lowest of the three renewal rules' bounds.
///
/// What the pruned facts still contribute is kept as scalars: the newest signed date for
/// `lastEventDate` and for the `stale` verdict's detail, the tokens of the pruned transactions (an
/// order those name must stay theirs) and the greatest sort key among them (a new period sorting
/// before it takes the full path). The fast path (``EngineRun``) is taken only for facts that are pure
/// additions; everything else derives from every fact and stores a new snapshot.
struct SubscriptionSnapshot: Equatable {
    /// The text's first line: a snapshot of another format is ignored (the full path then rewrites it).
    static let format = "iapctl-snapshot 1"

    /// Every kept fact is signed at or after it: the one bound the store reads facts from.
    var readFloor: Int64
    /// The kept transactions (each with every version).
    var transactions: Set<String>
    /// Notifications signed at or after it are kept (nil: none by date).
    var notificationBound: Int64?
    /// The signed dates of the kept REFUND, REVOKE and REFUND_REVERSED notifications below the bound.
    var refundNotices: Set<Int64>
    /// Renewal infos signed at or after it are kept (nil: none is readable).
    var renewalBound: Int64?
    /// The newest signed date of any readable fact that is not a receipt entry (`lastEventDate`).
    var newestEventDate: Int64?
    /// The newest signed date of any stored fact (the `stale` verdict's detail).
    var newestStoredDate: Int64?
    /// The appAccountTokens of the pruned transactions.
    var prunedTokens: Set<String>
    /// The greatest (purchaseDate, transactionId) of the pruned transactions (the orders' sort key).
    var prunedLast: SortKey?

    struct SortKey: Equatable, Comparable {
        var purchaseDate: Int64
        var transactionId: String

        init(_ tx: TransactionFacts) {
            purchaseDate = tx.purchaseDate ?? 0
            transactionId = tx.transactionId
        }

        init(purchaseDate: Int64, transactionId: String) {
            self.purchaseDate = purchaseDate
            self.transactionId = transactionId
        }

        static func < (a: SortKey, b: SortKey) -> Bool {
            (a.purchaseDate, a.transactionId) < (b.purchaseDate, b.transactionId)
        }
    }

    /// Whether a stored fact (of this subscription, signed at or after ``readFloor``) is kept.
    /// A notification or renewal info signed below the rules' bounds is harmless when read anyway
    /// (a kept one beats it), but a transaction is all its versions or none.
    func keeps(_ fact: Fact) -> Bool {
        switch fact.kind {
        case .transaction: return transactions.contains(fact.key)
        case .renewal: return renewalBound.map { fact.signedDate >= $0 } ?? false
        case .notification:
            return notificationBound.map { fact.signedDate >= $0 } == true || refundNotices.contains(fact.signedDate)
        }
    }

    /// The snapshot of `facts` (every fact of the subscription, or a snapshot's kept facts plus
    /// pure additions) as `derived` (their derivation, its `newestSignedDate` already the whole
    /// history's) decides them. `carried`: the snapshot the facts were read by (its pruned
    /// transactions stay pruned); `newestStoredDate`: of every stored fact. Nil when no snapshot
    /// can stand for the history (no contract, no period that is not upgraded, a current period
    /// known only from receipts): every event then takes the full path.
    static func make(
        facts: FactSet, derived: Derived, carried: SubscriptionSnapshot?, newestStoredDate: Int64?
    ) -> SubscriptionSnapshot? {
        guard let contract = derived.contract, !contract.statusFromReceipts else { return nil }
        let live = derived.orders.filter { $0.transaction.isAutoRenewable && $0.transaction.isUpgraded != true }
        let currentId = contract.current.transactionId
        guard let current = live.first(where: { $0.transaction.transactionId == currentId }), !current.onlyFromReceipts
        else { return nil }
        let payments = live.compactMap { period -> (Int64, String)? in
            guard !period.onlyFromReceipts, period.transaction.revocationDate == nil, period.transaction.purchaseDate != nil
            else { return nil }
            return (Derivation.paymentEvidenceTime(period), period.transaction.transactionId)
        }
        let newestPayment = payments.map(\.0).max()
        var kept: Set<String> = [currentId]
        for (time, id) in payments where time == newestPayment { kept.insert(id) }
        for order in derived.orders where order.transaction.revocationDate != nil || order.transaction.environment == nil {
            kept.insert(order.transaction.transactionId)
        }
        var prunedTokens = carried?.prunedTokens ?? []
        var prunedLast = carried?.prunedLast
        for order in derived.orders where !kept.contains(order.transaction.transactionId) {
            if let token = order.transaction.appAccountToken, !token.isEmpty { prunedTokens.insert(token) }
            let key = SortKey(order.transaction)
            if prunedLast.map({ $0 < key }) ?? true { prunedLast = key }
        }

        // The rules' bounds, read as the derivation reads them.
        var renewals = VersionReader(facts.storedRenewals)
        var notes = VersionReader(facts.storedNotifications)
        let tx = contract.current
        let saysStatus = { (note: Versioned<NotificationFact>) -> Bool in
            if let raw = note.value.status, Derivation.appleStatus(raw) != nil { return true }
            return Derivation.inferred(note.value, current: tx) != nil
        }
        let statusBound = [newestPayment, notes.newestSignedDate(notBefore: newestPayment, where: saysStatus)]
            .compactMap { $0 }.max()
        let newestRenewalInfo = renewals.newestSignedDate { $0.value.autoRenewStatus != nil }
        let autoRenewBound = [
            newestRenewalInfo,
            notes.newestSignedDate(notBefore: newestRenewalInfo) { note in
                note.value.notificationType == .known(.didChangeRenewalStatus)
                    && (note.value.subtype == .known(.autoRenewEnabled) || note.value.subtype == .known(.autoRenewDisabled))
            },
        ].compactMap { $0 }.max()
        let notificationBound = [statusBound, autoRenewBound].compactMap { $0 }.min()
        let renewalBound = [
            newestRenewalInfo, renewals.newestSignedDate { $0.value.autoRenewProductId != nil }, renewals.newestSignedDate(),
        ].compactMap { $0 }.min()
        var refundNotices = Set<Int64>()
        for note in notes.versions(signedSince: nil) where notificationBound.map({ note.signedDate < $0 }) ?? true {
            switch note.value.notificationType {
            case .known(.refund)?, .known(.revoke)?, .known(.refundReversed)?: refundNotices.insert(note.signedDate)
            default: break
            }
        }
        let transactionDates = kept.flatMap { facts.transactions[$0]?.map(\.signedDate) ?? [] }
        let floor = (transactionDates + [notificationBound, renewalBound].compactMap { $0 } + Array(refundNotices)).min()
        guard let floor else { return nil }
        return SubscriptionSnapshot(
            readFloor: floor, transactions: kept, notificationBound: notificationBound, refundNotices: refundNotices,
            renewalBound: renewalBound, newestEventDate: contract.newestSignedDate, newestStoredDate: newestStoredDate,
            prunedTokens: prunedTokens, prunedLast: prunedLast)
    }

    // MARK: text

    /// One field a line, lists separated by U+001F; nil when a value holds either separator.
    var text: String? {
        let lists = [transactions.sorted(), prunedTokens.sorted()]
        guard !lists.joined().contains(where: { $0.contains("\n") || $0.contains("\u{1F}") }),
            !(prunedLast?.transactionId.contains { $0 == "\n" || $0 == "\u{1F}" } ?? false)
        else { return nil }
        func int(_ value: Int64?) -> String { value.map { String($0) } ?? "" }
        return [
            Self.format, String(readFloor), lists[0].joined(separator: "\u{1F}"), int(notificationBound),
            refundNotices.sorted().map { String($0) }.joined(separator: "\u{1F}"), int(renewalBound), int(newestEventDate),
            int(newestStoredDate), lists[1].joined(separator: "\u{1F}"),
            prunedLast.map { "\($0.purchaseDate)\u{1F}\($0.transactionId)" } ?? "",
        ].joined(separator: "\n")
    }

    /// The snapshot a stored text holds; nil for another format or anything unreadable.
    init?(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 10, lines[0] == Self.format, let floor = Int64(lines[1]) else { return nil }
        func list(_ line: Substring) -> [String] { line.isEmpty ? [] : line.split(separator: "\u{1F}").map(String.init) }
        func int(_ line: Substring) -> Int64?? { line.isEmpty ? .some(nil) : Int64(line).map { .some($0) } }
        guard let notificationBound = int(lines[3]), let renewalBound = int(lines[5]), let newestEvent = int(lines[6]),
            let newestStored = int(lines[7])
        else { return nil }
        let notices = list(lines[4]).compactMap { Int64($0) }
        guard notices.count == list(lines[4]).count else { return nil }
        var last: SortKey?
        if !lines[9].isEmpty {
            let parts = list(lines[9])
            guard parts.count == 2, let date = Int64(parts[0]) else { return nil }
            last = SortKey(purchaseDate: date, transactionId: parts[1])
        }
        self.init(
            readFloor: floor, transactions: Set(list(lines[2])), notificationBound: notificationBound,
            refundNotices: Set(notices), renewalBound: renewalBound, newestEventDate: newestEvent,
            newestStoredDate: newestStored, prunedTokens: Set(list(lines[8])), prunedLast: last)
    }

    init(
        readFloor: Int64, transactions: Set<String>, notificationBound: Int64?, refundNotices: Set<Int64>, renewalBound: Int64?,
        newestEventDate: Int64?, newestStoredDate: Int64?, prunedTokens: Set<String>, prunedLast: SortKey?
    ) {
        self.readFloor = readFloor
        self.transactions = transactions
        self.notificationBound = notificationBound
        self.refundNotices = refundNotices
        self.renewalBound = renewalBound
        self.newestEventDate = newestEventDate
        self.newestStoredDate = newestStoredDate
        self.prunedTokens = prunedTokens
        self.prunedLast = prunedLast
    }
}
