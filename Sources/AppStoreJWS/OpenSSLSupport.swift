import COpenSSL

/// Helpers around OpenSSL's thread-local error queue.
package enum OpenSSLErrors {
    /// Empties the error queue and returns the reasons it held (oldest first, at most 4).
    @discardableResult
    package static func drain() -> [String] {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if reasons.count < 4 {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                reasons.append(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return reasons
    }
}

/// Apple's marker extensions, unknown to OpenSSL.
package enum AppleOID {
    /// App Store receipt signing (must be on the leaf).
    package static let receiptSigning = "1.2.840.113635.100.6.11.1"
    /// Apple WWDR intermediate marker (must be on the intermediate).
    package static let wwdrIntermediate = "1.2.840.113635.100.6.2.1"
}

/// An owned `ASN1_OBJECT` made from dotted-decimal text.
package final class OwnedObject: @unchecked Sendable {
    package let pointer: OpaquePointer

    package init?(oid: String) {
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSLErrors.drain()
            return nil
        }
        pointer = object
    }

    deinit { ASN1_OBJECT_free(pointer) }
}

/// An `EVP_MD` for SHA-256, fetched once.
final class FetchedDigest: @unchecked Sendable {
    let pointer: OpaquePointer

    /// The shared SHA-256 implementation (explicit fetch avoids a provider lookup per call).
    static let sha256: FetchedDigest = FetchedDigest(name: "SHA256")

    private init(name: String) {
        if let md = EVP_MD_fetch(nil, name, nil) {
            pointer = md
        } else {
            OpenSSLErrors.drain()
            pointer = EVP_sha256()
            owned = false
            return
        }
        owned = true
    }

    private let owned: Bool

    deinit {
        if owned { EVP_MD_free(pointer) }
    }
}
