import SubscriptionEngine

@testable import StoreSQL

/// The ledger's packed form as iapctl wrote it before issue 25 (versions 1 and 2), made at test
/// time from a current (version 3) packed raw: the same chains and operations, with the CRC-32 of
/// the text, stored plain (1) or compressed by iapctl's former LZ codec (2). The former compressor
/// is kept here, in the tests only: iapctl itself now only reads these versions.
enum LegacyLedgerWriter {
    /// `packed` (version 3) rewritten as version `version` (1 or 2) for the raw text `text`.
    static func legacy(_ packed: [UInt8], text: String, version: UInt8) throws -> [UInt8] {
        precondition(packed.first == LedgerPacking.version && (version == 1 || version == 2))
        // Version byte, varint chain count, 32-byte digests: the same in every version.
        var offset = 1
        var count = 0
        var shift = 0
        while true {
            let byte = packed[offset]
            offset += 1
            count |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        offset += 32 * count
        let ops = try ZstdCodec.decompress(packed[offset...])
        var out = [version] + packed[1..<offset]
        let crc = try LegacyLedgerFormat.crc32(Array(text.utf8))
        out += [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
        if version == 1 {
            out += ops
        } else {
            LedgerPacking.appendVarint(&out, ops.count)
            out += LegacyLZ.compress(ops, dictionary: LedgerPacking.dictionary)
        }
        return out
    }
}

/// iapctl's former LZ compressor (Sources/StoreSQL/LZCompression.swift before issue 25), unchanged:
/// greedy matching with one step of lazy evaluation over 4-byte hash chains (4096 heads, chains
/// cut at 32 candidates). Its stream format is documented in ``LegacyLedgerFormat``.
enum LegacyLZ {
    static let minMatch = 4
    static let hashBits = 12
    static let maxChain = 32

    static func compress(_ input: [UInt8], dictionary: [UInt8]) -> [UInt8] {
        if input.isEmpty { return [] }
        let window = dictionary + input
        let start = dictionary.count
        let end = window.count
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 2 + 16)
        var head = [Int32](repeating: -1, count: 1 << hashBits)
        var prev = [Int32](repeating: -1, count: end)
        window.withUnsafeBufferPointer { w in
            head.withUnsafeMutableBufferPointer { head in
                prev.withUnsafeMutableBufferPointer { prev in
                    var matcher = Matcher(w: w, head: head, prev: prev, end: end)
                    var i = start
                    var anchor = start
                    while i + minMatch <= end {
                        matcher.insert(upTo: i)
                        var (length, distance) = matcher.longest(at: i)
                        if length < minMatch {
                            i += 1
                            continue
                        }
                        // Lazy step: a longer match one byte later wins.
                        if i + 1 + minMatch <= end && length < 64 {
                            matcher.insert(upTo: i + 1)
                            let (next, nextDistance) = matcher.longest(at: i + 1)
                            if next > length {
                                i += 1
                                length = next
                                distance = nextDistance
                            }
                        }
                        emit(&out, literals: w, anchor..<i, distance: distance, length: length)
                        i += length
                        anchor = i
                    }
                    if anchor < end { emit(&out, literals: w, anchor..<end, distance: 0, length: 0) }
                }
            }
        }
        return out
    }

    // MARK: compressor pieces

    private struct Matcher {
        let w: UnsafeBufferPointer<UInt8>
        let head: UnsafeMutableBufferPointer<Int32>
        let prev: UnsafeMutableBufferPointer<Int32>
        let end: Int
        /// Positions below this are in the chains.
        var inserted = 0

        init(w: UnsafeBufferPointer<UInt8>, head: UnsafeMutableBufferPointer<Int32>, prev: UnsafeMutableBufferPointer<Int32>, end: Int) {
            self.w = w
            self.head = head
            self.prev = prev
            self.end = end
        }

        @inline(__always) func hash(_ i: Int) -> Int {
            let v = UInt32(w[i]) | UInt32(w[i + 1]) << 8 | UInt32(w[i + 2]) << 16 | UInt32(w[i + 3]) << 24
            return Int((v &* 2_654_435_761) >> UInt32(32 - LegacyLZ.hashBits))
        }

        mutating func insert(upTo position: Int) {
            let last = min(position, end - LegacyLZ.minMatch + 1)
            while inserted < last {
                let h = hash(inserted)
                prev[inserted] = head[h]
                head[h] = Int32(inserted)
                inserted += 1
            }
        }

        /// The longest earlier match for the bytes at `i` (length 0 when none).
        func longest(at i: Int) -> (length: Int, distance: Int) {
            let limit = end - i
            var best = 0
            var bestDistance = 0
            var candidate = Int(head[hash(i)])
            var chain = LegacyLZ.maxChain
            while candidate >= 0 && chain > 0 {
                chain -= 1
                if w[candidate + best] == w[i + best] || best == 0 {
                    var n = 0
                    while n < limit && w[candidate + n] == w[i + n] { n += 1 }
                    if n > best {
                        best = n
                        bestDistance = i - candidate
                        if n == limit { break }
                    }
                }
                candidate = Int(prev[candidate])
            }
            return (best, bestDistance)
        }
    }

    private static func emit(
        _ out: inout [UInt8], literals w: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, distance: Int, length: Int
    ) {
        let literalCount = range.count
        let matchCode = length == 0 ? 0 : length - minMatch
        out.append(UInt8(min(literalCount, 15) << 4 | min(matchCode, 15)))
        if literalCount >= 15 { varint(&out, literalCount - 15) }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: w[range]))
        guard length > 0 else { return }
        varint(&out, distance)
        if matchCode >= 15 { varint(&out, matchCode - 15) }
    }

    private static func varint(_ out: inout [UInt8], _ value: Int) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }
}
