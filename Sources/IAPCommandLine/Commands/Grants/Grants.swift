import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

// `iapctl grants`: access given by hand for a time, in a table of its own. Each subcommand's spec,
// options and handler are in its own file beside this one (Add, List, Revoke).
extension CommandTree {
    static let grants = CommandSpec(
        name: "grants",
        abstract: "Give a user access to a product for a time, by hand, without touching Apple's data (audited).",
        discussion: """
            A grant lets a user use a product until a moment without a payment: the first move on \
            a "paid but locked out" ticket, a goodwill week, a tester. It is kept in its own table \
            (iap_grants), never in the orders or contracts, so Apple's data stays as Apple signed \
            it. A grant ends by itself at its end (nothing has to run); `grants revoke ID` or \
            `iapctl audit undo ID` of its audit row ends it early. `entitled` honours grants in \
            force and says so; `contracts show` and `doctor` list them.
            """,
        examples: [
            CommandExample(
                "iapctl grants add --user u42 --product com.example.pro.monthly --for 7d --reason 'locked out after restore' "
                    + "--ticket T-118",
                "Give u42 a week of Pro."),
            CommandExample("iapctl grants list --user u42", "The grants of u42 in force."),
            CommandExample("iapctl grants revoke 3 --reason 'purchase restored'", "End grant 3 now."),
        ],
        subcommands: [GrantsAdd.command, GrantsList.command, GrantsRevoke.command]
    )
}

/// What the `grants` commands share.
enum GrantOptions {
    /// A span forward from now (`90m`, `36h`, `7d`, `2w`), in milliseconds; nil when `text` is none.
    static func span(_ text: String) -> Int64? {
        let trimmed = text.trimmed(.spacesAndTabs)
        guard let unit = trimmed.last, "mhdw".contains(unit), let amount = Int64(trimmed.dropLast()), amount > 0,
            let back = Timestamp.parse(String(trimmed), now: 0)
        else { return nil }
        return -back
    }

    /// The words of a span's forms, for help and errors.
    static let spanForms = "a span from now: 90m, 36h, 7d, 2w"

    /// A grant as a record: every column, dates as ISO-8601, and whether it is in force at `now`.
    static func record(_ grant: Grant, now: Int64) -> Record {
        var r = RowRendering.record(grant, columns: Grant.columns)
        r.append("in_force", grant.inForce(at: now))
        return r
    }

    /// The table columns of `grants list`.
    static let columns: [Column] = [
        Column("id", title: "ID"), Column("user_id", title: "USER", owner: true),
        Column("product_id", title: "PRODUCT", important: true), Column("until_date", title: "UNTIL", important: true),
        Column("in_force", title: "IN FORCE", important: true), Column("ticket", title: "TICKET"),
        Column("audit_id", title: "AUDIT"), Column("reason", title: "REASON", maxWidth: 40),
    ]

    /// `granted by hand until 2026-01-01T00:00:00Z, audit #12, ticket T-1`.
    static func sentence(_ grant: Grant) -> String {
        "granted by hand until \(Timestamp.iso8601(grant.untilDate)), \(grant.label)"
    }
}

extension GrantError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .notFound(let id):
            return CLIError(.notFound, "no grant \(id)", hint: "list them with: iapctl grants list --all")
        case .alreadyRevoked(let id, let at, let by):
            return CLIError(
                .conflict, "grant \(id) was revoked already, at \(Timestamp.iso8601(at))" + (by.map { " (\($0))" } ?? ""),
                hint: "see it with: iapctl grants list --all")
        case .ended(let id, let until):
            return CLIError(
                .conflict, "grant \(id) ended by itself at \(Timestamp.iso8601(until)): nothing to revoke")
        case .endNotInFuture(let line, let until, let now):
            return CLIError(
                .dataError,
                (line.map { "line \($0): " } ?? "") + "the grant would end at \(Timestamp.iso8601(until)), "
                    + "not after now (\(Timestamp.iso8601(now)))",
                hint: "give --until a later time, or --for a span such as 7d")
        case .changedSince(let auditId, let grantId):
            return CLIError(
                .conflict, "grant \(grantId) changed since audit row \(auditId); not undone",
                hint: "see it with: iapctl grants list --all --user …, and revoke it with: iapctl grants revoke \(grantId)")
        }
    }
}
