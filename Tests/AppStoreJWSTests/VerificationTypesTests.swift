import Testing

@testable import AppStoreJWS

@Suite("Typed check names, outcome and environments")
struct VerificationTypesTests {
    @Test func checkNamesPrintAsBefore() {
        let printed: [(CheckName, String)] = [
            (.format, "format"), (.algorithm, "algorithm"), (.x5c, "x5c"), (.chain, "chain"), (.leafOID, "leaf OID"),
            (.intermediateOID, "intermediate OID"), (.leafKey, "leaf key"), (.validity, "validity"),
            (.signature, "signature"), (.signedDate, "signed date"), (.creationDate, "creation date"),
            (.payload, "payload"), (.kind, "kind"), (.bundleId, "bundle id"), (.appId, "app id"),
            (.environment, "environment"), (.nested("signedTransactionInfo"), "nested signedTransactionInfo"),
        ]
        for (name, text) in printed { #expect(name.description == text) }
        #expect(Set(printed.map(\.1)).count == printed.count)
    }

    @Test func outcomeDecidesFailureAndValidity() {
        var report = VerificationReport()
        #expect(report.isValid && report.failure == nil)
        report.pass(.format, "ok")
        report.fail(.chain, .untrustedChain, "not trusted", detail: "why")
        #expect(!report.isValid)
        #expect(report.outcome == .refused(VerificationFailure(.untrustedChain, "not trusted")))
        #expect(report.check(.chain)?.detail == "why")
        #expect(report.check("chain")?.status == .failed)
        #expect(report.check(.signature) == nil)
    }

    @Test func environmentsKeepUnknownValues() {
        for environment in AppleEnvironment.known {
            #expect(AppleEnvironment(rawValue: environment.rawValue) == environment)
        }
        #expect(AppleEnvironment.known.map(\.rawValue) == ["Production", "Sandbox", "Xcode", "LocalTesting"])
        #expect(AppleEnvironment(rawValue: "Staging") == .unknown("Staging"))
        #expect(AppleEnvironment(rawValue: "Staging").rawValue == "Staging")
        #expect(AppleEnvironment.xcode.isUnsignedTesting && !AppleEnvironment.sandbox.isUnsignedTesting)
    }

    @Test func receiptCodesShareTheFailureType() {
        #expect(VerificationFailure.Code.invalidContainer.isMalformed)
        #expect(!VerificationFailure.Code.missingCreationDate.isMalformed)
        #expect(VerificationFailure.Code.futureCreationDate.rawValue == "futureCreationDate")
    }
}
