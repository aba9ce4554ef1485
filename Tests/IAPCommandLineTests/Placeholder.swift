import Testing

@Test func placeholder_IAPCommandLineTests() { #expect(Bool(true)) }
