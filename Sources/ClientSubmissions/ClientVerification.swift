import AppStoreJWS
import AppStoreReceipt
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// How one client item (`verify`, `restore`) ended, in the terms of the command-line contract's
/// exit statuses; the command layer maps it to its exit code.
public enum ItemOutcome: Sendable, Equatable, CaseIterable {
    /// Done: applied, duplicate, stale, ignored, restorable, restored, transferred (exit 0).
    case success
    /// Not done for none of the reasons below (a receipt entry that cannot be restored), or a
    /// batch in which some items failed (exit 1).
    case failed
    /// Failed verification: signature, chain, certificate, bundle id, app id or environment (exit 2).
    case unverified
    /// Unmatched or unknown (exit 3).
    case notFound
    /// Owned by another user, or a conflict (exit 4).
    case conflict
    /// Malformed or inapplicable input: not a JWS or receipt, not a transaction, without the ids
    /// the engine needs, fields too long for the store, rejected by the engine (exit 65).
    case invalid

    /// A refused item's: malformed input or a failed verification.
    public init(_ failure: VerificationFailure) {
        self = failure.code.isMalformed ? .invalid : .unverified
    }

    /// An engine verdict's (duplicates, stale and ignored items are success).
    public init(_ verdict: Verdict) {
        switch verdict {
        case .applied, .duplicate, .stale, .ignored: self = .success
        case .unmatched: self = .notFound
        case .rejected: self = .invalid
        case .conflict: self = .conflict
        }
    }

    /// A restore verdict's.
    public init(_ verdict: RestoreVerdict) {
        switch verdict {
        case .restorable, .restored, .transferred, .duplicate, .stale, .ignored: self = .success
        case .unknown, .unmatched: self = .notFound
        case .ownedByOther, .conflict: self = .conflict
        case .rejected: self = .invalid
        }
    }

    /// A run's: a single item's own outcome; for several, `success` when every one succeeded,
    /// else `failed`.
    public static func of(_ outcomes: [ItemOutcome]) -> ItemOutcome {
        if outcomes.count == 1 { return outcomes[0] }
        return outcomes.allSatisfy { $0 == .success } ? .success : .failed
    }
}

/// The verifiers of one run of client items, each made when the first item needs it (a run of
/// receipts needs no JWS trust settings such as `--app-apple-id`); a failure to make one is thrown
/// from the item that needed it.
public final class ClientVerifiers {
    /// Which of the two verifiers.
    public enum Kind: Sendable, Equatable {
        case jws
        case receipts
    }

    /// Trust settings that could not make the verifier of `kind`.
    public struct SetupError: Error, Sendable, Equatable {
        public let kind: Kind
        public let error: TrustConfigurationError

        public init(kind: Kind, error: TrustConfigurationError) {
            self.kind = kind
            self.error = error
        }
    }

    private enum Makers {
        case closures(jws: () throws -> AppStoreVerifier, receipts: () throws -> ReceiptVerifier)
        case settings((Kind) throws -> TrustSettings)
    }

    private let makers: Makers
    private var jwsVerifier: AppStoreVerifier?
    private var receiptVerifier: ReceiptVerifier?
    /// The settings the JWS verifier was made from, once it was (the roots in use, for messages).
    public private(set) var jwsSettings: TrustSettings?

    /// The JWS verifier's roots: its settings' once it was made from settings, else the built-in root.
    public var jwsRoots: TrustSettings.Roots { jwsSettings?.roots ?? .builtIn }

    public init(jws: @escaping () throws -> AppStoreVerifier, receipts: @escaping () throws -> ReceiptVerifier) {
        makers = .closures(jws: jws, receipts: receipts)
    }

    /// Verifiers made from trust settings: `settings` gives the settings of a verifier when the
    /// first item needs it (so it reads only what that verifier needs); settings that cannot make
    /// it throw ``SetupError``.
    public init(settings: @escaping (Kind) throws -> TrustSettings) {
        makers = .settings(settings)
    }

    /// The JWS verifier, made on first use.
    public func jws() throws -> AppStoreVerifier {
        if let jwsVerifier { return jwsVerifier }
        let made: AppStoreVerifier
        switch makers {
        case .closures(let jws, _): made = try jws()
        case .settings(let settingsOf):
            let settings = try settingsOf(.jws)
            do { made = try settings.appStoreVerifier() } catch { throw SetupError(kind: .jws, error: error) }
            jwsSettings = settings
        }
        jwsVerifier = made
        return made
    }

