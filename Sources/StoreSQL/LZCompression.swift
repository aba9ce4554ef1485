/// A small LZ77 codec with a preset dictionary, written for the ledger's packed operations (no C
/// library: replaces raw deflate). The dictionary acts as if it preceded the input, so matches may
/// start in it and run on into the output.
///
/// Format (byte-oriented, LZ4-like; varint = unsigned LEB128, at most 5 bytes, little end first):
///
///     stream   := sequence*                      (empty stream = empty input)
///     sequence := token [litExt] literal* [offset [matchExt]]
///     token    := (L << 4) | M                   L, M in 0...15
///     literals := L, or 15 + litExt when L == 15
///     offset   := varint, 1 ... (dictionary.count + bytes produced so far): distance back
///     match    := M + 4 bytes, or 19 + matchExt when M == 15, copied byte by byte (may overlap)
///
/// A stream ends when the input is used up right after a sequence's literals (the last sequence,
/// no offset, M = 0) or right after a match. The decoder is told the output length (`count`): it
/// returns nil for anything that is not exactly a stream producing `count` bytes, never reads or
/// writes out of bounds, and does at most O(data.count + count) work.
///
/// The compressor: greedy matching with one step of lazy evaluation over 4-byte hash chains
/// (4096 heads, chains cut at 32 candidates).
public enum LZCompression {
    static let minMatch = 4
    static let hashBits = 12
    static let maxChain = 32

    public static func compress(_ input: [UInt8], dictionary: [UInt8]) -> [UInt8] {
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

    /// The output, exactly `count` bytes, or nil when `data` is not a stream that makes them.
    public static func decompress(_ data: [UInt8], dictionary: [UInt8], count: Int) -> [UInt8]? {
        guard count >= 0 else { return nil }
        if data.isEmpty { return count == 0 ? [] : nil }
        let base = dictionary.count
        let (end, overflow) = base.addingReportingOverflow(count)
        guard !overflow else { return nil }
        var buffer = [UInt8](repeating: 0, count: end)
        let ok = data.withUnsafeBufferPointer { d -> Bool in
            buffer.withUnsafeMutableBufferPointer { b -> Bool in
                for k in 0..<base { b[k] = dictionary[k] }
                let n = d.count
                var p = 0
                var o = base
                func varint() -> Int? {
                    var value = 0
                    var shift = 0
                    while p < n && shift < 35 {
                        let byte = d[p]
                        p += 1
                        value |= Int(byte & 0x7F) << shift
                        if byte < 0x80 { return value }
                        shift += 7
                    }
                    return nil
                }
                while p < n {
                    let token = d[p]
                    p += 1
                    var literals = Int(token >> 4)
                    if literals == 15 {
                        guard let more = varint() else { return false }
                        literals += more
                    }
                    guard literals <= end - o, literals <= n - p else { return false }
                    for k in 0..<literals { b[o + k] = d[p + k] }
                    o += literals
                    p += literals
                    if p == n { return token & 15 == 0 && o == end }
                    guard let distance = varint(), distance >= 1, distance <= o else { return false }
                    var length = Int(token & 15) + minMatch
                    if length == 15 + minMatch {
                        guard let more = varint() else { return false }
                        length += more
                    }
                    guard length <= end - o else { return false }
                    var from = o - distance
                    for k in o..<(o + length) {
                        b[k] = b[from]
                        from += 1
                    }
                    o += length
                }
                return o == end
            }
        }
        guard ok else { return nil }
        return Array(buffer[base...])
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
            return Int((v &* 2_654_435_761) >> UInt32(32 - LZCompression.hashBits))
        }

        mutating func insert(upTo position: Int) {
            let last = min(position, end - LZCompression.minMatch + 1)
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
            var chain = LZCompression.maxChain
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
