import AppStoreAPI

/// `--days N`: 1 to 90 (``WriteRequest/extensionDays(_:)``).
struct ExtensionDays: OptionValue {
    let days: Int64

    init(optionText text: String) throws(OptionValueProblem) {
        do { days = try WriteRequest.extensionDays(text) } catch { throw OptionValueProblem(error.cliError) }
    }
}

/// `--consumption-percentage MILLI`: 0 to 100000 (``WriteRequest/consumptionPercentage(_:)``).
struct ConsumptionPercentage: OptionValue {
    let milli: Int64

    init(optionText text: String) throws(OptionValueProblem) {
        do { milli = try WriteRequest.consumptionPercentage(text) ?? 0 } catch { throw OptionValueProblem(error.cliError) }
    }
}

/// `--request-id UUID`, lowercased (``WriteRequest/requestIdentifier(_:)``).
struct RequestIdentifierText: OptionValue {
    let identifier: String

    init(optionText text: String) throws(OptionValueProblem) {
        do { identifier = try WriteRequest.requestIdentifier(text) ?? text } catch {
            throw OptionValueProblem(error.cliError)
        }
    }
}

/// `--token UUID` (``WriteRequest/appAccountToken(_:)``).
struct AppAccountToken: OptionValue {
    let token: String

    init(optionText text: String) throws(OptionValueProblem) {
        do { token = try WriteRequest.appAccountToken(text) } catch { throw OptionValueProblem(error.cliError) }
    }
}
