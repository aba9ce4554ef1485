import AppStoreAPI
import AppStoreJWS
import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

// The program's enumerations read as typed option values (`Option<OrderStatus?>`): their raw
// values are the options' allowed values, so the parser has already checked the spelling.

extension OrderStatus: OptionValue {}
extension ContractStatus: OptionValue {}
extension EnvironmentName: OptionValue {}
extension RestorePolicy: OptionValue {}
extension RenewalRisk.Kind: OptionValue {}
extension CommandTree.Switch: OptionValue {}
extension APIEnvironment: OptionValue {
    /// As `--environment` spells it: Apple's names of the servers (Production, Sandbox, as `notify`'s and
    /// `verify`'s `--environment` and Apple's payloads spell them), and auto. Any case is accepted.
    var spelling: String {
        switch self {
        case .production: APIServer.production.rawValue
        case .sandbox: APIServer.sandbox.rawValue
        case .auto: "auto"
        }
    }

    public init(optionText text: String) throws(OptionValueProblem) {
        guard let value = Self.allCases.first(where: { $0.spelling.lowercased() == text.lowercased() }) else {
            throw OptionValueProblem("'\(text)' is not a server (Production, Sandbox or auto)")
        }
        self = value
    }
}
extension AppleChoices.DeliveryStatus: OptionValue {}

extension OptionValueProblem {
    /// The problem a refusal of another module words as a usage error (its message names the option).
    init(_ error: CLIError) { self.init(error.message, hint: error.hint, naming: .none) }
}
