import Testing

@testable import AppStoreReceipt

/// Telling a base64 receipt from other text: blanks anywhere are ignored, and the text must start
/// "MI" (a DER SEQUENCE with a long length) once they are.
@Suite("Base64 receipt recognition")
struct ReceiptInputTests {
    @Test func aReceiptIsFoundWithBlanksAnywhereIncludingBeforeAndInsideItsFirstCharacters() throws {
        let text = try FixtureFiles.text("revenuecat-sandbox-receipt.b64")
        let der = try #require(ReceiptInput.der(fromBase64: text))
        #expect(ReceiptInput.looksLikeDER(der))
        let compact = String(text.filter { !$0.isWhitespace })
        let spaced = " \n\t\r\n" + "M \n I" + compact.dropFirst(2).split(by: 76).joined(separator: "\r\n") + "\n"
        #expect(ReceiptInput.der(fromBase64: spaced) == der)
    }

    @Test(arguments: [
        "", "M", "MI", "  MI\n", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA", "IM" + String(repeating: "A", count: 40),
        "mi" + String(repeating: "A", count: 40), "MJ" + String(repeating: "A", count: 40),
    ])
    func otherTextIsNotAReceipt(text: String) {
        #expect(ReceiptInput.der(fromBase64: text) == nil)
    }
}

extension Collection {
    fileprivate func split(by length: Int) -> [SubSequence] {
        stride(from: 0, to: count, by: length).map { offset in
            let start = index(startIndex, offsetBy: offset)
            return self[start..<(index(start, offsetBy: length, limitedBy: endIndex) ?? endIndex)]
        }
    }
}
