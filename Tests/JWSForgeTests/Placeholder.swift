import Testing

@Test func placeholder_JWSForgeTests() { #expect(Bool(true)) }
