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

    @Test("eight bytes a step gives the byte-at-a-time result at every length and alignment")
    func slicedEqualsBytewise() {
        // The textbook bitwise CRC-32, one bit at a time: an independent reference.
        func reference(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            return crc ^ 0xFFFF_FFFF
        }
        var state: UInt32 = 12345
        let data = (0..<300).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        for start in 0..<9 {
            for end in stride(from: start, through: data.count, by: 7) {
                #expect(CRC32.checksum(Array(data[start..<end])) == reference(data[start..<end]))
            }
        }
    }
}
