import CryptoDigest
import IAPFoundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The compact form of a ledger item's raw text (issue 17): the same bytes, rebuilt exactly.
///
/// A notification line is mostly base64url: a JWS whose header carries the signer's certificate
/// chain (`x5c`), and whose payload nests two more JWS with the same chain. Packing decodes every
/// base64url segment that re-encodes to exactly the same text (canonical, unpadded), keeps the
/// decoded bytes, and replaces the text inside each header's `x5c` brackets by a reference to a
/// chain stored once (`iap_ledger_chains`, keyed by its SHA-256). Everything else (the webhook
/// envelope, whitespace, any text that is not a canonical JWS) is kept as literal bytes.
///
/// ``pack(_:)`` proves its result: it rebuilds the text from its operations (and the operations
/// from their context references) and compares with the input byte for byte, and returns nil
/// (store the text as it is) if anything differs; the zstd frame around them is lossless and its
/// checksum is checked on every read. ``unpack(_:chain:)`` is the inverse.
///
/// Format: a version byte, varint chain count, that many 32-byte digests, then the operations:
/// `0x01 len bytes` (literal), `0x02 index` (chain text), `0x03` (begin a base64url segment),
/// `0x04` (end it: base64url-encode what was written since the matching begin). Version 3 (written
/// since issue 25) stores the operations as one Zstandard frame (``ZstdCodec``: content size and
/// checksum in the frame) compressed with the preset dictionary ``dictionary`` (App Store payload
/// keys). Version 4 (issue 25, database size) is version 3 with the row's own ids (`context`: its
/// notification UUID, transaction ids and app account token, stored in the row's columns) replaced
/// in the operations by byte 0xFE and the id's index + 1 before compression (0xFE itself by 0xFE 0,
/// ``TextPacking/substitute(_:_:escape:)``); it is written when the text names any of them. Versions 1 and 2, only read (``LegacyLedgerFormat``), store after the digests the CRC-32
/// of the raw text (4 bytes, little-endian), then the operations as they are (1) or their length
/// (varint) and iapctl's former LZ stream of them with the same dictionary (2).
public enum LedgerPacking {
    /// A certificate chain: the exact text between the brackets of a header's `x5c`.
    public struct Chain: Sendable, Equatable {
        public let digest: [UInt8]
        public let text: [UInt8]

        public init(text: [UInt8]) {
            self.text = text
            self.digest = SHA256Digest.of(text)
        }

        init(text: [UInt8], digest: [UInt8]) {
            self.text = text
            self.digest = digest
        }

        /// The chain whose text is `bytes`: one of ``recent`` (compared byte for byte) or a new one
        /// (its SHA-256 computed). Every notification carries the same chain up to three times (the
        /// notification and its two nested JWS), and one signer's chain for months: hashing it once
        /// per process instead of three times per notification (issue 25, engine+store CPU).
        static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> Chain {
            if let known = recent.withLock({ recent in recent.first { $0.hasText(bytes) } }) { return known }
            let chain = Chain(text: Array(bytes))
            recent.withLock { recent in
                if recent.count >= recentLimit { recent.removeFirst() }
                recent.append(chain)
            }
            return chain
        }

        func hasText(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            text.count == bytes.count
                && text.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
        }

        /// The chains hashed last (a few signers at a time at most: Apple rotates its certificates).
        private static let recent = Mutex<[Chain]>([])
        private static let recentLimit = 8
    }

    public struct Packed: Sendable, Equatable {
        public let bytes: [UInt8]
        /// The distinct chains `bytes` refers to, in reference order.
        public let chains: [Chain]
    }

    public enum UnpackError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case missingChain([UInt8])

