#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-file reads and writes through the C library (shipped code has no FileHandle).
public enum FileSystem {
    /// The text of `errno` (e.g. "No such file or directory").
    public static func describe(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Why the file at `path` could not be opened (`errno` `code`): 66 when it is missing or
    /// forbidden, 74 otherwise.
    public static func openError(path: String, errno code: Int32) -> CLIError {
        CLIError(code == ENOENT || code == EACCES ? .noInput : .ioError, "cannot open \(path): \(describe(errno: code))")
    }

    /// Every byte of the file at `path`; the error carries the exit code (66 missing, 74 other).
    public static func readAll(path: String, maxBytes: Int = 64 << 20) throws(CLIError) -> [UInt8] {
        let reader = try InputReader(path: path)
        return try reader.readAll(maxBytes: maxBytes)
    }

    /// Writes `text` to the file at `path` (created or truncated, mode 0644).
    public static func write(_ text: String, toPath path: String) throws(CLIError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CLIError(.ioError, "cannot create \(path): \(describe(errno: errno))")
        }
        let sink = FileDescriptorSink(fileDescriptor: fd, name: path)
        sink.write(text)
        let flushed: CLIError?
        do {
            try sink.flush()
            flushed = nil
        } catch { flushed = error }
        guard close(fd) == 0 else { throw CLIError(.ioError, "cannot close \(path): \(describe(errno: errno))") }
        if let flushed { throw flushed }
    }

    /// Whether `path` names an existing folder.
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
