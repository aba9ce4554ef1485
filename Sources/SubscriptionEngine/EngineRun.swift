#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The work of applying one event: decides, writes the rows, collects changes and audit rows.
struct EngineRun {
    let event: SubscriptionEvent
    let session: any StoreSession
    let context: EngineContext
    let now: Int64
    let newOrderNo: @Sendable () -> String
    let effect: Effect

    private(set) var changes: [Change] = []
    private var audits: [AuditEntry] = []
    /// Column values of each changed row before this event (nil for inserts), parallel to `changes`.
    private var firstColumns: [[(String, String?)]?] = []
    private var notes: [String] = []
    private var touchedOrders: [String] = []
    private var contractId: String?

    init(
        event: SubscriptionEvent, session: any StoreSession, context: EngineContext, now: Int64,
        newOrderNo: @escaping @Sendable () -> String
    ) {
        self.event = event
        self.session = session
        self.context = context
        self.now = now
        self.newOrderNo = newOrderNo
        self.effect = Effect(type: event.notificationType, subtype: event.subtype)
    }

    /// What became of the payment the event carries.
    enum Payment {
        /// Already an order (possibly updated now: refund, missing fields).
        case known(Order)
        /// A pending order named by appAccountToken, now paid.
        case linked(Order)
        /// A new order for the contract's (or token order's) user.
        case inserted(Order)
        /// Nothing to attach it to.
        case unmatched(String)
    }

    // MARK: deciding

    mutating func decide() throws -> Outcome {
        // The claim is a unique key taken before any work, in this transaction: a concurrent
        // delivery of the same notification waits here and then sees it processed.
        if let uuid = event.notificationUUID, try !session.claimNotification(uuid) {
            let prior = try session.processedLedgerEntry(notificationUUID: uuid)
            return Outcome(
                verdict: .duplicate,
                detail: "notification \(uuid) was already processed"
                    + (prior.map { " (ledger #\($0.id): \($0.verdict.rawValue))" } ?? ""))
        }
        let tx = event.transaction
        guard let originalId = tx?.originalTransactionId ?? event.renewal?.originalTransactionId else {
            let what = event.notificationType ?? "submission"
            return Outcome(
                verdict: .ignored,
                detail: what == "TEST"
                    ? "TEST notification: accepted, nothing to change"
                    : "\(what) carries no transaction: recorded, nothing to change")
        }
        contractId = originalId

        var payment: Payment?
        if let tx {
            payment = try recordPayment(tx)
        }
        var contract = try session.contract(contractId: originalId)
        if contract == nil, let tx, tx.isAutoRenewable, effect != .oneTimeCharge {
            contract = try createContract(tx, payment: payment)
        }

        var stale = false
        if var current = contract {
            stale = try updateContract(&current, tx: tx, payment: payment)
            contract = current
        }

        if case .unmatched(let why)? = payment, contract == nil {
            return Outcome(
                verdict: .unmatched, detail: why + "; recorded for replay (fix the cause, then run `iapctl notify --replay-unmatched`)")
        }
        if tx == nil, contract == nil {
            return Outcome(
                verdict: .unmatched,
                detail: "no contract \(originalId); recorded for replay (fix the cause, then run `iapctl notify --replay-unmatched`)")
        }
        if !changes.isEmpty {
            let detail = (changes.map(\.summary) + notes).joined(separator: "; ")
            return Outcome(verdict: .applied, changes: changes, detail: detail)
        }
        if effect == .informational {
            return Outcome(verdict: .ignored, detail: "\(event.notificationType ?? "event") needs no change")
        }
        if case .known(let order)? = payment, effect.isPayment {
            return Outcome(verdict: .duplicate, detail: "transaction \(order.tradeNo ?? "") is already order \(order.no)")
        }
        if stale {
            return Outcome(verdict: .stale, detail: notes.joined(separator: "; "))
        }
        let state = contract.map { "contract \($0.contractId) is already \($0.status.rawValue)" } ?? "nothing to change"
        return Outcome(verdict: .ignored, detail: "no change: " + state)
    }

    // MARK: payments

