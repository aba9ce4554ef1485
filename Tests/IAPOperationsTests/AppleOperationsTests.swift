import AppStoreJWS
import IAPOperations
import SubscriptionEngine
import Testing

@testable import AppStoreAPI

/// The `apple` commands' operations: verifying Apple's items, and the audit row of a write.
@Suite("Apple API operations")
struct AppleOperationsTests {
    @Test func theFirstItemThatDoesNotVerifyStopsItWithItsIndex() throws {
        let world = try World(.sqlite)
        let good = try world.lifecycle(0)
        #expect(try AppleItems.verified(good, as: .notification, with: world.verifier).count == 2)
        let forged = try RejectedItemsTests.forged(world)
        do {
            _ = try AppleItems.verified([good[0], forged, good[1]], as: .notification, with: world.verifier)
            Issue.record("a forged item verified")
        } catch {
            #expect(error.index == 1)
        }
    }

    @Test func theVerifierAcceptsOnlyTheEnvironmentOfTheServerThatAnswered() throws {
        let world = try World(.sqlite)
        let items = try world.lifecycle(0)  // signed in Sandbox
        let trust = TrustConfiguration(roots: [world.pki.rootDER], bundleId: World.bundleId, environments: ["Production"])
        let sandbox = try AppleItems.verifier(trust, for: .sandbox)
        #expect(try AppleItems.verified(items, as: .notification, with: sandbox).count == 2)

        #expect(throws: TrustConfigurationError.self, "Production needs the app's Apple id") {
            try AppleItems.verifier(trust, for: .production)
        }
        var withAppId = trust
        withAppId.appAppleId = 1_234
        let production = try AppleItems.verifier(withAppId, for: .production)
        #expect(throws: AppleItems.Unverified.self, "a Sandbox item from Production") {
            try AppleItems.verified(items, as: .notification, with: production)
        }
    }

    @Test func aWriteNamingNoTransactionGoesToOneServer() {
        #expect(AppleWrite.server(for: .auto) == .production)
        #expect(AppleWrite.server(for: .sandbox) == .sandbox)
    }

    @Test(arguments: Backend.available)
    func aWriteRecordsTheExactRequestAndApplesAnswerOrRefusal(_ backend: Backend) throws {
        let world = try World(backend)
        let write = AppleWrite.extend(
            original: "orig-7", days: 7, reasonCode: 3, requestIdentifier: nil, reason: "outage", ticket: "INC-9")
        let again = AppleWrite.extend(
            original: "orig-7", days: 7, reasonCode: 3, requestIdentifier: nil, reason: "outage", ticket: "INC-9")
        #expect(write.call.bodyText == again.call.bodyText, "the derived request id is stable")
        #expect(write.call.bodyText?.contains(#""extendByDays":7"#) == true)

        let answer = APIAnswer(server: .sandbox, status: 200, json: .object([("success", .bool(true))]))
        let ok = try write.record(
            .success(answer), environment: .auto, in: world.store, actor: "tester", reason: "outage", ticket: "INC-9", at: 5)
        var refusal = AppStoreAPIError(.notFound, "unknown id")
        refusal.httpStatus = 404
        refusal.appleCode = 4_040_010
        let refused = try write.record(
            .failure(refusal), environment: .production, in: world.store, actor: "tester", reason: nil, ticket: nil)

        let rows = try world.store.read { session in
            (try session.auditEntry(id: ok), try session.auditEntry(id: refused))
        }
        let first = try #require(rows.0)
        #expect(first.command == "apple extend" && first.entity == .contract && first.key == "orig-7")
        #expect(first.at == 5 && first.reason == "outage" && first.ticket == "INC-9" && first.before == nil)
        #expect(
            first.after?.hasPrefix(
                #"{"apple_request":{"method":"PUT","path":"/inApps/v1/subscriptions/extend/orig-7","environment":"Sandbox""#) == true)
        #expect(first.after?.hasSuffix(#""apple_response":{"status":200,"body":{"success":true}}}"#) == true)
        let second = try #require(rows.1)
        #expect(second.after?.contains(#""environment":"production""#) == true, "no server answered: the one asked")
        #expect(
            second.after?.hasSuffix(#""apple_response":{"status":404,"errorCode":4040010,"errorMessage":"unknown id"}}"#)
                == true)
    }
}
