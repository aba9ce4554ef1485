import AppStoreJWS
import SubscriptionDerivation
import SubscriptionEngine
import SubscriptionModel

/// Upgrading a database made before the engine kept facts: the facts are rebuilt from the
/// ledger's stored JWS (decoded only: each was verified when it was received) and every row is
/// re-derived from them, with audit rows.
public enum FactRebuild {
    /// What the rebuild did.
    public struct Summary {
        public var ledgerRows = 0
        public var factsAdded = 0
        public var subscriptions = 0
        public var changes: [Change] = []

        public var line: String {
            "rebuilt \(factsAdded) fact(s) from \(ledgerRows) ledger row(s); re-derived \(subscriptions) subscription(s): "
                + "\(changes.count) row change(s)"
        }
    }

    /// Whether migrating an existing database with `migrations` (their names) adds the engine's
    /// facts, so that the facts must be rebuilt from the ledger afterwards.
    public static func isNeeded(after migrations: [String]) -> Bool {
        migrations.contains { $0.contains("iap_facts") }
    }

    /// What a dry run of such a migration says the upgrade will also do.
    public static let plan =
        "then rebuild the engine's facts from the ledger's stored JWS and re-derive every order and contract from them "
        + "(changed rows get audit rows)"

    /// Rebuilds the facts from every ledger row that was not refused, then re-derives each
    /// subscription, in one write transaction of its own.
    public static func run(_ store: any Store, actor: String) throws -> Summary {
        try store.write { session in try run(in: session, actor: actor) }
    }

    /// The same inside the caller's write transaction (`db init`: the one that records the
    /// migration's version, so the version is recorded only with the rebuild done).
    public static func run(in session: any StoreSession, actor: String) throws -> Summary {
        let engine = SubscriptionEventEngine()
        let context = EngineContext(actor: actor, command: "db init")
        var summary = Summary()
        var originals = Set(try session.contracts(matching: ContractFilter()).map(\.contractId))
        for order in try session.orders(matching: OrderFilter()) { if let origin = order.originNo { originals.insert(origin) } }
        for entry in try session.unmatchedLedger(limit: nil) {
            if let original = entry.originalTransactionId { originals.insert(original) }
        }
        for original in originals.sorted() {
            let entries = try session.ledger(transactionIds: [], originalTransactionIds: [original], appAccountTokens: [])
            for entry in entries where entry.verdict != .rejected && entry.verdict != .conflict {
                guard let event = event(entry) else { continue }
                summary.ledgerRows += 1
                for fact in event.facts where try session.insertFact(fact) { summary.factsAdded += 1 }
            }
            let changes = try engine.rederive(
                originalTransactionId: original, in: session, context: context,
                reason: "re-derived from the signed facts rebuilt from the ledger (db upgrade)")
            if !(try session.facts(originalTransactionId: original).isEmpty) { summary.subscriptions += 1 }
            summary.changes += changes
        }
        return summary
    }

    /// The event a stored ledger row carried, decoded without verification; nil when unreadable.
    public static func event(_ entry: LedgerEntry) -> SubscriptionEvent? {
        // A subscription of Get All Subscription Statuses (`apple reconcile`): the item as Apple sent it.
        if entry.source == .appleAPI, let event = EventMapping.storedStatusEvent(entry.raw) { return event }
        guard let token = (try? WebhookBody.jwsTokens(in: entry.raw))?.first, let json = payload(token) else { return nil }
        if entry.source == .apple {
            guard let n = try? NotificationPayload(json: json) else { return nil }
            let tx = n.data?.signedTransactionInfo.flatMap(payload).flatMap { try? TransactionPayload(json: $0) }
                .flatMap(EventMapping.facts)
            let renewal = n.data?.signedRenewalInfo.flatMap(payload).flatMap { try? RenewalInfoPayload(json: $0) }
                .map(EventMapping.facts)
            return SubscriptionEvent(
                source: .apple, notificationUUID: n.notificationUUID, notificationType: n.notificationType,
                subtype: n.subtype,
                signedDate: n.signedDate, environment: n.data?.environment, bundleId: n.data?.bundleId, transaction: tx,
                renewal: renewal, raw: entry.raw, status: n.data?.status.map(Int.init))
        }
        guard let t = try? TransactionPayload(json: json), let tx = EventMapping.facts(t) else { return nil }
        return SubscriptionEvent(
            source: entry.source, signedDate: t.signedDate, environment: t.environment, bundleId: t.bundleId, transaction: tx,
            raw: entry.raw)
    }

    /// The decoded payload of a compact JWS (no verification).
    public static func payload(_ jws: String) -> JSONValue? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64.decodeURL(parts[1]) else { return nil }
        return try? JSONParser.parse(bytes)
    }
}