    /// Records the payment `tx` proves: exactly one order per transactionId.
    mutating func recordPayment(_ tx: TransactionFacts) throws -> Payment {
        // A receipt never revokes (its mapping drops cancelled entries; this is the engine's guarantee).
        let revokedStatus: OrderStatus? =
            tx.revocationDate == nil || tx.isFromReceipt ? nil : (effect == .revoke ? .revoked : .refunded)

        if let existing = try session.order(tradeNo: tx.transactionId) {
            var order = existing
            if let revokedStatus, order.status == .paid || order.status == .pending {
                order.status = revokedStatus
            } else if effect == .refundReversed, tx.revocationDate == nil, order.status == .refunded || order.status == .revoked {
                order.status = .paid
            }
            fillMissing(&order, from: tx)
            try saveOrder(existing, order)
            return .known(order)
        }

        var tokenOrder: Order?
        if let token = tx.appAccountToken, !token.isEmpty {
            // Order numbers are made lowercase; Apple may echo the UUID in either case.
            tokenOrder = try session.order(no: token)
            if tokenOrder == nil, token.lowercased() != token { tokenOrder = try session.order(no: token.lowercased()) }
        }
        if let pending = tokenOrder, pending.tradeNo == nil {
            var order = pending
            order.tradeNo = tx.transactionId
            order.originNo = tx.originalTransactionId
            order.status = revokedStatus ?? .paid
            if order.productId != tx.productId {
                notes.append("order \(order.no) was created for \(order.productId); Apple charged for \(tx.productId)")
                order.productId = tx.productId
            }
            order.purchaseDate = tx.purchaseDate
            order.expiresDate = tx.expiresDate
            order.environment = tx.environment ?? event.environment
            order.price = tx.price
            order.currency = tx.currency
            try saveOrder(pending, order)
            return .linked(order)
        }

        let owner: String
        if let contract = try session.contract(contractId: tx.originalTransactionId) {
            owner = contract.userId
        } else if let tokenOrder {
            owner = tokenOrder.userId
        } else if let sibling = try session.orders(originNo: tx.originalTransactionId).first {
            owner = sibling.userId
        } else {
            let token = tx.appAccountToken.flatMap { $0.isEmpty ? nil : $0 }
            return .unmatched(
                token.map { "no order with no = \($0) and no contract \(tx.originalTransactionId)" }
                    ?? "no appAccountToken and no contract \(tx.originalTransactionId)")
        }
        var order = Order(
            no: newOrderNo(), userId: owner, productId: tx.productId, status: revokedStatus ?? .paid,
            tradeNo: tx.transactionId, originNo: tx.originalTransactionId, createdAt: now, updatedAt: now)
        fillMissing(&order, from: tx)
        order = try session.insertOrder(order)
        record(.order, key: order.no, before: nil as Order?, after: order, columns: order.columnValues, oldColumns: nil)
        touchedOrders.append(order.no)
        return .inserted(order)
    }

    private func fillMissing(_ order: inout Order, from tx: TransactionFacts) {
        if order.originNo == nil { order.originNo = tx.originalTransactionId }
        if order.purchaseDate == nil { order.purchaseDate = tx.purchaseDate }
        if order.expiresDate == nil { order.expiresDate = tx.expiresDate }
        if order.environment == nil { order.environment = tx.environment ?? event.environment }
        if order.price == nil { order.price = tx.price }
        if order.currency == nil { order.currency = tx.currency }
    }

    private mutating func saveOrder(_ before: Order, _ after: Order) throws {
        guard before.columnValues.map(\.1) != after.columnValues.map(\.1) else { return }
        var after = after
        after.updatedAt = now
        try session.updateOrder(after)
        record(.order, key: after.no, before: before, after: after, columns: after.columnValues, oldColumns: before.columnValues)
        touchedOrders.append(after.no)
    }

    // MARK: contracts

