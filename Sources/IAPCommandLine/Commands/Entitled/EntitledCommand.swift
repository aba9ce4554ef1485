import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// `iapctl entitled`: whether a user was entitled at a moment (``EntitlementQuery``), with why.
enum EntitledCommand {
    static let user = CommandTree.requiredUserOption("The user (your account id).")

    /// `--product ID`.
    static let product = Option<String?>("product", valueName: "product", help: "Only this product id.")

    /// `--at TIME`: what was true then, as known now.
    static let at = Option<PointInTime?>(
        "at", valueName: "time",
        help: "The moment to answer for (default now), with everything known now: \(CommandTree.timeForms).")

    /// `--as-known-at TIME`: what the database knew then.
    static let asKnownAt = Option<PointInTime?>(
        "as-known-at", valueName: "time",
        help: "The moment to answer for with only what the database knew then (facts signed by then), "
            + "instead of --at: \(CommandTree.timeForms).")

    static let command = CommandSpec(
        name: "entitled",
        abstract: "Say whether a user was entitled at a time: yes (exit 0) or no (exit 1), with the contract and why.",
        discussion: """
            Answers one of two questions about a moment, and says which. --at T (default now): \
            was the user entitled at T, with everything known now — a refund Apple signed later \
            revokes from its revocationDate, a renewal signed late (or a period 'apple \
            reconcile' revealed) covers its period. --as-known-at T: what the database knew at \
            T — only the facts signed by then, so a refund signed later still counts as paid. \
            Either way the contract's owner at T comes from the audit trail (a transfer made \
            later still counts as the old owner's), and a hand override made by T (a goodwill \
            extension of expires_date, a hand revoke) decides over the facts until a newer Apple \
            period lifts it. Entitled means: the user held the contract then, and a paid, \
            not-refunded period (or a hand extension) covered that moment, or the contract was in \
            its billing grace period. A grant by hand in force then (`iapctl grants add`) \
            answers yes when no purchase does, and says so: "yes: granted by hand until T, audit \
            #N, ticket T-1" (JSON: granted, grant_id, grant_until_date, grant_audit_id, \
            grant_ticket; status "granted"). A user with no orders and no contracts in the database (a \
            typo, another database) is not a "no": it is "unknown user", exit 3.
            """,
        examples: [
            CommandExample(
                "iapctl entitled --user u42 --at 2025-03-14T09:30:00Z", "Was u42 entitled when they complained?"),
            CommandExample(
                "iapctl entitled --user u42 --as-known-at 2025-03-14T09:30:00Z",
                "What the database said then (an auditor's question)."),
            CommandExample("iapctl entitled --user u42 --product com.example.pro.monthly -o json", "Now, as JSON."),
        ],
        options: [user, product, at, asKnownAt],
        handler: run
    )

    /// `iapctl entitled --user U [--product P] [--at T]`: yes (exit 0) or no (exit 1), with why;
    /// a user with no orders and no contracts (a typo) is not a "no": exit 3, not found.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let user = invocation[user]
        let product = invocation[product]
        let now = Timestamp.now()
        if invocation[at] != nil, invocation[asKnownAt] != nil {
            throw CLIError.usage(
                "--at and --as-known-at ask two different questions: give one (--at T: true at T as known now; "
                    + "--as-known-at T: what the database knew at T)")
        }
        let question: EntitlementAsOf.Question = invocation[asKnownAt] == nil ? .asKnownNow : .asKnownThen
        let time = (invocation[asKnownAt] ?? invocation[at])?.at(now) ?? now
        let (verdict, grants, known) = try DbOpen.read(invocation) { session in
            let verdict = try EntitlementQuery.entitled(
                user: user, product: product, at: time, question: question, in: session)
            let grants = try GrantService.inForce(user: user, product: product, at: time, in: session)
            return (
                verdict, grants,
                try !verdict.subjects.isEmpty || !grants.isEmpty || KnownUsers.contains(user, in: session)
            )
        }
        let (subjects, best) = (verdict.subjects, verdict.best)
        // Apple's word first; a grant in force answers only when no purchase does.
        let grant = verdict.entitled ? nil : grants.first
        let entitled = verdict.entitled || grant != nil
        var r = Record()
        r.append("entitled", entitled)
        r.append("user_id", user)
        r.append("product_id", grant?.productId ?? best?.answer.contract.productId ?? product)
        r.append("as_of_date", time)
        // Which question the answer is to: true at T as known now, or what the database knew at T.
        r.append("question", question.rawValue)
        r.append("contract_id", grant == nil ? best?.answer.contract.contractId : nil)
        r.append("status", grant == nil ? best?.answer.status : "granted")
        let unknown = "no user \(user) in the database (no orders, no contracts): check the spelling"
        r.append(
            "reason",
            grant.map(GrantOptions.sentence) ?? best?.answer.reason
                ?? (known
                    ? "no contract of \(user)\(product.map { " for \($0)" } ?? "") at \(Timestamp.iso8601(time))"
                    : unknown))
        r.append("transaction_id", grant == nil ? best?.answer.covering?.tradeNo : nil)
        if invocation.output != .table {
            // Derived (``Lapse``): paid until a past moment, nothing from Apple since; `status` says `lapsed`.
            r.append("lapsed", grant == nil && best?.answer.lapse != nil)
            r.append("paid_until_date", grant == nil ? best?.answer.lapse?.paidUntil : nil)
        }
        // Whether a grant by hand (iap_grants) gives the answer, and which (a table shows them only
        // then; after the older keys, so CSV columns keep their places).
        if invocation.output != .table || grant != nil {
            r.append("granted", grant != nil)
            r.append("grant_id", grant?.id)
            r.append("grant_until_date", grant?.untilDate)
            r.append("grant_audit_id", grant?.auditId)
            r.append("grant_ticket", grant?.ticket)
        }
        switch invocation.output {
        case .table:
            let yes = entitled
            // The answer first (scripts read "yes:"/"no:"), then which question it answers.
            let when = known ? " (at \(Timestamp.iso8601(time)), \(question.words))" : ""
            invocation.print(
                (yes ? "yes: " : known ? "no: " : "unknown user: ") + (r["reason"]?.stringValue ?? "") + when)
            invocation.emit(document: r)
            if grant == nil, let best, best.answer.lapse != nil {
                // Lapsed: our data stops at the paid period's end; Apple knows what happened since.
                invocation.note(
                    "next step: ask Apple: iapctl apple reconcile --contract \(ShellWord.word(best.answer.contract.contractId))")
            }
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
            r.append("grants", .array(grants.map { GrantOptions.record($0, now: time).jsonObject() }))
            invocation.emit(document: r)
        case .ndjson, .csv:
            invocation.emit(document: r)
        }
        guard known else { return .notFound }
        return entitled ? .success : .failure
    }
}
