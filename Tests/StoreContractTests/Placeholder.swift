import Testing

@Test func placeholder_StoreContractTests() { #expect(Bool(true)) }
