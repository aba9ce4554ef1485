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
        guard fd >= 0 else { throw FileSystem.openError(path: path, errno: errno) }
        self.init(fileDescriptor: fd, name: path, closeOnDeinit: true)
    }

    deinit {
        if pasting { TerminalPaste.end() }
        if case .descriptor(let fd, owned: true) = source {
            _ = close(fd)
        }
    }

    /// Whether this input is a terminal (a person typing or pasting).
    public var isTerminal: Bool {
        guard case .descriptor(let fd, _) = source else { return false }
        return isatty(fd) == 1
    }

    /// Whether the terminal is read in paste mode (see `beginTerminalPaste`).
    private var pasting = false

    /// Called before a read that would wait: for the person in paste mode (flushes the output, so
    /// an item's result shows on its Enter), or for a pipe's writer (progress shows the true count).
    public var beforeWaiting: (() -> Void)?

    /// Whether this input is a pipe or a socket (its writer may keep it open between items).
    public var isPipe: Bool {
        guard case .descriptor(let fd, _) = source else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFSOCK
    }

    /// Reads a terminal without its line limit: the kernel keeps at most 4,095 bytes of a line
    /// typed or pasted in canonical mode, and a notification is ~15 KB. Switches canonical mode
    /// off for the read (echo stays on; Ctrl-C still interrupts), takes Ctrl-D as the end, and
    /// restores the terminal at the end of input, when the reader goes, and on SIGINT, SIGTERM,
    /// SIGHUP or SIGQUIT. False (nothing changed) when the input is not a terminal.
    @discardableResult
    public func beginTerminalPaste() -> Bool {
        guard !pasting, case .descriptor(let fd, _) = source, isatty(fd) == 1 else { return false }
        pasting = TerminalPaste.begin(fd)
        return pasting
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
        // Before waiting on a person (a terminal paste) or a pipe's writer: what was printed so far shows now.
        if let beforeWaiting, !Self.poll(fd, milliseconds: 0) { beforeWaiting() }
        // Wait for input or Ctrl-C (whichever thread the signal lands on), then read.
        if Interrupt.wakeDescriptor >= 0 {
            while !Interrupt.isRequested, !Self.poll(fd, milliseconds: -1) {}
        }
        repeat {
            if Interrupt.isRequested {
                buffer.removeLast(chunk)
                throw CLIError(.interrupted, "interrupted while reading \(name)")
            }
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
        if pasting, let endOfText = buffer[oldCount...].firstIndex(of: 4) {
            // Ctrl-D: the end of what was pasted (the terminal no longer turns it into end of file).
            // Not echoed (ECHOCTL is off); when it ends a line without Enter, a newline keeps what
            // is printed next off the pasted text.
            if endOfText > 0, buffer[endOfText - 1] != 10 { _ = write(fd, "\n", 1) }
            buffer.removeSubrange(endOfText...)
            reachedEnd = true
            pasting = false
            TerminalPaste.end()
            return buffer.count > oldCount
        }
        if count == 0 {
            reachedEnd = true
            if pasting {
                pasting = false
                TerminalPaste.end()
            }
        }
        return count > 0
    }

    /// Whether a whole line (or the end of the input) is already read: `readLine` then does not wait.
    public var hasBufferedLine: Bool {
        reachedEnd
            || buffer.withUnsafeBufferPointer { all in
                start < all.count && memchr(all.baseAddress! + start, 10, all.count - start) != nil
            }
    }

    /// Waits at most `milliseconds` for input to arrive; true when reading would not wait (data,
    /// end of input or an error to report). Input from memory never waits.
    public func waitForInput(milliseconds: Int32) -> Bool {
        guard !reachedEnd, case .descriptor(let fd, _) = source else { return true }
        return Self.poll(fd, milliseconds: milliseconds) || Interrupt.isRequested
    }

    /// Whether `fd` is readable (data, end, error) within `milliseconds` (-1: no limit); false
    /// also when Ctrl-C woke the wait.
    private static func poll(_ fd: Int32, milliseconds: Int32) -> Bool {
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        if Interrupt.wakeDescriptor >= 0 {
            descriptors.append(pollfd(fd: Interrupt.wakeDescriptor, events: Int16(POLLIN), revents: 0))
        }
        while true {
            let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0, errno == EINTR {
                if Interrupt.isRequested { return false }
                continue
            }
            return ready != 0 && descriptors[0].revents != 0
        }
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

/// The terminal settings `InputReader.beginTerminalPaste` changes, and their restoration (also
/// from a signal handler, so kept in plain globals).
enum TerminalPaste {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var descriptor: Int32 = -1
    nonisolated(unsafe) private static var previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 4)
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Non-canonical mode on `fd` (one byte at a time, no line limit); false if it cannot be set.
    static func begin(_ fd: Int32) -> Bool {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { return false }
        saved = settings
        descriptor = fd
        for (index, signal) in signals.enumerated() {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                TerminalPaste.restoreFromSignal(signal)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, previous + index)
        }
        // ECHOCTL off: Ctrl-D (the end of the paste) is not echoed as `^D` glued to what follows.
        settings.c_lflag &= ~tcflag_t(ICANON | ECHOCTL)
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else {
            end()
            return false
        }
        return true
    }

    /// The terminal as it was, and the signal handlers as they were.
    static func end() {
        guard descriptor >= 0 else { return }
        _ = tcsetattr(descriptor, TCSANOW, &saved)
        descriptor = -1
        for (index, signal) in signals.enumerated() { sigaction(signal, previous + index, nil) }
    }

    /// In a signal handler: restore the terminal, put the previous handler back and raise again.
    private static func restoreFromSignal(_ signal: Int32) {
        if descriptor >= 0 { _ = tcsetattr(descriptor, TCSANOW, &saved) }
        descriptor = -1
        for (index, each) in signals.enumerated() { sigaction(each, previous + index, nil) }
        raise(signal)
    }
}
