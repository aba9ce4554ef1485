import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl audit raw ID`: one ledger item exactly as it was received.
enum AuditRaw {
    /// `ID`.
    static let id = Argument<LedgerItemId>("id", help: "The ledger item id (ledger_id).")

    static let command = CommandSpec(
        name: "raw",
        abstract: "Print a ledger item exactly as it was received: the same bytes, no newline added.",
        discussion: """
            The ledger keeps every received JWS or webhook body in a compact form (each certificate \
            chain stored once, a re-delivery as a reference to its first copy); this rebuilds the \
            original bytes (for an app receipt's later entries: the receipt they came with). ID is \
            the ledger_id of audit show, contracts explain or the verdict output. On a terminal, \
            control characters are shown escaped; redirect to get the bytes.
            """,
        examples: [
            CommandExample("iapctl audit raw 42 > item42.jws", "The JWS of ledger item 42, byte for byte.")
        ],
        arguments: [id],
        handler: run)

    /// One ledger item's raw text, exactly as received (the ledger stores it packed).
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let id = invocation[Self.id].value
        let found = try DbOpen.read(invocation) { session throws -> LedgerEntry? in
            guard let entry = try session.ledgerEntry(id: id) else { return nil }
            // The later entries of one app receipt point to the row that keeps it (ReceiptMapping).
            if let kept = ReceiptMapping.referencedLedgerId(entry.raw) { return try session.ledgerEntry(id: kept) }
            return entry
        }
        guard let entry = found else {
            throw CLIError(
                .notFound, "no ledger item \(id)",
                hint: "ledger ids are the ledger_id of: iapctl audit show, iapctl contracts explain")
        }
        // On a terminal, what it would act on (controls, bidi overrides) is shown escaped, newlines kept.
        invocation.stdout.write(invocation.isStdoutTTY ? TerminalText.escape(entry.raw, keepNewlines: true) : entry.raw)
        return .success
    }
}
