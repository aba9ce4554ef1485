internal import COpenSSL

/// An error raised by JWSForge: an OpenSSL failure, a bad file, or a bad argument.
public struct ForgeError: Error, CustomStringConvertible, Sendable {
    /// What failed, with OpenSSL's drained error queue appended when there is one.
    public let message: String

    /// Creates an error with a plain message.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }

    /// An error for a failed OpenSSL call: drains and clears OpenSSL's error queue into the message.
    static func openssl(_ what: String) -> ForgeError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            reasons.append(String(decoding: bytes, as: UTF8.self))
        }
        return ForgeError(reasons.isEmpty ? "\(what) failed" : "\(what) failed: " + reasons.joined(separator: "; "))
    }
}

/// Throws `ForgeError.openssl` unless an OpenSSL return code signals success (1).
@inline(__always)
func check(_ rc: Int32, _ what: @autoclosure () -> String) throws {
    if rc != 1 { throw ForgeError.openssl(what()) }
}
