import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the engine keeps with a subscription's contract (`member_contracts.snapshot`): the rules'
/// own state, so that an event that only *adds* facts is decided from the facts that can still
/// decide the rows plus its own, not from the whole history (the 120th renewal costs what the 10th
/// does).
///
/// The kept facts are the union of what every rule of ``Derivation`` keeps (``DerivationRule``:
/// each rule is a maximum over candidates and names every fact it could still select). What the
/// facts left out ("pruned") still contribute is kept as scalars: the newest signed date for
/// `lastEventDate` and for the `stale` verdict's detail, the tokens of the pruned transactions (an
/// order those name must stay theirs) and the greatest sort key among them (a new period sorting
/// before it is not a pure addition). Only facts the snapshot ``admits(_:of:)`` are decided from
/// it; an event with any other fact is decided from every fact, and a new snapshot is stored.
package struct SubscriptionSnapshot: Equatable {
    /// The text's first line: a snapshot of another format is ignored (every fact is read, and a new one stored).
    static let format = "iapctl-snapshot 1"

    /// Every kept fact is signed at or after it: the one bound the store reads facts from.
    package var readFloor: Int64
    /// The facts the rules keep.
    var kept: KeptFacts
    /// The newest signed date of any readable fact that is not a receipt entry (`lastEventDate`).
    package var newestEventDate: Int64?
    /// The newest signed date of any stored fact (the `stale` verdict's detail).
    package var newestStoredDate: Int64?
    /// The appAccountTokens of the pruned transactions.
    package var prunedTokens: Set<String>
    /// The greatest (purchaseDate, transactionId) of the pruned transactions (the orders' sort key).
    var prunedLast: SortKey?

    /// The kept transactions (each with every version).
    package var transactions: Set<String> { kept.transactions }

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
    package func keeps(_ fact: Fact) -> Bool { kept.keeps(fact) }

    /// The snapshot of `facts` (every fact of the subscription, or a snapshot's kept facts plus
    /// pure additions) as `derived` (their derivation, its `newestSignedDate` already the whole
    /// history's) decides them. `carried`: the snapshot the facts were read by (its pruned
    /// transactions stay pruned); `newestStoredDate`: of every stored fact. Nil when no snapshot
    /// can stand for the history (no contract, no period that is not upgraded, a current period
    /// known only from receipts): every event then reads every fact.
    package static func make(
        facts: FactSet, derived: Derived, carried: SubscriptionSnapshot?, newestStoredDate: Int64?
    ) -> SubscriptionSnapshot? {
        guard let contract = derived.contract, !contract.statusFromReceipts else { return nil }
        let currentId = contract.current.transactionId
        guard
            let current = derived.orders.first(where: {
                $0.transaction.transactionId == currentId && $0.transaction.isAutoRenewable && $0.transaction.isUpgraded != true
            }), !current.onlyFromReceipts
        else { return nil }
        var kept = Derivation.kept(facts, derived: derived)
        if let since = kept.notificationsSince { kept.notificationsAt = kept.notificationsAt.filter { $0 < since } }
        var prunedTokens = carried?.prunedTokens ?? []
        var prunedLast = carried?.prunedLast
        for order in derived.orders where !kept.transactions.contains(order.transaction.transactionId) {
            if let token = order.transaction.appAccountToken, !token.isEmpty { prunedTokens.insert(token) }
            let key = SortKey(order.transaction)
            if prunedLast.map({ $0 < key }) ?? true { prunedLast = key }
        }
        let transactionDates = kept.transactions.flatMap { facts.transactions[$0]?.map(\.signedDate) ?? [] }
        let floor =
            (transactionDates + [kept.notificationsSince, kept.renewalsSince].compactMap { $0 } + Array(kept.notificationsAt)).min()
        guard let floor else { return nil }
        return SubscriptionSnapshot(
            readFloor: floor, kept: kept, newestEventDate: contract.newestSignedDate, newestStoredDate: newestStoredDate,
            prunedTokens: prunedTokens, prunedLast: prunedLast)
    }

    // MARK: what it can decide

    /// Whether a fact can be decided from the kept facts: one whose only effect is to add a
    /// candidate to the rules (the additions ``DerivationRule``'s contract is about): a version of a
    /// transaction (not revoked, not upgraded, not a receipt entry, auto-renewable; a kept one, or
    /// one sorting after every pruned period), a renewal info, or a notification whose meaning does
    /// not depend on the current period.
    package func admits(_ fact: Fact, of originalId: String) -> Bool {
        guard fact.originalTransactionId == originalId else { return false }
        switch fact.kind {
        case .transaction:
            guard let tx = try? FactBody.transaction(fact.body, key: fact.key) else { return false }
            return tx.revocationDate == nil && tx.isUpgraded != true && !tx.isFromReceipt && tx.isAutoRenewable
                && (transactions.contains(fact.key) || prunedLast.map { $0 < SortKey(tx) } ?? true)
        case .renewal:
            return true
        case .notification:
            guard let note = try? FactBody.notification(fact.body, key: fact.key) else { return false }
            switch note.notificationType {
            case .known(.refund)?, .known(.revoke)?, .known(.refundReversed)?: return false
            default: return true
            }
        }
    }

    /// Whether a new version of a kept transaction leaves a stored version's period as it was: the
    /// same dates and token, neither revoked nor upgraded nor a receipt entry.
    package static func isSamePeriod(_ stored: TransactionFacts, _ new: TransactionFacts) -> Bool {
        stored.revocationDate == nil && stored.isUpgraded != true && !stored.isFromReceipt
            && stored.purchaseDate == new.purchaseDate && stored.expiresDate == new.expiresDate
            && stored.appAccountToken == new.appAccountToken && stored.productId == new.productId
    }

    // MARK: text

    /// One field a line, lists separated by U+001F; nil when a value holds either separator.
    package var text: String? {
        let lists = [kept.transactions.sorted(), prunedTokens.sorted()]
        guard !lists.joined().contains(where: { $0.contains("\n") || $0.contains("\u{1F}") }),
            !(prunedLast?.transactionId.contains { $0 == "\n" || $0 == "\u{1F}" } ?? false)
        else { return nil }
        func int(_ value: Int64?) -> String { value.map { String($0) } ?? "" }
        return [
            Self.format, String(readFloor), lists[0].joined(separator: "\u{1F}"), int(kept.notificationsSince),
            kept.notificationsAt.sorted().map { String($0) }.joined(separator: "\u{1F}"), int(kept.renewalsSince), int(newestEventDate),
            int(newestStoredDate), lists[1].joined(separator: "\u{1F}"),
            prunedLast.map { "\($0.purchaseDate)\u{1F}\($0.transactionId)" } ?? "",
        ].joined(separator: "\n")
    }

    /// The snapshot a stored text holds; nil for another format or anything unreadable.
    package init?(text: String) {
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
            readFloor: floor,
            kept: KeptFacts(
                transactions: Set(list(lines[2])), notificationsSince: notificationBound, notificationsAt: Set(notices),
                renewalsSince: renewalBound),
            newestEventDate: newestEvent, newestStoredDate: newestStored, prunedTokens: Set(list(lines[8])), prunedLast: last)
    }

    init(
        readFloor: Int64, kept: KeptFacts, newestEventDate: Int64?, newestStoredDate: Int64?, prunedTokens: Set<String>,
        prunedLast: SortKey?
    ) {
        self.readFloor = readFloor
        self.kept = kept
        self.newestEventDate = newestEventDate
        self.newestStoredDate = newestStoredDate
        self.prunedTokens = prunedTokens
        self.prunedLast = prunedLast
    }
}
