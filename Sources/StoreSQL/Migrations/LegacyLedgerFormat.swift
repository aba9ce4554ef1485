internal import CZlib
import SubscriptionModel

/// Reading packed raws of format versions 1 and 2 (the LZ stream and CRC-32), decode only.
///
/// Why this is kept: databases written by earlier iapctl hold rows in these versions, and `audit
/// raw` must return every one byte for byte. Version 2 compressed with iapctl's own LZ codec, whose
/// stream no library reads (it is neither deflate nor zstd nor LZ4 framing), and both versions check
/// the rebuilt text with a CRC-32. New rows are version 3 (zstd, ``ZstdCodec``); nothing here
/// writes. What is left: the LZ decoder (the format below), and the CRC-32 check through zlib's
/// `crc32` (``crc32(_:)``), both only for those old rows.
///
/// The LZ stream (varint = unsigned LEB128, at most 5 bytes, little end first):
///
///     stream   := sequence*                      (empty stream = empty input)
///     sequence := token [litExt] literal* [offset [matchExt]]
///     token    := (L << 4) | M                   L, M in 0...15
///     literals := L, or 15 + litExt when L == 15
///     offset   := varint, 1 ... (dictionary.count + bytes produced so far): distance back
///     match    := M + 4 bytes, or 19 + matchExt when M == 15, copied byte by byte (may overlap)
///
/// The dictionary acts as if it preceded the output. A stream ends right after a sequence's
/// literals (the last sequence: no offset, M = 0) or right after a match.
enum LegacyLedgerFormat {
    static let minMatch = 4

    /// The output of an LZ stream, exactly `count` bytes, or nil when `data` is not a stream that
    /// makes them. Never reads or writes out of bounds; O(data.count + count) work.
    static func decompress(_ data: ArraySlice<UInt8>, dictionary: [UInt8], count: Int) -> [UInt8]? {
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

    /// CRC-32 (IEEE 802.3, as zip and PNG) by zlib's `crc32` (`CZlib`: libz.so.1 loaded on first use):
    /// `crc32("123456789".utf8) == 0xCBF43926`. Throws, naming the library and the Debian package,
    /// when zlib is missing.
    static func crc32(_ bytes: [UInt8]) throws(StoreError) -> UInt32 {
        if let message = iapctl_zlib_unavailable() { throw .libraryUnavailable(String(cString: message)) }
        return bytes.withUnsafeBufferPointer { buffer in
            var crc = CZlib.crc32(0, nil, 0)
            var rest = buffer[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(Int(UInt32.max))
                crc = CZlib.crc32(crc, UnsafeBufferPointer(rebasing: chunk).baseAddress, UInt32(chunk.count))
                rest = rest.dropFirst(chunk.count)
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }
}
