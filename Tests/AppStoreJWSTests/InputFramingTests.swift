import AppStoreJWS
import Testing

@Suite("Input framing")
struct InputFramingTests {
    @Test func rawAndWebhookBody() throws {
        #expect(try WebhookBody.jwsTokens(in: "  a.b.c \n") == ["a.b.c"])
        #expect(try WebhookBody.jwsTokens(in: #"{"signedPayload":"x.y.z"}"#) == ["x.y.z"])
        #expect(try WebhookBody.jwsTokens(in: #""x.y.z""#) == ["x.y.z"])
        #expect(try WebhookBody.jwsTokens(in: "   ") == [])
        #expect(try WebhookBody.jwsTokens(in: #"{"signedTransactionInfo":"t.t.t"}"#) == ["t.t.t"])
    }

    @Test func severalFromAPIResponses() throws {
        #expect(try WebhookBody.jwsTokens(in: #"{"signedTransactions":["a.a.a","b.b.b"],"hasMore":false}"#) == ["a.a.a", "b.b.b"])
        #expect(
            try WebhookBody.jwsTokens(
                in: #"{"notificationHistory":[{"signedPayload":"1.1.1","sendAttemptResult":"SUCCESS"},{"signedPayload":"2.2.2"}]}"#)
                == ["1.1.1", "2.2.2"])
    }

    @Test func malformedJSONShapes() {
        let cases = [
            #"{"signedPayload":1}"#, #"{"other":"x"}"#, #"{"signedTransactions":"a"}"#, #"{"signedTransactions":[1]}"#,
            #"{"notificationHistory":[{}]}"#, "{not json", #"{"signedPayload":"a","signedPayload":"b"}"#,
        ]
        for text in cases {
            do {
                _ = try WebhookBody.jwsTokens(in: text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code.isMalformed)
            }
        }
    }

    @Test func itemsPerLineAndPrettyDocument() {
        let items = WebhookBody.items(in: "a.b.c\n\n{\"signedPayload\":\"d.e.f\"}\n{bad\n")
        #expect(items.count == 3)
        #expect(items[0] == .init(line: 1, result: .success("a.b.c")))
        #expect(items[1] == .init(line: 3, result: .success("d.e.f")))
        #expect(items[2].line == 4)
        if case .failure(let error) = items[2].result { #expect(error.code == .invalidJSON) } else { Issue.record("not a failure") }
        let pretty = WebhookBody.items(in: "{\n  \"signedTransactions\": [\n    \"a.a.a\",\n    \"b.b.b\"\n  ]\n}\n")
        #expect(pretty.map(\.result) == [.success("a.a.a"), .success("b.b.b")])
    }

    @Test func realWebhookBodyVerifies() throws {
        let jws = try FixtureFiles.text("real/25-genius-test.jws")
        let tokens = try WebhookBody.jwsTokens(in: "{\"signedPayload\": \"\(jws)\"}")
        let verifier = try AppStoreVerifier(configuration: TrustConfiguration(bundleId: "GeniusParentingAI", environments: ["Sandbox"]))
        #expect(verifier.verify(tokens[0]).isValid)
    }
}
