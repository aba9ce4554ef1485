import COpenSSL

extension AppReceipt {
    /// Whether the receipt was issued to the device with this identifier (`identifierForVendor` as
    /// 16 bytes on iOS, the MAC address on macOS): its SHA-1 hash (field 5) is SHA-1 of the GUID,
    /// the opaque value (field 4) and the bundle id's bytes (field 2). False when any is missing.
    public func matchesDevice(guid: [UInt8]) -> Bool {
        guard let opaqueValue, let bundleIdData, let sha1Hash, sha1Hash.count == 20 else { return false }
        let input = guid + opaqueValue + bundleIdData
        var digest = [UInt8](repeating: 0, count: 20)
        let done = input.withUnsafeBufferPointer { buffer in
            digest.withUnsafeMutableBufferPointer { out in SHA1(buffer.baseAddress, buffer.count, out.baseAddress) != nil }
        }
        return done && digest == sha1Hash
    }
}
