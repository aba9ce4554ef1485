import AppStoreJWS
import IAPFoundation
import SubscriptionEngine

/// `iapctl entitled`: whether a user was entitled at a moment (``EntitlementQuery``), with why.
enum EntitledCommand {
    /// `iapctl entitled --user U [--product P] [--at T]`: yes (exit 0) or no (exit 1), with why.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        guard let user = invocation.parsed.value(CommandTree.userOption) else { throw CLIError.usage("missing --user") }
        let product = invocation.parsed.value(EntitledSpec.product)
        let now = Timestamp.now()
        let time = try AuditTime.option(invocation, EntitledSpec.at, now: now) ?? now
        let verdict = try DbOpen.read(invocation) { session in
            try EntitlementQuery.entitled(user: user, product: product, at: time, in: session)
        }
        let (subjects, best) = (verdict.subjects, verdict.best)
        var r = Record()
        r.append("entitled", best?.answer.entitled ?? false)
        r.append("user_id", user)
        r.append("product_id", best?.answer.contract.productId ?? product)
        r.append("as_of_date", time)
        r.append("contract_id", best?.answer.contract.contractId)
        r.append("status", best?.answer.status)
        r.append(
            "reason",
            best?.answer.reason ?? "no contract of \(user)\(product.map { " for \($0)" } ?? "") at \(Timestamp.iso8601(time))")
        r.append("transaction_id", best?.answer.covering?.tradeNo)
        if invocation.output != .table {
            // Derived (``Lapse``): paid until a past moment, nothing from Apple since; `status` says `lapsed`.
            r.append("lapsed", best?.answer.lapse != nil)
            r.append("paid_until_date", best?.answer.lapse?.paidUntil)
        }
        switch invocation.output {
        case .table:
            let yes = best?.answer.entitled ?? false
            invocation.print((yes ? "yes: " : "no: ") + (r["reason"]?.stringValue ?? ""))
            invocation.emit(document: r)
        case .json:
            r.append(
                "contracts",
                .array(
                    subjects.map { s in
                        var c = Record()
                        c.append("contract_id", s.answer.contract.contractId)
                        c.append("product_id", s.answer.contract.productId)
                        c.append("entitled", s.answer.entitled)
                        c.append("status", s.answer.status)
                        c.append("reason", s.answer.reason)
                        c.append("lapsed", s.answer.lapse != nil)
                        c.append("paid_until_date", s.answer.lapse?.paidUntil)
                        return c.jsonObject()
                    }))
            invocation.emit(document: r)
        case .ndjson, .csv:
            invocation.emit(document: r)
        }
        return best?.answer.entitled == true ? .success : .failure
    }
}
