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
extension CommandTree.Switch: OptionValue {}
extension APIEnvironment: OptionValue {}
extension AppleChoices.DeliveryStatus: OptionValue {}

extension OptionValueProblem {
    /// The problem a refusal of another module words as a usage error (its message names the option).
    init(_ error: CLIError) { self.init(error.message, hint: error.hint, naming: .none) }
}
