/// The app checks both verifiers (JWS and StoreKit 1 receipt) make against their configuration:
/// the bundle id, then the environment. Each input names its own fields in the messages.
package enum AppIdentityCheck {
    /// Bundle id: skipped when none is configured; `missing` says the input carries none.
    package static func bundleId<Report: CheckedReport>(
        _ found: String?, expected: String?, missing: String, into report: inout Report
    ) -> Bool {
        guard let expected else {
            report.skip(.bundleId, "no bundle id configured")
            return true
        }
        guard let found else {
            report.fail(.bundleId, .invalidAppIdentifier, "\(missing); expected \"\(expected)\"")
            return false
        }
        guard found == expected else {
            report.fail(.bundleId, .invalidAppIdentifier, "bundle id \"\(found.prefix(200))\" is not the configured \"\(expected)\"")
            return false
        }
        report.pass(.bundleId, found)
        return true
    }

    /// How an input states its environment.
    package struct Environment {
        /// The environment (`Production`, `Sandbox`, `Xcode`…), nil when the input states none.
        package var value: String?
        /// Shown when any environment is accepted (the raw field, or what is missing).
        package var unchecked: String
        /// The failure message when the input states none.
        package var missing: String
        /// `environment "X"` or `receipt type "T" (X)`, for a refused one.
        package var subject: (String) -> String
        /// The detail of a passed check.
        package var passed: (String) -> String

        package init(
            value: String?, unchecked: String, missing: String, subject: @escaping (String) -> String,
            passed: @escaping (String) -> String = { $0 }
        ) {
            self.value = value
            self.unchecked = unchecked
            self.missing = missing
            self.subject = subject
            self.passed = passed
        }
    }

    /// Environment: any when `accepted` is empty (reported as skipped), else it must be one of them.
    package static func environment<Report: CheckedReport>(
        _ stated: Environment, accepted: Set<String>, into report: inout Report
    ) -> Bool {
        if accepted.isEmpty {
            report.skip(.environment, "any environment accepted (\(stated.unchecked))")
            return true
        }
        guard let environment = stated.value else {
            report.fail(.environment, .invalidEnvironment, stated.missing)
            return false
        }
        guard accepted.contains(environment) else {
            report.fail(
                .environment, .invalidEnvironment,
                "\(stated.subject(environment)) is not accepted (accepted: \(accepted.sorted().joined(separator: ", ")))")
            return false
        }
        report.pass(.environment, stated.passed(environment))
        return true
    }
}
