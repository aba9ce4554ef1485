import IAPFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `.p8` file App Store Connect lets you download once (`AuthKey_KEYID.p8`): read only when it is
/// a regular file only its owner can read (mode 600 or 400), as ssh asks of a private key: the key signs
/// for the whole team, and a group on a shared machine is often wider than the people meant to hold it.
public enum APIKeyFile {
    /// Why the key file was refused; `errno` values are the C library's, for the caller to word.
    public enum Refusal: Error, Sendable, Equatable {
        /// `stat` failed (e.g. no such file).
        case inaccessible(path: String, errno: Int32)
        /// It is a folder, a device, …
        case notAFile(path: String)
        /// Users other than its owner may read it: its group or every user (`mode`: its permission bits).
        case readableByOthers(path: String, mode: UInt32)
        /// `open` failed.
        case cannotOpen(path: String, errno: Int32)
        /// `read` failed.
        case cannotRead(path: String, errno: Int32)
        /// Longer than ``maxBytes`` (no key is).
        case tooLarge(path: String, maxBytes: Int)
    }

    /// The most a key file may hold.
    public static let maxBytes = 64 << 10

    /// The file's bytes, refusing a missing, unreadable, non-regular, group- or world-readable file.
    public static func read(_ path: String) throws(Refusal) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .inaccessible(path: path, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notAFile(path: path) }
        guard info.st_mode & 0o044 == 0 else { throw .readableByOthers(path: path, mode: UInt32(info.st_mode & 0o777)) }
        do { return try BoundedFile.read(path, maxBytes: maxBytes) } catch {
            switch error {
            case .cannotOpen(let code): throw .cannotOpen(path: path, errno: code)
            case .cannotRead(let code): throw .cannotRead(path: path, errno: code)
            case .tooLarge(let limit): throw .tooLarge(path: path, maxBytes: limit)
            }
        }
    }

    /// The last component of `path`.
    public static func baseName(_ path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }

    /// `KEYID` of App Store Connect's download name `AuthKey_KEYID.p8`; nil for another name.
    public static func keyId(inFileName path: String) -> String? {
        let name = baseName(path)
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        return String(name.dropFirst(8).dropLast(3))
    }
}

/// The ids a token names: the key id (letters and digits) and the issuer id (a UUID).
public enum APICredentials {
    /// An id App Store Connect would not have issued.
    public enum Refusal: Error, Sendable, Equatable {
        case keyId(String)
        case issuerId(String)
    }

    /// Throws when `keyId` is not letters and digits, or `issuerId` not a UUID (the key id first).
    public static func check(keyId: String, issuerId: String) throws(Refusal) {
        guard isKeyId(keyId) else { throw .keyId(keyId) }
        guard RequestIdentifier.isUUID(issuerId) else { throw .issuerId(issuerId) }
    }

    /// ASCII letters and digits only (e.g. 2X9R4HXF34).
    public static func isKeyId(_ text: String) -> Bool { text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
}