    /// The receipt verifier, made on first use.
    public func receipts() throws -> ReceiptVerifier {
        if let receiptVerifier { return receiptVerifier }
        let made: ReceiptVerifier
        switch makers {
        case .closures(_, let receipts): made = try receipts()
        case .settings(let settingsOf):
            let settings = try settingsOf(.receipts)
            do { made = try settings.receiptVerifier() } catch { throw SetupError(kind: .receipts, error: error) }
        }
        receiptVerifier = made
        return made
    }
}

/// `verify [--apply [--dry-run]]`: each input item verified as what it is (a StoreKit 1 receipt or
/// a JWS of any kind) and, with `--apply`, submitted through the one engine as a client
/// submission (``ClientSubmission``), or kept in the ledger as `rejected` when verification refused
/// it. Two steps per item, so a caller can report the verification before anything is written.
public enum ClientVerification {
    /// What verification made of one item.
    public enum Report {
        /// The item could not be read (framing, encoding, size, paste damage): nothing to verify
        /// or keep.
        case unreadable(VerificationFailure)
        /// A StoreKit 1 app receipt (base64 or DER).
        case receipt(ReceiptReport)
        /// A JWS of any kind.
        case jws(VerificationReport)
    }

    /// One item, verified.
    public struct Checked {
        public let line: Int
        /// The item as received (a JWS, a receipt's base64); nil when it could not be read.
        public let raw: String?
        public let report: Report

        public init(line: Int, raw: String?, report: Report) {
            self.line = line
            self.raw = raw
            self.report = report
        }

        /// Why verification refused the item; nil when it passed.
        public var failure: VerificationFailure? {
            switch report {
            case .unreadable(let failure): failure
            case .receipt(let report): report.failure
            case .jws(let report): report.failure
            }
        }
    }

    /// What `--apply` did with one item.
    public enum Applied {
        /// Refused by verification: kept in the ledger as `rejected` with `why` (once per distinct
        /// bytes; nothing in a dry run).
        case keptRejected(why: String)
        /// A verified JWS submitted as a signed transaction.
        case transaction(ClientSubmission.TransactionResult)
        /// A verified receipt: each in-app entry (oldest purchase first) with its result.
        case receipt(AppReceipt, [(entry: InAppPurchase, result: ClientSubmission.EntryResult)])
    }

    /// One item's result.
    public struct Result {
        public let checked: Checked
        /// What `--apply` did; nil without `--apply`, and for an item that could not be read.
        public let applied: Applied?
        /// The item's outcome: its verification's, or under `--apply` what was applied (a receipt's:
        /// that of its first entry that did not succeed).
        public let outcome: ItemOutcome
        /// The item's verdict under `--apply`: the engine's for a signed transaction it took; for a
        /// receipt, ``receiptVerdict(_:)`` of its entries (each also carries its own in
        /// ``applied``); `rejected` for anything refused before the engine.
        public let verdict: Verdict
        /// Whether `--apply` wrote the item's engine verdict (``verdict`` is not `rejected`).
        public var isCommitted: Bool { verdict != .rejected }
    }

    /// Where and how `--apply` submits items.
    public struct Submission {
        public let store: any Store
        public let engine: SubscriptionEventEngine
        public let context: EngineContext
        /// Everything is rolled back: the results say what would happen.
        public let dryRun: Bool
        /// `received_at` of the ledger rows of refused items.
        public let clock: () -> Int64

        public init(
            store: any Store, engine: SubscriptionEventEngine = SubscriptionEventEngine(), context: EngineContext,
            dryRun: Bool = false, clock: @escaping () -> Int64 = Timestamp.now
        ) {
            self.store = store
            self.engine = engine
            self.context = context
            self.dryRun = dryRun
            self.clock = clock
        }
    }

    /// A receipt's verdict from its entries' verdicts, in purchase order: that of the first entry
    /// that did not succeed (the one that decides the item's outcome and exit status); when all
    /// succeeded, `applied` if any was applied, else the first entry's (duplicate, stale, ignored);
    /// `ignored` for a receipt with no entries.
    public static func receiptVerdict(_ verdicts: [Verdict]) -> Verdict {
        if let failed = verdicts.first(where: { ItemOutcome($0) != .success }) { return failed }
        if verdicts.contains(.applied) { return .applied }
        return verdicts.first ?? .ignored
    }

