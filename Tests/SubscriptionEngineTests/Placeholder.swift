import Testing

@Test func placeholder_SubscriptionEngineTests() { #expect(Bool(true)) }
