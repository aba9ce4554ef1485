import StoreSQL
import Testing

/// A deterministic generator (SplitMix64), so every random case is the same on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int, alphabet: Int = 256) -> [UInt8] {
        (0..<count).map { _ in UInt8(Int.random(in: 0..<alphabet, using: &self)) }
    }
}

@Suite("LZ compression")
struct LZCompressionTests {
    /// A preset dictionary like the ledger's: keys and values App Store payloads repeat.
    static let dictionary = Array(
        (#"{"notificationType":"DID_RENEW","subtype":"","notificationUUID":"","data":{"appAppleId":,"#
            + #""bundleId":"","bundleVersion":"1","environment":"Production","signedTransactionInfo":""#
            + #"{"transactionId":"","originalTransactionId":"","webOrderLineItemId":"","productId":"","#
            + #""subscriptionGroupIdentifier":"","purchaseDate":,"originalPurchaseDate":,"expiresDate":,"#
            + #""quantity":1,"type":"Auto-Renewable Subscription","inAppOwnershipType":"PURCHASED","#
            + #""signedDate":,"transactionReason":"RENEWAL","storefront":"USA","storefrontId":"143441","#
            + #""price":,"currency":"USD"},"version":"2.0","signedDate":"#).utf8)

    /// A notification as the ledger would pack it: JSON with a nested transaction, random ids.
    static func notification(_ random: inout SeededRandom) -> [UInt8] {
        func digits(_ n: Int) -> String { String((0..<n).map { _ in "0123456789".randomElement(using: &random)! }) }
        func uuid() -> String {
            let hex = "0123456789abcdef"
            return [8, 4, 4, 4, 12].map { n in String((0..<n).map { _ in hex.randomElement(using: &random)! }) }
                .joined(separator: "-")
        }
        let date = 1_700_000_000_000 + Int64.random(in: 0..<100_000_000_000, using: &random)
        let type = ["DID_RENEW", "SUBSCRIBED", "EXPIRED", "REFUND"].randomElement(using: &random)!
        let transaction =
            #"{"transactionId":"\#(digits(15))","originalTransactionId":"\#(digits(15))","#
            + #""webOrderLineItemId":"\#(digits(15))","bundleId":"com.example.app","productId":"com.example.monthly","#
            + #""subscriptionGroupIdentifier":"\#(digits(8))","purchaseDate":\#(date),"originalPurchaseDate":\#(date - 86_400_000),"#
            + #""expiresDate":\#(date + 2_592_000_000),"quantity":1,"type":"Auto-Renewable Subscription","#
            + #""appAccountToken":"\#(uuid())","inAppOwnershipType":"PURCHASED","signedDate":\#(date + 5),"#
            + #""environment":"Production","transactionReason":"RENEWAL","storefront":"USA","storefrontId":"143441","#
            + #""price":\#(digits(4)),"currency":"USD"}"#
        let text =
            #"{"notificationType":"\#(type)","notificationUUID":"\#(uuid())","data":{"appAppleId":\#(digits(10)),"#
            + #""bundleId":"com.example.app","bundleVersion":"42","environment":"Production","#
            + #""signedTransactionInfo":\#(transaction),"status":1},"version":"2.0","signedDate":\#(date + 9)}"#
        return Array(text.utf8)
    }

    static func roundTrip(_ input: [UInt8], dictionary: [UInt8] = dictionary, sourceLocation: SourceLocation = #_sourceLocation) {
        let packed = LZCompression.compress(input, dictionary: dictionary)
        #expect(
            LZCompression.decompress(packed, dictionary: dictionary, count: input.count) == input, sourceLocation: sourceLocation)
    }

    @Test func emptyAndOneByte() {
        #expect(LZCompression.compress([], dictionary: Self.dictionary).isEmpty)
        #expect(LZCompression.decompress([], dictionary: Self.dictionary, count: 0) == [])
        #expect(LZCompression.decompress([], dictionary: Self.dictionary, count: 1) == nil)
        Self.roundTrip([])
        Self.roundTrip([0x7B])
        Self.roundTrip([0x00], dictionary: [])
    }

    @Test func runsOverlapTheirOwnOutput() {
        for length in [4, 5, 18, 19, 20, 300, 70_000] {
            let run = [UInt8](repeating: 0x61, count: length)
            Self.roundTrip(run)
            Self.roundTrip(run, dictionary: [])
            // A run is one literal and one overlapping match: it shrinks to a handful of bytes.
            if length >= 300 { #expect(LZCompression.compress(run, dictionary: []).count < 10) }
        }
        Self.roundTrip(Array(String(repeating: "abc", count: 1000).utf8), dictionary: [])
    }

    @Test func randomBytesDoNotGrowMuch() {
        var random = SeededRandom(state: 1)
        for count in [1, 15, 16, 270, 4096] {
            let input = random.bytes(count)
            let packed = LZCompression.compress(input, dictionary: Self.dictionary)
            #expect(packed.count <= count + count / 128 + 4)
            Self.roundTrip(input)
        }
    }

    @Test func inputsShorterAndLongerThanTheDictionary() {
        let text = Array(#"{"notificationType":"DID_RENEW","subtype":"","#.utf8)
        Self.roundTrip(text)
        // Wholly inside the dictionary: one match reaching back into it.
        #expect(LZCompression.compress(text, dictionary: Self.dictionary).count < 8)
        var random = SeededRandom(state: 2)
        let long = (0..<6).flatMap { _ in Self.notification(&random) }
        #expect(long.count > Self.dictionary.count * 3)
        Self.roundTrip(long)
    }

    @Test func matchesStartInTheDictionaryAndRunIntoTheOutput() {
        // The dictionary ends with "xyz"; the input repeats "xyz" many times: the first match
        // starts 3 bytes back inside the dictionary and overlaps into what it writes.
        let dictionary = Array("some keys xyz".utf8)
        let input = Array(String(repeating: "xyz", count: 50).utf8)
        let packed = LZCompression.compress(input, dictionary: dictionary)
        #expect(packed.count < 6)
        #expect(LZCompression.decompress(packed, dictionary: dictionary, count: input.count) == input)
        // Without the dictionary the same stream points before the start: refused.
        #expect(LZCompression.decompress(packed, dictionary: [], count: input.count) == nil)
    }

    @Test func realisticNotificationsCompressWell() {
        var random = SeededRandom(state: 3)
        var plain = 0
        var withDictionary = 0
        var withoutDictionary = 0
        for _ in 0..<20 {
            let input = Self.notification(&random)
            Self.roundTrip(input)
            plain += input.count
            withDictionary += LZCompression.compress(input, dictionary: Self.dictionary).count
            withoutDictionary += LZCompression.compress(input, dictionary: []).count
        }
        #expect(withDictionary * 2 < plain)
        #expect(withDictionary < withoutDictionary)
    }

    @Test func truncatedDataIsRefused() {
        var random = SeededRandom(state: 4)
        let input = Self.notification(&random)
        let packed = LZCompression.compress(input, dictionary: Self.dictionary)
        for cut in 0..<packed.count {
            let result = LZCompression.decompress(Array(packed[..<cut]), dictionary: Self.dictionary, count: input.count)
            #expect(result == nil, "cut at \(cut)")
        }
    }

    @Test func wrongCountsAreRefused() {
        var random = SeededRandom(state: 5)
        let input = Self.notification(&random)
        let packed = LZCompression.compress(input, dictionary: Self.dictionary)
        for count in [-1, 0, 1, input.count - 1, input.count + 1, input.count * 2, Int.max] {
            #expect(LZCompression.decompress(packed, dictionary: Self.dictionary, count: count) == nil, "count \(count)")
        }
    }

    @Test func flippedBytesNeverEscapeBounds() {
        var random = SeededRandom(state: 6)
        let input = Self.notification(&random)
        let packed = LZCompression.compress(input, dictionary: Self.dictionary)
        var refused = 0
        for position in packed.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var bad = packed
                bad[position] ^= mask
                if let out = LZCompression.decompress(bad, dictionary: Self.dictionary, count: input.count) {
                    // Accepted only as exactly `count` bytes: a wrong result the ledger's CRC catches.
                    #expect(out.count == input.count)
                } else {
                    refused += 1
                }
            }
        }
        // Most corruptions break the structure itself (a literal byte flip still decodes).
        #expect(refused > 0)
    }

    @Test func garbageIsRefusedOrInBounds() {
        var random = SeededRandom(state: 7)
        for _ in 0..<2000 {
            let garbage = random.bytes(Int.random(in: 0..<64, using: &random))
            let count = Int.random(in: 0..<2000, using: &random)
            if let out = LZCompression.decompress(garbage, dictionary: Self.dictionary, count: count) {
                #expect(out.count == count)
            }
        }
        // A huge match length is capped by `count`, not obeyed.
        let hostile: [UInt8] = [0x1F, 0x61, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        #expect(LZCompression.decompress(hostile, dictionary: [], count: 100) == nil)
        // An offset of zero or one past the window is refused.
        #expect(LZCompression.decompress([0x10, 0x61, 0x00], dictionary: [], count: 5) == nil)
        #expect(LZCompression.decompress([0x10, 0x61, 0x02], dictionary: [], count: 5) == nil)
        #expect(LZCompression.decompress([0x10, 0x61, 0x01], dictionary: [], count: 5) == Array("aaaaa".utf8))
    }

    @Test func propertyRandomInputsRoundTrip() {
        var random = SeededRandom(state: 8)
        for _ in 0..<300 {
            let count = Int.random(in: 0..<600, using: &random)
            // Small alphabets make many matches; mixing in dictionary pieces makes matches into it.
            let alphabet = [2, 4, 16, 256].randomElement(using: &random)!
            var input = random.bytes(count, alphabet: alphabet)
            if Bool.random(using: &random) {
                let start = Int.random(in: 0..<Self.dictionary.count, using: &random)
                let end = min(Self.dictionary.count, start + Int.random(in: 0..<80, using: &random))
                input.insert(contentsOf: Self.dictionary[start..<end], at: Int.random(in: 0...input.count, using: &random))
            }
            Self.roundTrip(input)
            Self.roundTrip(input, dictionary: [])
        }
    }
}