    /// A new contract for the user whose order this payment is.
    mutating func createContract(_ tx: TransactionFacts, payment: Payment?) throws -> Contract? {
        let owner: Order
        switch payment {
        case .linked(let o)?, .inserted(let o)?, .known(let o)?: owner = o
        default: return nil
        }
        // A receipt proves a period, not the current state: a contract first seen in one is active
        // only while that period lasts.
        let provenActive = !tx.isFromReceipt || (tx.expiresDate ?? Int64.max) > now
        var contract = Contract(
            contractId: tx.originalTransactionId, userId: owner.userId, productId: tx.productId,
            status: provenActive ? .active : .expired, autoRenew: event.renewal?.autoRenewStatus.map { $0 == 1 } ?? true,
            expiresDate: tx.revocationDate == nil ? tx.expiresDate : nil,
            environment: tx.environment ?? event.environment, nextProductId: nil,
            lastEventDate: nil, createdAt: now, updatedAt: now)
        contract = try session.insertContract(contract)
        record(
            .contract, key: contract.contractId, before: nil as Contract?, after: contract, columns: contract.columnValues, oldColumns: nil)
        return contract
    }

    /// Applies the event's state change under the ordering guard and its money facts always.
    /// Returns whether the state change was stale.
    mutating func updateContract(_ contract: inout Contract, tx: TransactionFacts?, payment: Payment?) throws -> Bool {
        let before = contract
        var stale = false
        let signed = event.signedDate
        let isNewer = signed == nil || contract.lastEventDate == nil || signed! >= contract.lastEventDate!

        // Money facts, whatever the order: a paid period extends the expiry (never backwards).
        if let tx, tx.revocationDate == nil, let expires = tx.expiresDate, effect != .refund, effect != .revoke {
            if contract.expiresDate == nil || expires > contract.expiresDate! {
                contract.expiresDate = expires
                contract.productId = tx.productId
                if !isNewer, tx.isFromReceipt == false, contract.status == .revoked || contract.status == .expired {
                    // A paid period newer than the one that ended the contract supersedes it.
                    contract.status = .active
                }
            }
        }
        if contract.environment == nil { contract.environment = tx?.environment ?? event.environment }
        normalizeNextProduct(&contract)

        if tx?.isFromReceipt == true {
            // A receipt never changes a state Apple (or a newer client JWS) set: only its money facts
            // count. While no such event has set the state (lastEventDate nil: a contract known only
            // from receipts), the state is what the receipts prove: active while the latest paid
            // period lasts, else expired; any other state (e.g. a manual revoke) is kept.
            if contract.lastEventDate == nil, contract.status == .active || contract.status == .expired,
                let expires = contract.expiresDate
            {
                contract.status = expires > now ? .active : .expired
            } else if effect.changesState {
                notes.append("from an app receipt: contract state left to Apple's notifications")
            }
        } else if effect.changesState {
            if isNewer {
                try applyState(&contract, tx: tx, payment: payment)
                if let signed { contract.lastEventDate = signed }
            } else {
                stale = true
                let last = contract.lastEventDate.map(String.init) ?? "?"
                notes.append(
                    "state change is older (signedDate \(signed.map(String.init) ?? "?")) than contract \(contract.contractId)'s last change (\(last)): state kept"
                )
            }
        }

        if before.columnValues.map(\.1) != contract.columnValues.map(\.1) {
            contract.updatedAt = now
            try session.updateContract(contract)
            record(
                .contract, key: contract.contractId, before: before, after: contract, columns: contract.columnValues,
                oldColumns: before.columnValues)
        } else if contract.lastEventDate != before.lastEventDate {
            // Only the ordering watermark moved: keep it, but it is not a change people see.
            try session.updateContract(contract)
        }
        return stale
    }

