import IAPFoundation
import StoreSQL
import SubscriptionEngine
import SubscriptionModel

// `iapctl users`: what iapctl keeps about one user as a whole.
extension CommandTree {
    static let users = CommandSpec(
        name: "users",
        abstract: "Forget a user (GDPR erasure): their id replaced with an alias everywhere iapctl keeps it.",
        subcommands: [UsersForget.command]
    )
}

/// `iapctl users forget USER`: a dry run unless `--apply`; audited with the salted hash of the id.
enum UsersForget {
    static let user = Argument<String>("user", help: "The user's id (your account id).", completion: .lookup("users"))
    static let apply = CommandTree.applyOption.with(help: "Forget the user (without it: a dry run that writes nothing).")
    static let ticket = CommandTree.ticketOption.reading(
        String.self, help: "The erasure request's ticket: recorded with the change.")

    static let command = CommandSpec(
        name: "forget",
        abstract: "Replace a user's id with a stable alias everywhere iapctl keeps it (dry run unless --apply).",
        discussion: """
            Replaces USER in every column the schema marks as holding a user id (orders, \
            member_contracts, iap_grants) and every mention of it in the free texts the schema \
            marks as naming users (the audit trail's reason, ticket, command and before/after \
            JSON, ledger details, overrides' and grants' reasons) with forgotten-HASH: the first \
            16 hex digits of the SHA-256 of a salt kept in the database and the id, the same \
            alias each time. Audit and ledger rows are checked against their row digests before \
            the rewrite and get new digests after; the audit row of the forget says how many, and \
            keeps the full salted hash, never the id. On SQLite the file is then vacuumed and its \
            write-ahead log emptied, so no free page keeps the id; a server (MariaDB, PostgreSQL) \
            may keep old row versions in its logs and backups until they rotate.

            Kept: Apple's signed records (the ledger's raw JWS and the facts, which carry no user \
            id of ours) and the orders and contracts themselves (money records, now under the \
            alias). Refused (exit 4) while a refund request about the user's purchase awaits its \
            answer: Apple's deadline needs the account's data; answer it first (iapctl refunds \
            answer) or let its deadline pass. Cannot be undone.
            """,
        examples: [
            CommandExample(
                "iapctl users forget u42 --reason 'erasure request' --ticket GDPR-7", "Show what would change."),
            CommandExample(
                "iapctl users forget u42 --reason 'erasure request' --ticket GDPR-7 --apply", "Forget u42."),
        ],
        options: [CommandTree.reasonOption, ticket, apply],
        arguments: [user],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let reason = invocation[CommandTree.reasonOption]
        guard !reason.allSatisfy(\.isWhitespace) else {
            throw CLIError.usage("--reason must say why", hint: "e.g. --reason 'erasure request'")
        }
        let ticket = invocation[ticket]
        guard !ticket.allSatisfy(\.isWhitespace) else {
            throw CLIError.usage("--ticket must name the erasure request", hint: "e.g. --ticket GDPR-7")
        }
        let userId = invocation[user]
        let applying = invocation.flag(apply)
        let now = Timestamp.now()
        let context = CorrectionContext(actor: invocation.actor, command: "users forget", now: now)
        let store = try DbOpen.existing(invocation)
        let (outcome, newSalt) = try store.write(commit: applying) { session in
            let (salt, made) = try UserAlias.salt(in: session, now: now)
            let outcome = try UserForgetService.forget(
                userId, alias: UserAlias.alias(userId, salt: salt), saltedHash: UserAlias.saltedHash(userId, salt: salt),
                reason: reason, ticket: ticket, context: context, in: session)
            return (outcome, made)
        }
        // A dry run that had to make the salt shows no alias: the applied run makes another salt.
        let shownAlias = applying || !newSalt ? outcome.alias : nil
        if applying, let backend = store as? any SQLStoreBackend {
            for statement in backend.transactions.dialect.afterErasure {
                try backend.transactions.connection.execute(statement)
            }
        }
        let records = (outcome.rows.ids.map { ($0, $1, "id") } + outcome.rows.texts.map { ($0, $1, "mention") }).map {
            column, rows, kind in
            var r = Record()
            r.append("column", column)
            r.append("kind", kind)
            r.append("rows", Int64(rows))
            return r
        }
        switch invocation.output {
        case .json:
            var document = Record()
            document.append("alias", shownAlias)
            document.append("dry_run", !applying)
            document.append("audit_id", applying ? outcome.auditId : nil)
            document.append("columns", .array(records.map { $0.jsonObject() }))
            document.append("redigested_audit_rows", Int64(outcome.rows.redigestedAudit))
            document.append("redigested_ledger_rows", Int64(outcome.rows.redigestedLedger))
            invocation.emit(document: document)
        default:
            invocation.emit(
                records, columns: [Column("column", title: "COLUMN"), Column("kind", title: "KIND"), Column("rows", title: "ROWS")])
        }
        let digests = "\(outcome.rows.redigestedAudit) audit and \(outcome.rows.redigestedLedger) ledger rows re-digested"
        if applying {
            invocation.note(
                "forgot the user as \(outcome.alias): \(outcome.rows.total) rows rewritten, \(digests) (audit #\(outcome.auditId))")
        } else {
            let alias = shownAlias ?? "forgotten-… (the database's salt is made when applied)"
            invocation.note(
                "dry run: would forget the user as \(alias): \(outcome.rows.total) rows, \(digests); nothing written; "
                    + "add --apply to forget")
        }
        return .success
    }
}

extension UserForgetError: CLIErrorConvertible {
    public var cliError: CLIError {
        switch self {
        case .unknownUser:
            return CLIError(
                .notFound, "no row names this user (no order, contract, grant or audit text): nothing to forget",
                hint: "check the spelling; a user forgotten already is known only by the alias")
        case .openRefundRequest(let transactionId, let deadline):
            return CLIError(
                .conflict,
                "refused: Apple's refund request about transaction \(transactionId) awaits an answer until "
                    + "\(Timestamp.iso8601(deadline)), and answering it needs the account's data; nothing was changed",
                hint: "answer it first (iapctl refunds answer), or run this again after its deadline")
        }
    }
}
