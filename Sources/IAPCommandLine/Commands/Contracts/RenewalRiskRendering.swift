import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// How `contracts show`, `contracts list --risk` and `customer` show a ``RenewalRisk``.
enum RenewalRiskRendering {
    /// `--risk KIND`.
    static let riskOption = Option<RenewalRisk.Kind?>(
        "risk", valueName: "kind",
        help: "Only contracts at this renewal risk: billing-retry (Apple is retrying a failed charge), grace (the "
            + "billing grace period), price-consent (a price increase not consented), auto-renew-off (the customer "
            + "cancelled; ends at expiry).",
        allowedValues: OptionSpec.choices(RenewalRisk.Kind.self))

    /// The risk as one record: `kinds` (the `--risk` words that apply), `ended` (why it ended), `notes`
    /// (why it may not renew, what changes at the next renewal), then Apple's values they come from.
    /// A table shows the notes as one text; JSON as an array.
    static func record(_ risk: RenewalRisk, structured: Bool) -> Record {
        var r = Record()
        let kinds = risk.kinds.map(\.rawValue)
        if structured {
            r.append("kinds", .array(kinds.map(JSONValue.string)))
            r.append("ended", risk.ended)
            r.append("notes", .array(risk.notes.map(JSONValue.string)))
            r.append("summary", risk.summary)
            r.append("renewal_info_signed_date", risk.renewalInfoSignedDate)
            r.append("expiration_intent", risk.expirationIntent.map(Int64.init))
            r.append("is_in_billing_retry_period", risk.billingRetry)
            r.append("grace_period_expires_date", risk.gracePeriodExpiresDate)
            r.append("price_increase_status", risk.priceIncreaseStatus.map(Int64.init))
            r.append("next_product_id", risk.nextProductId)
            r.append("renewal_price", risk.renewalPrice)
            r.append("currency", risk.currency)
            r.append("offer_type", risk.offerType.map(Int64.init))
            r.append("offer_identifier", risk.offerIdentifier)
        } else {
            r.append("risk", kinds.isEmpty ? "none" : kinds.joined(separator: ", "))
            if let ended = risk.ended { r.append("ended", ended) }
            if !risk.notes.isEmpty { r.append("why", risk.notes.joined(separator: "; ")) }
            if risk.ended == nil && risk.notes.isEmpty {
                r.append(
                    "why",
                    risk.renewalInfoSignedDate == nil
                        ? "no renewal info kept for this subscription: nothing known against its renewal"
                        : "nothing in Apple's renewal info (signed \(Timestamp.iso8601(risk.renewalInfoSignedDate!))) "
                            + "stands against its renewal")
            }
            r.append("renewal_info_signed_date", risk.renewalInfoSignedDate)
        }
        return r
    }

    /// The section `contracts show` and `customer` add under the contract.
    static func section(_ risk: RenewalRisk, structured: Bool) -> DetailView.Section {
        DetailView.Section(key: "renewal_risk", title: "Renewal risk", content: .fields(record(risk, structured: structured)))
    }
}
