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
            (.environment, "environment"), (.nested(.signedTransactionInfo), "nested signedTransactionInfo"),
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
        for name in EnvironmentName.allCases {
            #expect(AppleEnvironment(rawValue: name.rawValue) == .known(name))
        }
        #expect(EnvironmentName.allCases.map(\.rawValue) == ["Production", "Sandbox", "Xcode", "LocalTesting"])
        #expect(AppleEnvironment(rawValue: "Staging") == .unknown("Staging"))
        #expect(AppleEnvironment(rawValue: "Staging").rawValue == "Staging")
        #expect(AppleEnvironment(rawValue: "Xcode").isUnsignedTesting && !AppleEnvironment(rawValue: "Sandbox").isUnsignedTesting)
        #expect(!AppleEnvironment(rawValue: "Staging").isUnsignedTesting)
    }

    @Test func receiptCodesShareTheFailureType() {
        #expect(VerificationFailure.Code.invalidContainer.isMalformed)
        #expect(!VerificationFailure.Code.missingCreationDate.isMalformed)
        #expect(VerificationFailure.Code.futureCreationDate.rawValue == "futureCreationDate")
    }

    @Test func appleValuesAreTypedAndKeepUnknownOnes() throws {
        #expect(NotificationType(rawValue: "DID_RENEW") == .known(.didRenew))
        #expect(NotificationType(rawValue: "SOME_FUTURE_TYPE") == .unknown("SOME_FUTURE_TYPE"))
        #expect(NotificationType(rawValue: "SOME_FUTURE_TYPE").rawValue == "SOME_FUTURE_TYPE")
        #expect(NotificationSubtype(rawValue: "VOLUNTARY") == .known(.voluntary))
        #expect(OwnershipType(rawValue: "FAMILY_SHARED") == .known(.familyShared))
        #expect(OfferType(rawValue: 4) == .known(.winBack) && OfferType(rawValue: 99) == .unknown(99))
        for name in NotificationTypeName.allCases {
            #expect(NotificationType(rawValue: name.rawValue).description == name.rawValue)
        }
        let model = try NotificationPayload(
            json: try JSONParser.parse(#"{"notificationType":"REFUND","subtype":"NEW_ONE","notificationUUID":"u"}"#))
        #expect(model.notificationType == .known(.refund))
        #expect(model.subtype == .unknown("NEW_ONE"))
    }
}
