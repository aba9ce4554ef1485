import Testing

@testable import StoreSQL

@Suite("CRC-32 of the packed ledger")
struct CRC32Tests {
    @Test("matches the standard check values (IEEE 802.3, as zip and PNG)")
    func standardCheckValues() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        #expect(CRC32.checksum([UInt8](repeating: 0, count: 32)) == 0x190A_55AD)
    }

    @Test("a flipped bit anywhere changes it")
    func flippedBitChangesIt() {
        let text = Array(#"{"notificationType":"DID_RENEW","signedDate":1700000000000}"#.utf8)
        let expected = CRC32.checksum(text)
        for index in text.indices {
            for bit in 0..<8 {
                var copy = text
                copy[index] ^= UInt8(1 << bit)
                #expect(CRC32.checksum(copy) != expected)
            }
        }
    }
}