    /// Verifies one input item: base64 (or DER) that decodes as a receipt with the receipt
    /// verifier, anything else as a JWS of any kind.
    public static func check(_ item: WebhookBody.Item, with verifiers: ClientVerifiers) throws -> Checked {
        switch item.result {
        case .failure(let failure):
            return Checked(line: item.line, raw: nil, report: .unreadable(failure))
        case .success(let token) where ReceiptInput.der(fromBase64: token) != nil:
            return Checked(line: item.line, raw: token, report: .receipt(try verifiers.receipts().verify(base64: token)))
        case .success(let jws):
            return Checked(
                line: item.line, raw: jws, report: .jws(PasteDamage.cutInsideSignature(try verifiers.jws().verify(jws), jws: jws)))
        }
    }

    /// The result of an item without `--apply`: its verification's.
    public static func result(_ checked: Checked) -> Result {
        Result(checked: checked, applied: nil, outcome: checked.failure.map(ItemOutcome.init) ?? .success, verdict: .rejected)
    }

    /// `--apply` of one checked item: a valid signed transaction through the engine, a valid
    /// receipt's in-app entries each through the engine (`each` receives each entry's result as it
    /// is final), a refused item kept in the ledger; each in its own transaction (rolled back in a
    /// dry run).
    public static func submit(
        _ checked: Checked, to submission: Submission,
        each: (InAppPurchase, ClientSubmission.EntryResult) throws -> Void = { _, _ in }
    ) throws -> Result {
        let verified = result(checked)
        guard let raw = checked.raw else { return verified }
        let (store, dryRun) = (submission.store, submission.dryRun)
        switch checked.report {
        case .unreadable: return verified
        case .receipt(let report):
            if report.isValid, let receipt = report.receipt {
                var entries: [(entry: InAppPurchase, result: ClientSubmission.EntryResult)] = []
                try ClientSubmission.applyReceipt(
                    receipt, raw: raw, store: store, engine: submission.engine, context: submission.context, dryRun: dryRun
                ) { entry, result in
                    entries.append((entry, result))
                    try each(entry, result)
                }
                // The verdict of the first entry that did not succeed decides the outcome too.
                let verdict = receiptVerdict(entries.map(\.result.verdict))
                return Result(
                    checked: checked, applied: .receipt(receipt, entries), outcome: ItemOutcome(verdict), verdict: verdict)
            }
            guard let failure = report.failure else { return verified }
            let why = "app receipt: " + failure.message
            try ClientSubmission.reject(raw, why: why, store: store, dryRun: dryRun, clock: submission.clock)
            return Result(checked: checked, applied: .keptRejected(why: why), outcome: verified.outcome, verdict: .rejected)
        case .jws(let report):
            if report.isValid {
                let applied = try ClientSubmission.applyTransaction(
                    report, jws: raw, store: store, engine: submission.engine, context: submission.context, dryRun: dryRun,
                    clock: submission.clock)
                return Result(checked: checked, applied: .transaction(applied), outcome: applied.outcome, verdict: applied.verdict)
            }
            guard let failure = report.failure else { return verified }
            try ClientSubmission.reject(raw, why: failure.message, store: store, dryRun: dryRun, clock: submission.clock)
            return Result(
                checked: checked, applied: .keptRejected(why: failure.message), outcome: verified.outcome, verdict: .rejected)
        }
    }
}

extension ClientSubmission.TransactionResult {
    /// The verdict: the engine's, `rejected` when it was refused before the engine.
    public var verdict: Verdict {
        if case .applied(_, let outcome) = self { return outcome.verdict }
        return .rejected
    }

    public var outcome: ItemOutcome { ItemOutcome(verdict) }
}

extension ClientSubmission.EntryResult {
    /// The verdict: the engine's; `ignored` for an entry skipped as not applicable, `rejected` for
    /// one without the ids the engine needs.
    public var verdict: Verdict {
        switch self {
        case .incomplete: .rejected
        case .skipped: .ignored
        case .applied(_, let outcome): outcome.verdict
        }
    }

    public var outcome: ItemOutcome { ItemOutcome(verdict) }
}
