import AppStoreAPI
import AppleFlows
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `restore --apply --policy transfer-if-inactive` with the Apple API settings (`--key-file`,
/// `--key-id`, `--issuer-id`, and the trust options' `--bundle-id`): before a restored transaction
/// owned by another user is decided, a contract that lapsed (paid until a past date, nothing from
/// Apple since) is reconciled with Apple, as `apple reconcile --contract ID --apply` does. The policy
/// then decides on what Apple said: still active, the transfer is refused; expired, it goes through.
/// Without the settings (or when Apple cannot be asked) the lapsed contract stays unknown and the
/// transfer is refused with the reconcile command to run.
final class RestoreAsksApple {
    let invocation: Invocation
    let store: any Store
    let user: String
    let explicitOrder: String?
    let service: RestoreService
    let reason: String?
    /// Contracts already asked about in this run.
    private var asked = Set<String>()
    private var session: AppleSession?

    init(
        _ invocation: Invocation, store: any Store, user: String, explicitOrder: String?, service: RestoreService,
        reason: String?
    ) {
        self.invocation = invocation
        self.store = store
        self.user = user
        self.explicitOrder = explicitOrder
        self.service = service
        self.reason = reason
    }

    /// Whether the Apple API settings are given: a key file (the key id and issuer are then required).
    static func isConfigured(_ invocation: Invocation) -> Bool {
        invocation[AppleCommands.keyFileOption] != nil
    }

    /// The server(s) to ask for the accepted environments of the trust options: both accepted is
    /// Production, then Sandbox (`auto`); only Sandbox is Sandbox; otherwise Production.
    static func apiEnvironment(_ accepted: [EnvironmentName]) -> APIEnvironment {
        let production = accepted.contains(.production)
        let sandbox = accepted.contains(.sandbox)
        if production && sandbox { return .auto }
        return sandbox ? .sandbox : .production
    }

    /// Asks Apple about the lapsed contract of each of `restored` that belongs to another user.
    func check(_ restored: [TransactionFacts]) throws {
        for tx in restored {
            let found = try store.read { try service.lookup(tx, user: user, explicitOrder: explicitOrder, in: $0) }
            guard found.verdict == .ownedByOther, let id = found.contractId, let status = found.contractStatus,
                let lapse = Lapse.of(status: status, expiresDate: found.contractExpires, at: service.now()),
                asked.insert(id).inserted
            else { continue }
            try reconcile(id, lapse: lapse)
        }
    }

    /// `apple reconcile --contract ID --apply` for one contract. Settings that do not work (no key
    /// id, an unreadable key) stop the run (exit 78); a failure of Apple's answer is told as a warning
    /// and leaves the contract lapsed (the transfer is then refused).
    private func reconcile(_ id: String, lapse: Lapse) throws {
        let session: AppleSession
        if let made = self.session {
            session = made
        } else {
            session = try AppleSession(invocation, environment: Self.apiEnvironment(invocation[CommandTree.environmentOption]))
            self.session = session
        }
        do {
            let reconcile = AppleReconcile(
                store: store, source: AppleReconcileCommand.APISource(session: session, store: store),
                verifier: { try session.verifier(for: $0) },
                context: EngineContext(actor: invocation.actor, command: "restore --apply (apple reconcile)", reason: reason),
                apply: true, engine: service.engine)
            let plan = try reconcile.plan(.contract(id))
            for original in plan.originals {
                let result = try reconcile.reconcile(original)
                let said: String
                if result.changed {
                    said = "changes applied, the database agrees with Apple"
                } else if result.agrees {
                    said = "Apple agrees with the database"
                } else {
                    said = "nothing applied (see `iapctl apple reconcile --contract \(ShellWord.word(id))`)"
                }
                invocation.note("contract \(id) \(lapse.text): asked Apple before deciding the transfer: \(said)")
            }
        } catch {
            let message: String
            if let error = error as? CLIError {
                message = error.message
            } else if let error = error as? any CLIErrorConvertible {
                message = error.cliError.message
            } else {
                message = "\(error)"
            }
            invocation.warn(
                "contract \(id) \(lapse.text): could not ask Apple (\(message)); the transfer is refused until "
                    + "`iapctl apple reconcile --contract \(ShellWord.word(id))` runs")
        }
    }
}
