import Testing

@Test func placeholder_AppStoreJWSTests() { #expect(Bool(true)) }
