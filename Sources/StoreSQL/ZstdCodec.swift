internal import CZstd
import SubscriptionModel
import Synchronization

/// Zstandard (libzstd, loaded on first use). Two uses: the stored form of a ledger raw
/// (``rawFrame(_:)``: a standard frame of the exact bytes, no dictionary, content size and checksum
/// on, so `zstd -d` reads it), and, for the schema-v10 conversion only, reading the frames schema v9
/// wrote with the ledger's preset dictionary (format version 3, ``LedgerPacking``).
///
/// Chosen over zlib's deflate by measurement (BENCHMARKS.md): on the bench's notifications
/// and on Apple's 45 genuine JWS, level 5 with the same preset dictionary compresses the operations
/// within 4 % of deflate's size, in under half of deflate's CPU time, and decompresses faster. The
/// frame carries the content size and a checksum of the content (XXH64), checked on every read.
enum ZstdCodec {
    static let level: Int32 = 5
    /// A packed raw never decompresses to more than this (a ledger item is at most a few megabytes).
    static let maximumContent = 64 << 20

    /// Loads libzstd (on the first call; see CZstd) and throws, naming the library and the Debian
    /// package, when it or one of the functions iapctl calls is missing. Asked before any frame is
    /// made or read: without the library nothing is stored, and no stored frame is taken for corrupt.
    static func requireLibrary() throws(StoreError) {
        if let message = iapctl_zstd_unavailable() { throw .libraryUnavailable(String(cString: message)) }
    }

    /// The library's contexts and one digested dictionary, made once per process and dictionary
    /// (loading libzstd: a missing library stops the process, exit 69, unless ``requireLibrary()``
    /// was asked first); nil when zstd cannot allocate them.
    final class Shared: @unchecked Sendable {
        let cdict: OpaquePointer?
        let ddict: OpaquePointer?
        let cctx: OpaquePointer
        let dctx: OpaquePointer
        /// One user of the contexts at a time (the dictionaries themselves are read-only).
        let lock = Mutex<Void>(())

        /// `checksum`: the frame keeps an XXH64 of its content (4 bytes), checked on every read.
        /// `dictionary` nil: plain frames (no dictionary), which any zstd reads.
        init?(dictionary: [UInt8]?, level: Int32, checksum: Bool) {
            guard let cctx = ZSTD_createCCtx(), let dctx = ZSTD_createDCtx() else { return nil }
            self.cctx = cctx
            self.dctx = dctx
            if let dictionary {
                guard let cdict = dictionary.withUnsafeBytes({ ZSTD_createCDict($0.baseAddress, $0.count, level) }),
                    let ddict = dictionary.withUnsafeBytes({ ZSTD_createDDict($0.baseAddress, $0.count) })
                else { return nil }
                self.cdict = cdict
                self.ddict = ddict
            } else {
                (self.cdict, self.ddict) = (nil, nil)
                _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
            }
            // The dictionary does not start with zstd's dictionary magic: it is raw content, as if it
            // preceded the input. The frame keeps the content size, not a dictionary id.
            _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0)
            _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)
            _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)
            if let cdict { _ = ZSTD_CCtx_refCDict(cctx, cdict) }
        }
    }

    private static let shared = Shared(dictionary: LedgerPacking.dictionary, level: level, checksum: true)
    /// Plain frames: no dictionary, content size and XXH64 checksum of the content in the frame.
    private static let plain = Shared(dictionary: nil, level: rawLevel, checksum: true)
    /// A ledger raw's level. A raw is a JWS of a few kilobytes of base64, which every level packs
    /// alike (`zstd -b1 -e9` on a 3,931-byte notification: 2,380 bytes at level 1, 2,369 at 9), while
    /// level 9's larger tables made each frame cost 3 M instructions, half of notify's main thread.
    static let rawLevel: Int32 = 1

    /// The stored form of a ledger raw: one standard zstd frame of its exact bytes (content size
    /// and checksum on, no dictionary), or nil when zstd fails.
    public static func rawFrame(_ bytes: [UInt8]) -> [UInt8]? { compress(bytes, with: plain) }

    /// The bytes of a frame ``rawFrame(_:)`` wrote, its checksum checked; the error says what failed.
    public static func rawContent(_ frame: [UInt8]) -> Result<[UInt8], FrameError> {
        do {
            return .success(try decompress(frame[...], with: plain))
        } catch {
            guard case .malformed(let why) = error else { return .failure(FrameError(reason: error.description)) }
            return .failure(FrameError(reason: why))
        }
    }

    /// Why a frame did not decompress (its checksum failed, it is cut short, not a frame…).
    public struct FrameError: Error, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    static let noContexts = "zstd could not allocate its contexts (out of memory)"

    /// One zstd frame of `bytes` with the ledger's dictionary, or nil when zstd fails.
    static func compress(_ bytes: [UInt8]) -> [UInt8]? { compress(bytes, with: shared) }

    /// The content of the zstd frame `frame` written by ``compress(_:)``.
    static func decompress(_ frame: ArraySlice<UInt8>) throws(LedgerPacking.UnpackError) -> [UInt8] {
        try decompress(frame, with: shared)
    }

    /// One zstd frame of `bytes` with `shared`'s dictionary, or nil when zstd fails.
    static func compress(_ bytes: [UInt8], with shared: Shared?) -> [UInt8]? {
        guard let shared else { return nil }
        return shared.lock.withLock { _ -> [UInt8]? in
            let bound = ZSTD_compressBound(bytes.count)
            var failed = false
            let out = [UInt8](unsafeUninitializedCapacity: bound) { buffer, initialized in
                let written = bytes.withUnsafeBytes {
                    ZSTD_compress2(shared.cctx, buffer.baseAddress, bound, $0.baseAddress, $0.count)
                }
                failed = ZSTD_isError(written) != 0
                initialized = failed ? 0 : written
            }
            return failed ? nil : out
        }
    }

    /// The content of the zstd frame `frame` (exactly its recorded size, its checksum checked when
    /// it has one) with `shared`'s dictionary.
    static func decompress(
        _ frame: ArraySlice<UInt8>, with shared: Shared?
    ) throws(LedgerPacking.UnpackError) -> [UInt8] {
        guard let shared else { throw .malformed(noContexts) }
        let size = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        guard size != iapctl_zstd_contentsize_unknown(), size != iapctl_zstd_contentsize_error(),
            size <= UInt64(maximumContent)
        else { throw .malformed("the bytes are not one zstd frame of a known size") }
        let count = Int(size)
        var error: String?
        let out = shared.lock.withLock { _ in
            [UInt8](unsafeUninitializedCapacity: max(count, 1)) { buffer, initialized in
                let written = frame.withUnsafeBytes {
                    ZSTD_decompress_usingDDict(
                        shared.dctx, buffer.baseAddress, count, $0.baseAddress, $0.count, shared.ddict)
                }
                if ZSTD_isError(written) != 0 {
                    error = String(cString: ZSTD_getErrorName(written))
                    initialized = 0
                } else if written != count {
                    error = "\(written) bytes for a frame of \(count)"
                    initialized = 0
                } else {
                    initialized = written
                }
            }
        }
        if let error { throw .malformed("the zstd frame does not decompress: \(error)") }
        return out
    }
}
