import AppStoreAPI
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

extension CustomerLookup.IdKind: OptionValue {}

/// Turns the KEY of `customer` and `customer note` into one user: the database's ids first; the
/// order ID of a receipt e-mail through Apple's Look Up Order ID when the Apple API settings are given.
enum CustomerResolve {
    /// `KEY`.
    static let key = Argument<String>(
        "key",
        help: "Any id of the customer: user id, order number, transactionId, originalTransactionId, "
            + "appTransactionId, or the order ID of a receipt e-mail.",
        completion: .lookup("users"))

    /// `--by KIND`.
    static let by = Option<CustomerLookup.IdKind?>(
        "by", valueName: "kind",
        help: "Read KEY as this kind of id only (to pick one of several matches): user, order, transaction, original, "
            + "app-transaction, receipt-order.",
        allowedValues: OptionSpec.choices(CustomerLookup.IdKind.self))

    /// The Apple API options `customer` reads when it asks Look Up Order ID.
    static let appleOptions: [any OptionDeclaration] = [
        AppleCommands.keyFileOption.spec, AppleCommands.keyIdOption.spec, AppleCommands.issuerIdOption.spec,
        AppleCommands.bundleIdOption.spec, AppleCommands.appAppleIdOption.spec, AppleCommands.rootCAOption.spec,
        AppleCommands.atOption.spec, AppleCommands.environmentOption.spec,
    ]

    /// What was found: the matches (several: the command lists them) and what was searched.
    struct Found {
        var matches: [CustomerLookup.Match]
        var searched: [String]
    }

    /// Whether `key` has the shape of a receipt e-mail's order ID (`MK5TTTVWJH`: 8 to 14 capital
    /// letters and digits, not all digits).
    static func looksLikeReceiptOrderId(_ key: String) -> Bool {
        let isDigits = !key.isEmpty && key.allSatisfy { $0.isASCII && $0.isNumber }
        return (8...14).contains(key.count) && !isDigits
            && key.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// Every user `key` leads to; throws not-found (exit 3) saying what was searched when none.
    static func resolve(_ invocation: Invocation, key: String) throws -> Found {
        let only = invocation[by]
        let kinds = only.map { [$0] } ?? CustomerLookup.localKinds
        let local = kinds.filter { $0 != .receiptOrder }
        var searched = local.map(\.words)
        var matches = try DbOpen.read(invocation) { session in try CustomerLookup.resolve(key, as: local, in: session) }
        let asksApple = only == .receiptOrder || (only == nil && matches.isEmpty && looksLikeReceiptOrderId(key))
        if asksApple {
            guard invocation.declares(AppleCommands.keyFileOption.spec), invocation[AppleCommands.keyFileOption] != nil else {
                throw CLIError(
                    .notFound,
                    "no customer with \(searchedText(searched)) \(key); \(key) looks like the order ID of a receipt "
                        + "e-mail, which only Apple knows",
                    hint: "give the Apple API settings (--key-file, --key-id, --issuer-id, --bundle-id, as for 'iapctl "
                        + "apple') to ask Apple's Look Up Order ID, or run: iapctl apple lookup \(ShellWord.word(key))")
            }
            searched.append("receipt order ID (Apple's Look Up Order ID)")
            let transactions = try lookUp(invocation, orderId: key)
            matches += try DbOpen.read(invocation) { session in
                try CustomerLookup.resolve(receiptOrder: key, transactions: transactions, in: session)
            }
        }
        guard !matches.isEmpty else {
            throw CLIError(
                .notFound, "no customer with \(searchedText(searched)) \(key)",
                hint: "check the id against the ticket; list users' orders with: iapctl orders list --user USER")
        }
        return Found(matches: matches, searched: searched)
    }

    /// `user id, order number or transactionId`.
    static func searchedText(_ searched: [String]) -> String {
        guard searched.count > 1 else { return searched.first ?? "an id" }
        return searched.dropLast().joined(separator: ", ") + " or " + searched.last!
    }

    /// Apple's Look Up Order ID (order IDs exist in Production; `--environment` as for `apple lookup`):
    /// the transactions of the receipt's order, verified.
    static func lookUp(_ invocation: Invocation, orderId: String) throws -> [(transactionId: String, originalTransactionId: String?)] {
        let session = try AppleSession(invocation)
        let found = try AppleLookup.transactions(ofOrder: orderId, in: session)
        let reports = try session.verified(found.items, as: .transaction, from: found.server, what: "lookup \(orderId)")
        return reports.compactMap { report in
            guard let id = report.transaction?.transactionId else { return nil }
            return (id, report.transaction?.originalTransactionId)
        }
    }

    /// The one user of `found`; several: lists them (stdout) and throws the way to pick one (exit 1).
    static func one(_ found: Found, key: String, invocation: Invocation) throws -> CustomerLookup.Match {
        if found.matches.count == 1 { return found.matches[0] }
        invocation.emit(
            found.matches.map { match in
                var r = Record()
                r.append("user_id", match.userId)
                r.append("matched_as", match.kinds.map(\.rawValue).joined(separator: ", "))
                r.append("via", match.via.joined(separator: "; "))
                r.append("pick_with", "iapctl customer --by user \(ShellWord.word(match.userId))")
                return r
            },
            columns: [
                Column("user_id", title: "USER", important: true), Column("matched_as", title: "MATCHED AS"),
                Column("pick_with", title: "PICK WITH", keepWhole: true),
            ])
        throw CLIError(
            .failure, "\(key) leads to \(found.matches.count) users (listed above)",
            hint: "pick one with: iapctl customer --by user USER (or --by KIND to read \(key) as one kind of id)")
    }
}
