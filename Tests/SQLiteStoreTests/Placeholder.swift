import Testing

@Test func placeholder_SQLiteStoreTests() { #expect(Bool(true)) }
