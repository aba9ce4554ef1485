import AppStoreJWS
import Testing

/// Payload models over Fixtures/models (every field Apple defines) and type errors.
@Suite("Payload models")
struct ModelTests {
    static func json(_ file: String) throws -> JSONValue {
        try JSONParser.parse(FixtureFiles.bytes("models/" + file))
    }

    @Test func notificationWithData() throws {
        let model = try AppStoreJWS.NotificationPayload(json: try Self.json("signedNotification.json"))
        #expect(model.notificationType?.rawValue == "SUBSCRIBED")
        #expect(model.subtype?.rawValue == "INITIAL_BUY")
        #expect(model.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(model.version == "2.0")
        #expect(model.signedDate == 1698148900000)
        let data = try #require(model.data)
        #expect(data.environment == "LocalTesting")
        #expect(data.appAppleId == 41234)
        #expect(data.bundleVersion == "1.2.3")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.status == 1)
        #expect(model.appIdentity?.bundleId == "com.example")
    }

    @Test func notificationWithSummaryTokenAndAppData() throws {
        let summary = try AppStoreJWS.NotificationPayload(json: try Self.json("signedSummaryNotification.json"))
        #expect(summary.summary?.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.summary?.failedCount == 2)
        #expect(summary.appIdentity?.environment == "LocalTesting")

        let token = try AppStoreJWS.NotificationPayload(json: try Self.json("signedExternalPurchaseTokenNotification.json"))
        #expect(token.externalPurchaseToken?.tokenCreationDate == 1698148950000)
        #expect(token.externalPurchaseToken?.environment == "Production")
        let sandboxToken = try AppStoreJWS.NotificationPayload(json: try Self.json("signedExternalPurchaseTokenSandboxNotification.json"))
        #expect(sandboxToken.appIdentity?.environment == "Sandbox")

        let rescind = try AppStoreJWS.NotificationPayload(json: try Self.json("signedRescindConsentNotification.json"))
        #expect(rescind.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
        #expect(rescind.appIdentity?.appAppleId == 41234)

        let consumption = try AppStoreJWS.NotificationPayload(json: try Self.json("signedConsumptionRequestNotification.json"))
        #expect(consumption.data?.consumptionRequestReason != nil)
    }

    @Test func transactionAllFields() throws {
        let tx = try TransactionPayload(json: try Self.json("signedTransaction.json"))
        #expect(tx.transactionId == "23456")
        #expect(tx.originalTransactionId == "12345")
        #expect(tx.webOrderLineItemId == "34343")
        #expect(tx.subscriptionGroupIdentifier == "55555")
        #expect(tx.purchaseDate == 1698148900000)
        #expect(tx.expiresDate == 1698149000000)
        #expect(tx.quantity == 1)
        #expect(tx.type?.rawValue == "Auto-Renewable Subscription")
        #expect(tx.inAppOwnershipType?.rawValue == "PURCHASED")
        #expect(tx.revocationReason == 1)
        #expect(tx.isUpgraded == true)
        #expect(tx.offerType == 1)
        #expect(tx.storefront == "USA")
        #expect(tx.price == 10990)
        #expect(tx.offerDiscountType == "PAY_AS_YOU_GO")
        #expect(tx.offerPeriod == "P1Y")
        #expect(tx.billingPlanType == "MONTHLY")
        #expect(tx.commitmentInfo?.commitmentPrice == 119880)
        #expect(tx.commitmentInfo?.billingPeriodNumber == 3)
        #expect(tx.advancedCommerceInfo?["items"]?.arrayValue?.count == 1)
        let revoked = try TransactionPayload(json: try Self.json("signedTransactionWithRevocation.json"))
        #expect(revoked.revocationDate != nil)
        #expect(revoked.revocationType != nil)
        #expect(revoked.revocationPercentage != nil)
    }

    @Test func renewalInfoAllFields() throws {
        let info = try AppStoreJWS.RenewalInfoPayload(json: try Self.json("signedRenewalInfo.json"))
        #expect(info.expirationIntent == 1)
        #expect(info.autoRenewStatus == 1)
        #expect(info.isInBillingRetryPeriod == true)
        #expect(info.priceIncreaseStatus == 0)
        #expect(info.gracePeriodExpiresDate == 1698148900000)
        #expect(info.renewalPrice == 9990)
        #expect(info.appTransactionId == "71134")
        #expect(info.commitmentInfo?.commitmentAutoRenewStatus == 1)
        #expect(info.advancedCommerceInfo?["consistencyToken"] == .string("token-abc-123"))
    }

    @Test func unknownFieldsAndValuesSurvive() throws {
        let json = try JSONParser.parse(
            #"{"transactionId":"1","type":"Future Type","inAppOwnershipType":"NEW","offerType":99,"brandNewField":{"x":[1]}}"#)
        let tx = try TransactionPayload(json: json)
        #expect(tx.type?.rawValue == "Future Type")
        #expect(tx.inAppOwnershipType?.rawValue == "NEW")
        #expect(tx.offerType == 99)
        #expect(tx.json["brandNewField"]?["x"] == .array([.int(1)]))
    }

    @Test func emptyAppAccountTokenIsNil() throws {
        let tx = try TransactionPayload(json: try JSONParser.parse(#"{"transactionId":"1","appAccountToken":""}"#))
        #expect(tx.appAccountToken == nil)
        let info = try AppStoreJWS.RenewalInfoPayload(json: try JSONParser.parse(#"{"autoRenewStatus":1,"appAccountToken":""}"#))
        #expect(info.appAccountToken == nil)
    }

    @Test func fractionalDatesAndNulls() throws {
        let tx = try TransactionPayload(
            json: try JSONParser.parse(#"{"purchaseDate":1697679936049.7297,"expiresDate":null,"quantity":1.0}"#))
        #expect(tx.purchaseDate == 1697679936049)
        #expect(tx.expiresDate == nil)
        #expect(tx.quantity == 1)
    }

    @Test(arguments: [
        (#"{"transactionId":23456}"#, "transactionId"),
        (#"{"purchaseDate":"2024-01-01"}"#, "purchaseDate"),
        (#"{"quantity":1.5}"#, "quantity"),
        (#"{"quantity":4294967296}"#, "quantity"),
        (#"{"isUpgraded":"true"}"#, "isUpgraded"),
        (#"{"commitmentInfo":{"commitmentPrice":"12"}}"#, "commitmentInfo.commitmentPrice"),
        (#"{"commitmentInfo":[1]}"#, "commitmentInfo"),
        (#"{"advancedCommerceInfo":"x"}"#, "advancedCommerceInfo"),
    ])
    func wrongTypesNameTheField(_ text: String, _ field: String) throws {
        let json = try JSONParser.parse(text)
        do throws(VerificationFailure) {
            _ = try TransactionPayload(json: json)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .invalidPayload)
            #expect(error.code.isMalformed)
            #expect(error.message.contains("payload field \(field) "), "\(error.message)")
        }
    }

    @Test func nestedObjectTypeErrorsNamePath() throws {
        let first = try JSONParser.parse(#"{"notificationType":"X","data":{"appAppleId":"1"}}"#)
        do throws(VerificationFailure) {
            _ = try AppStoreJWS.NotificationPayload(json: first)
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("data.appAppleId"))
        }
        let second = try JSONParser.parse(#"{"summary":{"storefrontCountryCodes":["A",1]}}"#)
        do throws(VerificationFailure) {
            _ = try AppStoreJWS.NotificationPayload(json: second)
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("summary.storefrontCountryCodes"))
        }
    }
}
