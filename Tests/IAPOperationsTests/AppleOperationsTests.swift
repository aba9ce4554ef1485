import AppStoreJWS
import AppleFlows
import ClientSubmissions
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import SubscriptionModel
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

    @Test func eachSubscriptionStatusGetsItsOwnVerifiedRenewalInfo() throws {
        let world = try World(.sqlite)
        let tx1 = try world.pki.sign(payload: world.transaction("1000", original: "orig-1").json)
        let tx2 = try world.pki.sign(payload: world.transaction("2000", original: "orig-2").json)
        let tx3 = try world.pki.sign(payload: world.transaction("3000", original: "orig-3").json)
        func renewal(_ original: String) throws -> String {
            try world.pki.sign(
                payload: JWSForge.RenewalInfoPayload(
                    originalTransactionId: original, autoRenewProductId: World.product, productId: World.product,
                    signedDate: World.t0, environment: "Sandbox", renewalDate: World.t0 + World.day
                ).json)
        }
        let answer = try JSONText.parse(
            #"{"data":[{"subscriptionGroupIdentifier":"g","lastTransactions":["#
                + #"{"status":1,"originalTransactionId":"orig-1","signedTransactionInfo":"\#(tx1)"},"#
                + #"{"status":2,"originalTransactionId":"orig-2","signedTransactionInfo":"\#(tx2)","signedRenewalInfo":"\#(try renewal("orig-2"))"},"#
                + #"{"status":1,"originalTransactionId":"orig-3","signedTransactionInfo":"\#(tx3)","signedRenewalInfo":"\#(try renewal("orig-3"))"}]}]}"#
        )
        let call = Endpoint.subscriptionStatuses("orig-1", statuses: [])
        let items = try SubscriptionStatusItem.items(APIAnswer(server: .sandbox, status: 200, json: answer), call: call)
        let verified = try AppleItems.verified(items, with: world.verifier)
        #expect(verified.map { $0.transaction.transaction?.transactionId } == ["1000", "2000", "3000"])
        #expect(verified.map { $0.renewal?.renewalInfo?.originalTransactionId } == [nil, "orig-2", "orig-3"])

        var forgedRenewal = items
        forgedRenewal[2].renewal = try RejectedItemsTests.forged(world)
        do {
            _ = try AppleItems.verified(forgedRenewal, with: world.verifier)
            Issue.record("a forged renewal info verified")
        } catch {
            #expect(error.isRenewalInfo && error.unverified.index == 1)
        }
        var forgedTransaction = forgedRenewal
        forgedTransaction[1].transaction = try RejectedItemsTests.forged(world)
        do {
            _ = try AppleItems.verified(forgedTransaction, with: world.verifier)
            Issue.record("a forged transaction verified")
        } catch {
            #expect(!error.isRenewalInfo && error.unverified.index == 1, "transactions are verified first")
        }
    }

    @Test func aWriteNamingNoTransactionGoesToOneServer() {
        #expect(AppleWrite.server(for: .auto) == .production)
        #expect(AppleWrite.server(for: .sandbox) == .sandbox)
    }

    /// Answers every request with `status` and `body`, counting them.
    final class FixedTransport: HTTPTransport {
        let response: HTTPResponse
        var sent: [HTTPRequest] = []
        init(_ status: Int, _ body: String) { response = HTTPResponse(status: status, body: Array(body.utf8)) }
        func send(_ request: HTTPRequest) throws(AppStoreAPIError) -> HTTPResponse {
            sent.append(request)
            return response
        }
    }

    static func client(_ world: World, _ transport: FixedTransport) throws -> AppStoreServerAPI {
        let key = try APIKey(pem: Array(try world.pki.leafPrivateKeyPEM().utf8), keyId: "K")
        let tokens = TokenIssuer(key: key, issuerId: "i", bundleId: World.bundleId) { 1_700_000_000 }
        return AppStoreServerAPI(tokens: tokens, transport: transport, nowMs: { 0 }, sleepMs: { _ in })
    }

    @Test func performingAWriteRecordsApplesAnswerOrItsRefusalBeforeReturningIt() throws {
        let world = try World(.sqlite)
        let write = AppleWrite.setAppAccountToken(original: "orig-1", token: "7389A31A-FB6D-4569-A2A6-DB7D85D84813")

        let accepted = FixedTransport(200, "{}")
        let done = try write.perform(
            try Self.client(world, accepted), .auto, store: world.store, actor: "tester", reason: "web", ticket: nil)
        #expect(accepted.sent.count == 1 && (try? done.result.get().server) == .production)
        let row = try #require(try world.store.read { try $0.auditEntry(id: done.auditId) })
        #expect(row.command == "apple set-app-account-token" && row.reason == "web" && row.key == "orig-1")
        #expect(row.after?.hasSuffix(#""apple_response":{"status":200,"body":{}}}"#) == true)

        for (environment, sandboxAsked) in [(APIEnvironment.production, false), (.auto, true), (.sandbox, true)] {
            let refusing = FixedTransport(401, #"{"errorCode":4010000,"errorMessage":"Unauthorized"}"#)
            var heard: [Bool] = []
            let outcome = try write.perform(
                try Self.client(world, refusing), environment, store: world.store, actor: "tester", reason: nil, ticket: nil
            ) { error, sandboxTried in
                heard.append(sandboxTried)
                var error = error
                error.hint = "explained"
                return error
            }
            #expect(heard == [sandboxAsked], "\(environment)")
            guard case .failure(let error) = outcome.result else {
                Issue.record("a 401 was not a refusal")
                continue
            }
            #expect(error.kind == .unauthorized && error.hint == "explained")
            let refused = try #require(try world.store.read { try $0.auditEntry(id: outcome.auditId) })
            #expect(refused.after?.contains(#""status":401,"errorCode":4010000"#) == true)
        }
    }

    @Test(arguments: Backend.available)
    func aWriteRecordsTheExactRequestAndApplesAnswerOrRefusal(_ backend: Backend) throws {
        let world = try World(backend)
        let write = AppleWrite.extend(original: "orig-7", days: 7, reasonCode: 3, requestIdentifier: nil)
        let again = AppleWrite.extend(original: "orig-7", days: 7, reasonCode: 3, requestIdentifier: nil)
        let id = try #require(write.requestIdentifier)
        #expect(RequestIdentifier.isUUID(id))
        #expect(again.requestIdentifier != id, "the same extension asked for again is another write")
        let repeated = AppleWrite.extend(original: "orig-7", days: 7, reasonCode: 3, requestIdentifier: id)
        #expect(repeated.call.bodyText == write.call.bodyText, "a given request id repeats that very write")
        let mass = AppleWrite.massExtend(product: "p", days: 3, reasonCode: 1, storefronts: [], requestIdentifier: nil)
        #expect(mass.requestIdentifier.map(RequestIdentifier.isUUID) == true && mass.requestIdentifier != id)
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