    private func applyState(_ contract: inout Contract, tx: TransactionFacts?, payment: Payment?) throws {
        switch effect {
        case .purchase, .renewal, .submission:
            if tx?.revocationDate == nil { contract.status = .active }
        case .autoRenew(let on):
            contract.autoRenew = on
            contract.status = on ? .active : .canceled
        case .failToRenew(let grace):
            contract.status = grace ? .gracePeriod : .billingRetry
        case .expired:
            contract.status = .expired
        case .refund, .revoke:
            if let tx, try isCurrentPeriod(tx, of: contract) { contract.status = .revoked }
        case .refundReversed:
            if let tx, contract.status == .revoked, try isCurrentPeriod(tx, of: contract) { contract.status = .active }
        case .renewalPreference, .expiryUpdate, .oneTimeCharge, .informational:
            break
        }
        if let renewal = event.renewal, effect != .informational {
            if let status = renewal.autoRenewStatus { contract.autoRenew = status == 1 }
            if let next = renewal.autoRenewProductId { contract.nextProductId = next }
        }
        normalizeNextProduct(&contract)
    }

    /// `next_product_id` is kept only while it differs from the product of the current period, so
    /// it converges whichever of the renewal info and the newest period arrives first.
    private func normalizeNextProduct(_ contract: inout Contract) {
        if contract.nextProductId == contract.productId { contract.nextProductId = nil }
    }

    /// Whether `tx` is the contract's current period: no order of the contract expires later.
    private func isCurrentPeriod(_ tx: TransactionFacts, of contract: Contract) throws -> Bool {
        guard let expires = tx.expiresDate else { return true }
        let latest = try session.orders(originNo: contract.contractId).compactMap(\.expiresDate).max()
        return latest == nil || expires >= latest!
    }

    // MARK: recording

    private mutating func record<T: Encodable>(
        _ entity: EntityKind, key: String, before: T?, after: T, columns: [(String, String?)],
        oldColumns: [(String, String?)]?
    ) {
        // One row changed twice by one event (created, then updated) is one change and one audit row.
        if let i = changes.firstIndex(where: { $0.entity == entity && $0.key == key }) {
            let first = firstColumns[i]
            changes[i].fields = diff(first, columns)
            audits[i].after = Self.json(after)
            return
        }
        firstColumns.append(oldColumns)
        changes.append(
            Change(entity: entity, key: key, action: before == nil ? .insert : .update, fields: diff(oldColumns, columns)))
        audits.append(
            AuditEntry(
                at: now, actor: context.actor, command: context.command,
                reason: event.notificationType.map { "\($0)\(event.subtype.map { "/" + $0 } ?? "")" }
                    ?? "\(event.source.rawValue) submission",
                entity: entity, key: key, before: before.flatMap { Self.json($0) }, after: Self.json(after)))
    }

    static func json<T: Encodable>(_ value: T) -> String? {
        // Rows the engine audits on every event: the same bytes without the generic encoder.
        if let order = value as? Order { return EngineAuditJSON.encode(order) }
        if let contract = value as? Contract { return EngineAuditJSON.encode(contract) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes the ledger row (or rewrites the replayed one) and the audit rows.
    mutating func record(_ outcome: Outcome, replaying: Int64?) throws -> Outcome {
        var outcome = outcome
        let tx = event.transaction
        if let uuid = event.notificationUUID, outcome.verdict == .unmatched || outcome.verdict == .rejected {
            try session.releaseNotificationClaim(uuid)
        }
        let ledgerId: Int64
        if let replaying {
            try session.updateLedger(id: replaying, verdict: outcome.verdict, detail: "replayed: " + outcome.detail)
            ledgerId = replaying
        } else {
            ledgerId = try session.appendLedger(
                LedgerEntry(
                    receivedAt: now, source: event.source, notificationUUID: event.notificationUUID,
                    notificationType: event.notificationType, subtype: event.subtype,
                    transactionId: tx?.transactionId,
                    originalTransactionId: tx?.originalTransactionId ?? event.renewal?.originalTransactionId,
                    appAccountToken: tx?.appAccountToken.flatMap { $0.isEmpty ? nil : $0 },
                    signedDate: event.signedDate ?? tx?.signedDate, verdict: outcome.verdict,
                    detail: outcome.detail, raw: event.raw))
        }
        for var audit in audits {
            audit.ledgerId = ledgerId
            _ = try session.appendAudit(audit)
        }
        outcome.ledgerId = ledgerId
        outcome.orderNos = uniqued(touchedOrders)
        outcome.contractId = contractId
        return outcome
    }

    private func uniqued(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
