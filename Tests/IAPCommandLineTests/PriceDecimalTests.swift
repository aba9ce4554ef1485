import Testing

@testable import IAPCommandLine

/// `price_decimal`: Apple's price in thousandths of the currency unit as an exact decimal text.
@Suite struct PriceDecimalTests {
    @Test func thousandthsBecomeAnExactDecimal() {
        #expect(RowRendering.priceDecimal(9990) == "9.99")
        #expect(RowRendering.priceDecimal(1000) == "1.00")
        #expect(RowRendering.priceDecimal(1234) == "1.234")
        #expect(RowRendering.priceDecimal(5) == "0.005")
        #expect(RowRendering.priceDecimal(0) == "0.00")
        #expect(RowRendering.priceDecimal(-500) == "-0.50")
        #expect(RowRendering.priceDecimal(120_000_000) == "120000.00")
    }
}
