#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads command input (stdin or a file) by lines with a length limit, or all at once.
///
/// Made from a file descriptor (stdin, an opened file) or from bytes (in-process tests).
/// Errors are `CLIError`s: `.dataError` for an over-long line, `.ioError` for a failed read.
public final class InputReader {
    private enum Source {
        case descriptor(Int32, owned: Bool)
        case memory
    }

    private let source: Source
    /// What messages call this input (`stdin`, the file's path).
    public let name: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var reachedEnd = false
    /// How many lines `readLine` has returned or rejected so far (the 1-based number of the last).
    public private(set) var lineNumber = 0

    /// Input read from an open file descriptor; `closeOnDeinit` gives this reader ownership of it.
    public init(fileDescriptor: Int32, name: String, closeOnDeinit: Bool = false) {
        self.source = .descriptor(fileDescriptor, owned: closeOnDeinit)
        self.name = name
    }

    /// Input served from memory.
    public init(bytes: [UInt8], name: String = "stdin") {
        self.source = .memory
        self.name = name
        self.buffer = bytes
        self.reachedEnd = true
    }

    /// Input served from memory (UTF-8).
    public convenience init(string: String, name: String = "stdin") {
        self.init(bytes: Array(string.utf8), name: name)
    }

    /// Opens the file at `path` for reading (66 if it does not exist or cannot be opened).
    public convenience init(path: String) throws(CLIError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw CLIError(
                code == ENOENT || code == EACCES ? .noInput : .ioError,
                "cannot open \(path): \(FileSystem.describe(errno: code))")
        }
        self.init(fileDescriptor: fd, name: path, closeOnDeinit: true)
    }

    deinit {
        if case .descriptor(let fd, owned: true) = source {
            _ = close(fd)
        }
    }

    /// Reads more bytes into the buffer; false at end of input.
    private func fill() throws(CLIError) -> Bool {
        guard !reachedEnd, case .descriptor(let fd, _) = source else { return false }
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        let chunk = 65_536
        let oldCount = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        var count = 0
        repeat {
            count = buffer.withUnsafeMutableBytes { raw in
                read(fd, raw.baseAddress! + oldCount, chunk)
            }
        } while count < 0 && errno == EINTR
        if count < 0 {
            let code = errno
            buffer.removeLast(chunk)
            throw CLIError(.ioError, "cannot read \(name): \(FileSystem.describe(errno: code))")
        }
        buffer.removeLast(chunk - count)
        if count == 0 { reachedEnd = true }
        return count > 0
    }

    /// The next line without its `\n` or `\r\n`, or nil at end of input.
    ///
    /// A line longer than `maxLength` bytes is skipped and reported as a `.dataError` naming its
    /// line number, so a caller can report it and go on with the next line.
    public func readLine(maxLength: Int = 1 << 20) throws(CLIError) -> String? {
        var scanned = start
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 10) {
                let lineEnd = newline > start && buffer[newline - 1] == 13 ? newline - 1 : newline
                let line = buffer[start..<lineEnd]
                start = newline + 1
                lineNumber += 1
                if line.count > maxLength { throw tooLong(maxLength) }
                return try text(line)
            }
            scanned = buffer.count
            if scanned - start > maxLength + 1 {
                // Over the limit: drop what we have and skip to the end of this line.
                lineNumber += 1
                start = buffer.count
                while true {
                    if let newline = buffer[start...].firstIndex(of: 10) {
                        start = newline + 1
                        break
                    }
                    start = buffer.count
                    if try !fill() { break }
                }
                throw tooLong(maxLength)
            }
            let offset = scanned - start
            if try !fill() {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                let trimmed = line.last == 13 ? line.dropLast() : line
                if trimmed.count > maxLength { throw tooLong(maxLength) }
                return try text(trimmed)
            }
            scanned = start + offset
        }
    }

    /// Up to `count` bytes ahead, without consuming them (fewer at the end of the input).
    public func peek(_ count: Int) throws(CLIError) -> [UInt8] {
        while buffer.count - start < count, try fill() {}
        return Array(buffer[start..<min(buffer.count, start + count)])
    }

    /// Every remaining byte; `.dataError` if there are more than `maxBytes`.
    public func readAll(maxBytes: Int = 64 << 20) throws(CLIError) -> [UInt8] {
        while try fill() {
            if buffer.count - start > maxBytes { break }
        }
        guard buffer.count - start <= maxBytes else {
            throw CLIError(.dataError, "\(name) is larger than \(maxBytes) bytes")
        }
        let bytes = Array(buffer[start...])
        start = buffer.count
        return bytes
    }

    /// Every remaining byte as UTF-8 text; invalid UTF-8 is a `.dataError` (never replaced by U+FFFD).
    public func readAllText(maxBytes: Int = 64 << 20) throws(CLIError) -> String {
        let bytes = try readAll(maxBytes: maxBytes)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError(.dataError, "\(name): input is not valid UTF-8")
        }
        return text
    }

    /// The line as text; invalid UTF-8 is a `.dataError` (never silently replaced by U+FFFD).
    private func text(_ line: ArraySlice<UInt8>) throws(CLIError) -> String {
        guard let text = String(validating: line, as: UTF8.self) else {
            throw CLIError(.dataError, "\(name):\(lineNumber): line is not valid UTF-8")
        }
        return text
    }

    private func tooLong(_ maxLength: Int) -> CLIError {
        CLIError(.dataError, "\(name):\(lineNumber): line longer than \(maxLength) bytes")
    }
}
