import Testing

@testable import StoreSQL

@Suite("Ledger codecs: zstd (written) and the legacy LZ stream and CRC-32 (read only)")
struct LedgerCodecTests {
    @Test("zstd with the preset dictionary round trips, and a damaged frame is refused")
    func zstdRoundTripAndDamage() throws {
        let ops = Array(
            (#"{"notificationType":"DID_RENEW","data":{"bundleId":"com.example.app"},"signedDate":1700000000000}"#
                + String(repeating: "x", count: 300)).utf8)
        let frame = try #require(ZstdCodec.compress(ops))
        #expect(frame.count < ops.count / 2, "\(frame.count) bytes for \(ops.count)")
        #expect(try ZstdCodec.decompress(frame[...]) == ops)
        #expect(try ZstdCodec.decompress(try #require(ZstdCodec.compress([]))[...]) == [])
        // Any flipped byte after the frame header fails the frame's checksum or its decoding.
        for index in 6..<frame.count {
            var damaged = frame
            damaged[index] ^= 0x20
            #expect(throws: LedgerPacking.UnpackError.self) { _ = try ZstdCodec.decompress(damaged[...]) }
        }
        #expect(throws: LedgerPacking.UnpackError.self) { _ = try ZstdCodec.decompress(frame.dropLast(5)) }
        #expect(throws: LedgerPacking.UnpackError.self) { _ = try ZstdCodec.decompress([1, 2, 3, 4, 5, 6, 7, 8]) }
    }

    @Test("the legacy CRC-32 gives the standard check values (IEEE 802.3, as zip and PNG)")
    func crcCheckValues() throws {
        #expect(try LegacyLedgerFormat.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(try LegacyLedgerFormat.crc32([]) == 0)
        #expect(try LegacyLedgerFormat.crc32(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        #expect(try LegacyLedgerFormat.crc32([UInt8](repeating: 0, count: 32)) == 0x190A_55AD)
    }

    @Test("the legacy LZ decoder: literals, matches into the dictionary and overlapping runs")
    func legacyStreams() {
        let dictionary = Array("abcd".utf8)
        // One literal sequence: token L=3, M=0, then "xyz".
        #expect(LegacyLedgerFormat.decompress([0x30, 0x78, 0x79, 0x7A], dictionary: dictionary, count: 3) == Array("xyz".utf8))
        // A match of 4 (M=0) at distance 4 copies the dictionary; then a literal "!".
        #expect(
            LegacyLedgerFormat.decompress([0x00, 0x04, 0x10, 0x21], dictionary: dictionary, count: 5)
                == Array("abcd!".utf8))
        // Literal "a" then a match of 5 at distance 1: a run overlapping its own output.
        #expect(
            LegacyLedgerFormat.decompress([0x11, 0x61, 0x01], dictionary: [], count: 6) == Array("aaaaaa".utf8))
        #expect(LegacyLedgerFormat.decompress([], dictionary: dictionary, count: 0) == [])
    }

    @Test("the legacy LZ decoder refuses what is not exactly a stream of the told length")
    func legacyStreamsRefused() {
        let dictionary = Array("abcd".utf8)
        #expect(LegacyLedgerFormat.decompress([], dictionary: dictionary, count: 1) == nil)
        #expect(LegacyLedgerFormat.decompress([0x30, 0x78, 0x79, 0x7A], dictionary: dictionary, count: 4) == nil)
        #expect(LegacyLedgerFormat.decompress([0x30, 0x78, 0x79], dictionary: dictionary, count: 3) == nil)
        // A distance before the dictionary's start, and a zero distance.
        #expect(LegacyLedgerFormat.decompress([0x00, 0x05], dictionary: dictionary, count: 4) == nil)
        #expect(LegacyLedgerFormat.decompress([0x00, 0x00], dictionary: dictionary, count: 4) == nil)
        // A match longer than the output told, and a varint that never ends.
        #expect(LegacyLedgerFormat.decompress([0x01, 0x04], dictionary: dictionary, count: 4) == nil)
        #expect(LegacyLedgerFormat.decompress([0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], dictionary: [], count: 20) == nil)
        #expect(LegacyLedgerFormat.decompress([0x10, 0x61], dictionary: [], count: -1) == nil)
    }
}