        public var description: String {
            switch self {
            case .malformed(let why): return "packed ledger raw is malformed: \(why)"
            case .missingChain(let digest): return "packed ledger raw refers to unknown chain \(Hex.encode(digest))"
            }
        }
    }

    /// The version written without context: operations in a zstd frame.
    static let version: UInt8 = 3
    /// The version written with context: the row's ids referred to, then a zstd frame.
    static let contextVersion: UInt8 = 4
    private static let contextEscape: UInt8 = 0xFE
    /// Read only: operations as they are, with a CRC-32 of the text.
    static let legacyPlain: UInt8 = 1
    /// Read only: operations in iapctl's former LZ stream, with a CRC-32 of the text.
    static let legacyLZ: UInt8 = 2
    private static let opLiteral: UInt8 = 1
    private static let opChain: UInt8 = 2
    private static let opBegin: UInt8 = 3
    private static let opEnd: UInt8 = 4
    /// Shorter strings are never worth a look (a JWS with a chain is kilobytes).
    private static let minimumJWS = 64
    private static let maximumDepth = 4

    // MARK: pack

    /// The packed form of `raw`, or nil when packing would not make it smaller or not rebuild it exactly.
    /// `context`: the row's ids the text may name (the same, in the same order, to unpack).
    public static func pack(_ raw: String, context: [String?] = []) -> Packed? {
        let context = TextPacking.usableContext(context)
        var raw = raw
        return raw.withUTF8 { input -> Packed? in
            guard !input.isEmpty else { return nil }
            var writer = Writer()
            let bytes = UnsafeBufferPointer(rebasing: input[...])
            writer.scan(bytes)
            // The proof: the operations rebuild the input byte for byte, or it is not packed at all.
            // (zstd is lossless, and the frame's checksum of the operations is checked on every read.)
            let byDigest = Dictionary(writer.chains.map { ($0.digest, $0.text) }, uniquingKeysWith: { a, _ in a })
            var opsReader = Reader(bytes: writer.ops)
            guard let rebuilt = try? rebuild(&opsReader, digests: writer.chains.map(\.digest), chain: { byDigest[$0] }),
                rebuilt.count == input.count,
                rebuilt.withUnsafeBufferPointer({ memcmp($0.baseAddress!, input.baseAddress!, input.count) == 0 })
            else { return nil }
            // Version 4 only when it refers to something (else the bytes are version 3's).
            var hasContext = false
            let substituted = TextPacking.substitute(writer.ops, context, escape: contextEscape, referred: &hasContext)
            let ops = hasContext ? substituted : writer.ops
            // Without the library the text is stored as it is (still exact, only larger).
            guard let compressed = ZstdCodec.compress(ops) else { return nil }
            var out: [UInt8] = [hasContext ? contextVersion : version]
            appendVarint(&out, writer.chains.count)
            for chain in writer.chains { out += chain.digest }
            out += compressed
            guard out.count < input.count else { return nil }
            if hasContext {
                // The references restore exactly the operations proven above (and zstd's frame is
                // lossless and checked on every read, as for version 3): no second rebuild.
                guard let restored = try? TextPacking.restore(substituted[...], context, escape: contextEscape),
                    restored == writer.ops
                else { return nil }
            }
            let packed = Packed(bytes: out, chains: writer.chains)
            return packed
        }
    }

    private struct Writer {
        var ops: [UInt8] = []
        var chains: [Chain] = []

        mutating func literal(_ slice: UnsafeBufferPointer<UInt8>) {
            guard !slice.isEmpty else { return }
            ops.append(LedgerPacking.opLiteral)
            appendVarint(&ops, slice.count)
            ops.append(contentsOf: slice)
        }

        mutating func dot() { ops += [LedgerPacking.opLiteral, 1, UInt8(ascii: ".")] }

        mutating func chainIndex(_ text: UnsafeBufferPointer<UInt8>) -> Int {
            // Equal texts have equal digests: the chains of this text are compared byte for byte.
            if let index = chains.firstIndex(where: { $0.hasText(text) }) { return index }
            let chain = Chain.of(text)
            if let index = chains.firstIndex(where: { $0.digest == chain.digest }) { return index }
            chains.append(chain)
            return chains.count - 1
        }

        /// Packs `text`: the whole of it when it is a JWS (around whitespace), else every
        /// JWS-shaped JSON string in it (a webhook body `{"signedPayload": "…"}`).
        mutating func scan(_ text: UnsafeBufferPointer<UInt8>) {
            let trimmed = trimWhitespace(text)
            if trimmed.count >= LedgerPacking.minimumJWS {
                let mark = ops.count
                let chainMark = chains.count
                literal(UnsafeBufferPointer(rebasing: text[..<trimmed.lowerBound]))
                if writeJWS(UnsafeBufferPointer(rebasing: text[trimmed]), depth: 1) {
                    literal(UnsafeBufferPointer(rebasing: text[trimmed.upperBound...]))
                    return
                }
                ops.removeSubrange(mark...)
                chains.removeSubrange(chainMark...)
            }
            scanStrings(text, depth: 0)
        }

        /// Literal text, except JSON strings that are a canonical JWS, which are packed.
        mutating func scanStrings(_ text: UnsafeBufferPointer<UInt8>, depth: Int) {
            var start = 0
            var i = 0
            let n = text.count
            while i < n {
                guard let quote = LedgerPacking.find(UInt8(ascii: "\""), in: text, from: i) else { break }
                i = quote
                // The closing quote: the next one, unless a backslash comes before it.
                var j = LedgerPacking.find(UInt8(ascii: "\""), in: text, from: i + 1) ?? n
                var plain = true
                if let slash = LedgerPacking.find(UInt8(ascii: "\\"), in: UnsafeBufferPointer(rebasing: text[..<j]), from: i + 1) {
                    plain = false
                    j = slash
                    while j < n, text[j] != UInt8(ascii: "\"") {
                        if text[j] == UInt8(ascii: "\\") { j += 1 }
                        j += 1
                    }
                }
                guard j < n else { break }
                let content = UnsafeBufferPointer(rebasing: text[(i + 1)..<j])
                if plain, depth < LedgerPacking.maximumDepth, content.count >= LedgerPacking.minimumJWS {
                    let mark = ops.count
                    let chainMark = chains.count
                    literal(UnsafeBufferPointer(rebasing: text[start...i]))
                    if writeJWS(content, depth: depth + 1) {
                        start = j
                    } else {
                        ops.removeSubrange(mark...)
                        chains.removeSubrange(chainMark...)
                    }
                }
                i = j + 1
            }
            literal(UnsafeBufferPointer(rebasing: text[start...]))
        }

        /// Writes `text` as a packed JWS (three canonical base64url segments); false (having
        /// possibly written something the caller discards) when it is not one.
        mutating func writeJWS(_ text: UnsafeBufferPointer<UInt8>, depth: Int) -> Bool {
            guard let dots = twoDots(text) else { return false }
            let segments = [
                UnsafeBufferPointer(rebasing: text[..<dots.0]),
                UnsafeBufferPointer(rebasing: text[(dots.0 + 1)..<dots.1]),
                UnsafeBufferPointer(rebasing: text[(dots.1 + 1)...]),
            ]
            var decoded: [[UInt8]] = []
            for segment in segments {
                // Strict (canonical, unpadded): re-encoding gives back exactly `segment`.
                guard !segment.isEmpty, let bytes = Base64.decodeURL(segment) else { return false }
                decoded.append(bytes)
            }
            // Header: the chain replaced by a reference.
            ops.append(LedgerPacking.opBegin)
            decoded[0].withUnsafeBufferPointer { header in
                if let range = x5cContent(header) {
                    literal(UnsafeBufferPointer(rebasing: header[..<range.lowerBound]))
                    let index = chainIndex(UnsafeBufferPointer(rebasing: header[range]))
                    ops.append(LedgerPacking.opChain)
                    appendVarint(&ops, index)
                    literal(UnsafeBufferPointer(rebasing: header[range.upperBound...]))
                } else {
                    literal(header)
                }
            }
            ops.append(LedgerPacking.opEnd)
            dot()
            // Payload: nested JWS (signedTransactionInfo, signedRenewalInfo…) packed too.
            ops.append(LedgerPacking.opBegin)
            decoded[1].withUnsafeBufferPointer { scanStrings($0, depth: depth) }
            ops.append(LedgerPacking.opEnd)
            dot()
            ops.append(LedgerPacking.opBegin)
            decoded[2].withUnsafeBufferPointer { literal($0) }
            ops.append(LedgerPacking.opEnd)
            return true
        }
    }

    // MARK: unpack

    /// The original text of a packed raw; `chain` gives a chain's text by its digest (nil: unknown).
    /// `context`: the ids of the row (as given to ``pack(_:context:)``; only version 4 uses them).
    public static func unpack(
        _ packed: [UInt8], context: [String?] = [], chain: ([UInt8]) throws -> [UInt8]?
    ) throws -> String {
        let bytes = try unpackBytes(packed, chain: chain, context: TextPacking.usableContext(context))
        return String(decoding: bytes, as: UTF8.self)
    }

    static func unpackBytes(
        _ packed: [UInt8], chain: ([UInt8]) throws -> [UInt8]?, context: [[UInt8]] = []
    ) throws -> [UInt8] {
        var reader = Reader(bytes: packed)
        let digests = try reader.header()
        if packed[0] == version || packed[0] == contextVersion {
            var operations = try ZstdCodec.decompress(packed[reader.offset...])
            if packed[0] == contextVersion {
                operations = try TextPacking.restore(operations[...], context, escape: contextEscape)
            }
            var ops = Reader(bytes: operations)
            return try rebuild(&ops, digests: digests, chain: chain)
        }
        let expectedCRC = try reader.crc()
        if packed[0] == legacyLZ {
            let count = try reader.varint()
            guard count <= ZstdCodec.maximumContent,
                let ops = LegacyLedgerFormat.decompress(packed[reader.offset...], dictionary: dictionary, count: count)
            else { throw UnpackError.malformed("compressed operations do not decompress") }
            reader = Reader(bytes: ops)
        }
        let text = try rebuild(&reader, digests: digests, chain: chain)
        guard try LegacyLedgerFormat.crc32(text) == expectedCRC else {
            throw UnpackError.malformed("the rebuilt text fails its CRC-32")
        }
        return text
    }

    /// Runs the operations of `reader` (to its end).
    private static func rebuild(
        _ reader: inout Reader, digests: [[UInt8]], chain: ([UInt8]) throws -> [UInt8]?
    ) throws -> [UInt8] {
        var texts: [[UInt8]?] = Array(repeating: nil, count: digests.count)
        var stack: [[UInt8]] = [[]]
        while !reader.atEnd {
            switch try reader.byte() {
            case opLiteral:
                let count = try reader.varint()
                try reader.append(count, to: &stack[stack.count - 1])
            case opChain:
                let index = try reader.varint()
                guard index < digests.count else { throw UnpackError.malformed("chain index \(index)") }
                if texts[index] == nil {
                    guard let text = try chain(digests[index]) else { throw UnpackError.missingChain(digests[index]) }
                    texts[index] = text
                }
                stack[stack.count - 1] += texts[index]!
            case opBegin:
                guard stack.count <= 16 else { throw UnpackError.malformed("nesting too deep") }
                stack.append([])
            case opEnd:
                guard stack.count > 1 else { throw UnpackError.malformed("unbalanced end") }
                let inner = stack.removeLast()
                Base64.encodeURL(inner, into: &stack[stack.count - 1])
            case let op:
                throw UnpackError.malformed("unknown operation \(op)")
            }
        }
        guard stack.count == 1 else { throw UnpackError.malformed("unbalanced begin") }
        return stack[0]
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset >= bytes.count }

        mutating func byte() throws(UnpackError) -> UInt8 {
            guard offset < bytes.count else { throw .malformed("truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(UnpackError) -> Int {
            var value = 0
            var shift = 0
            while true {
                let b = try byte()
                value |= Int(b & 0x7F) << shift
                if b & 0x80 == 0 { return value }
                shift += 7
                guard shift < 35 else { throw .malformed("varint too long") }
            }
        }

        mutating func append(_ count: Int, to out: inout [UInt8]) throws(UnpackError) {
            guard count <= bytes.count - offset else { throw .malformed("literal past the end") }
            out += bytes[offset..<(offset + count)]
            offset += count
        }

        mutating func crc() throws(UnpackError) -> UInt32 {
            guard bytes.count - offset >= 4 else { throw .malformed("truncated") }
            defer { offset += 4 }
            return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
                | UInt32(bytes[offset + 3]) << 24
        }

        mutating func header() throws(UnpackError) -> [[UInt8]] {
            let version = try byte()
            guard
                version == LedgerPacking.version || version == LedgerPacking.contextVersion
                    || version == LedgerPacking.legacyPlain
                    || version == LedgerPacking.legacyLZ
            else {
                throw .malformed("unknown version \(version)")
            }
            let count = try varint()
            guard count <= (bytes.count - offset) / 32 else { throw .malformed("chain table past the end") }
            var digests: [[UInt8]] = []
            for _ in 0..<count {
                digests.append(Array(bytes[offset..<(offset + 32)]))
                offset += 32
            }
            return digests
        }
    }

    // MARK: pieces

    /// The preset dictionary of versions 2 and 3: what App Store payloads repeat (keys, enum
    /// values, the packed JWS framing). Part of the stored format: never change it, add a version.
    static let dictionary: [UInt8] = Array(
        (#"{"offerType":1,"offerIdentifier":"","offerDiscountType":"PAY_AS_YOU_GO","revocationDate":"#
            + #","revocationReason":0,"isUpgraded":true,"expirationIntent":1,"isInBillingRetryPeriod":false,"#
            + #""gracePeriodExpiresDate":,"priceIncreaseStatus":0,"eligibleWinBackOfferIds":[],"#
            + #""appTransactionId":"","consumptionRequestReason":"","summary":{"requestIdentifier":"#
            + #""notificationType":"DID_CHANGE_RENEWAL_STATUS","subtype":"AUTO_RENEW_DISABLED","#
            + #""notificationType":"EXPIRED","subtype":"VOLUNTARY","notificationType":"REFUND","#
            + #""notificationType":"SUBSCRIBED","subtype":"RESUBSCRIBE","notificationType":"DID_RENEW","#
            + #"{"alg":"ES256","x5c":[\#u{2}\#u{0}\#u{1}\#u{2}]}\#u{4}\#u{1}\#u{1}.\#u{3}\#u{1}"#
            + #"{"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":""#
            + #","data":{"appAppleId":,"bundleId":"","bundleVersion":"1","environment":"Production","#
            + #""signedTransactionInfo":"{"transactionId":"","originalTransactionId":"","#
            + #""webOrderLineItemId":"","bundleId":"","productId":"","subscriptionGroupIdentifier":"","#
            + #""purchaseDate":,"originalPurchaseDate":,"expiresDate":,"quantity":1,"#
            + #""type":"Auto-Renewable Subscription","appAccountToken":"","inAppOwnershipType":"PURCHASED","#
            + #""signedDate":,"environment":"Sandbox","transactionReason":"RENEWAL","storefront":"USA","#
            + #""storefrontId":"143441","price":,"currency":"USD"}\#u{4}\#u{1}\#u{1}.\#u{3}\#u{1}@"#
            + #"\#u{4}\#u{1}\#u{17}","signedRenewalInfo":"{"originalTransactionId":"","autoRenewProductId":"","#
            + #""productId":"","autoRenewStatus":1,"renewalPrice":,"currency":"USD","signedDate":,"#
            + #""environment":"Production","recentSubscriptionStartDate":,"renewalDate":,"appAccountToken":"","#
            + #""status":1},"version":"2.0","signedDate":"#).utf8)

    static func appendVarint(_ out: inout [UInt8], _ value: Int) {
        var v = UInt(value)
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    private static func trimWhitespace(_ text: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        var lower = 0
        var upper = text.count
        while lower < upper, isSpace(text[lower]) { lower += 1 }
        while upper > lower, isSpace(text[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// The positions of exactly two dots, none at either end.
    private static func twoDots(_ text: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
        let dot = UInt8(ascii: ".")
        guard let first = find(dot, in: text, from: 0), let second = find(dot, in: text, from: first + 1),
            find(dot, in: text, from: second + 1) == nil
        else { return nil }
        guard first > 0, second > first + 1, second < text.count - 1 else { return nil }
        return (first, second)
    }

    /// The position of the first `byte` in `text` at or after `start` (memchr), if any.
    static func find(_ byte: UInt8, in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < text.count, let base = text.baseAddress,
            let found = memchr(base + start, Int32(byte), text.count - start)
        else { return nil }
        return UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
    }

    /// The bytes between the brackets of the header's `"x5c": [ … ]`, if it has one: from the
    /// `[` after the first `"x5c"` key to the next `]`. Exactness never depends on this being the
    /// JSON array (whatever is replaced is stored and put back byte for byte); only how well
    /// equal chains are shared does, and base64 certificates contain no `]`.
    private static func x5cContent(_ header: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let base = header.baseAddress else { return nil }
        let n = header.count
        let key = "\"x5c\"".utf8
        var i = 0
        while i + key.count <= n {
            guard let quote = memchr(base + i, Int32(UInt8(ascii: "\"")), n - i) else { return nil }
            i = UnsafePointer<UInt8>(quote.assumingMemoryBound(to: UInt8.self)) - base
            guard i + key.count <= n else { return nil }
            if UnsafeBufferPointer(rebasing: header[i..<(i + key.count)]).elementsEqual(key) {
                var j = i + key.count
                while j < n,
                    header[j] == 0x20 || header[j] == 0x0A || header[j] == 0x0D || header[j] == 0x09
                        || header[j] == UInt8(ascii: ":")
                {
                    j += 1
                }
                guard j < n, header[j] == UInt8(ascii: "["),
                    let close = memchr(base + j + 1, Int32(UInt8(ascii: "]")), n - j - 1)
                else { return nil }
                return (j + 1)..<(UnsafePointer<UInt8>(close.assumingMemoryBound(to: UInt8.self)) - base)
            }
            i += 1
        }
        return nil
    }
}
