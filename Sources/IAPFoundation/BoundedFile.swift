#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading a small file whole with plain `read(2)` (a signal's `EINTR` retried), refusing one
/// larger than its limit: a key file, a root certificate.
public enum BoundedFile {
    /// Why the file could not be read, with `errno` where the system gave one.
    public enum Failure: Error, Sendable, Equatable {
        case cannotOpen(errno: Int32)
        case cannotRead(errno: Int32)
        case tooLarge(maxBytes: Int)
    }

    /// The bytes of `path`, at most `maxBytes` of them.
    public static func read(_ path: String, maxBytes: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(errno: errno) }
        defer { _ = close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= maxBytes {
            var count = 0
            repeat {
                count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress!, $0.count) }
            } while count < 0 && errno == EINTR
            guard count >= 0 else { throw .cannotRead(errno: errno) }
            if count == 0 { return bytes }
            bytes += chunk.prefix(count)
        }
        throw .tooLarge(maxBytes: maxBytes)
    }
}

/// `read(2)`.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }
