#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command writes text: the real stdout/stderr, or a buffer in tests.
public protocol OutputSink: AnyObject {
    /// Appends text (buffered; nothing is lost before `flush`).
    func write(_ text: String)
    /// Pushes buffered text out; an `.ioError` if it could not be written.
    func flush() throws(CLIError)
    /// The width of the terminal the sink writes to, nil when it is not one (or unknown).
    var terminalColumns: Int? { get }
}

extension OutputSink {
    public var terminalColumns: Int? { nil }

    /// Writes `text` and a newline.
    public func writeLine(_ text: String) {
        write(text)
        write("\n")
    }
}

/// An output sink over a file descriptor, written with write(2) in 64 KiB chunks.
///
/// The first write error is remembered; later writes are dropped and `flush` reports it.
public final class FileDescriptorSink: OutputSink {
    private let fileDescriptor: Int32
    private let name: String
    private var buffer: [UInt8] = []
    private var failure: CLIError?
    /// On a terminal every write is made safe (`TerminalText.terminalSafe`): whatever a command
    /// writes directly, no control character from data reaches the terminal.
    private let escapesControls: Bool

    /// A sink writing to `fileDescriptor` (not closed by the sink); `name` is used in messages.
    public init(fileDescriptor: Int32, name: String) {
        self.fileDescriptor = fileDescriptor
        self.name = name
        escapesControls = isatty(fileDescriptor) == 1
        buffer.reserveCapacity(65_536)
    }

    /// On a terminal whose locale is not UTF-8 (`LC_ALL=C`): `→ ∅ …` written as `-> (none) ...`.
    public var asciiOnTerminal = false

    public func write(_ text: String) {
        guard failure == nil else { return }
        var text = escapesControls ? TerminalText.terminalSafe(text) : text
        if asciiOnTerminal, escapesControls { text = AsciiFallback.apply(text) }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 65_536 { drain() }
    }

    /// Whether the descriptor is a terminal.
    public var isTerminal: Bool { isatty(fileDescriptor) == 1 }

    /// The terminal's width in columns (TIOCGWINSZ), nil when not a terminal or unknown.
    public var terminalColumns: Int? {
        var size = winsize()
        guard ioctl(fileDescriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    public func flush() throws(CLIError) {
        drain()
        if let failure { throw failure }
    }

    private func drain() {
        var offset = 0
        while offset < buffer.count, failure == nil {
            let written = buffer.withUnsafeBytes { raw in
                Glibc.write(fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                failure = CLIError(.ioError, "cannot write to \(name): \(FileSystem.describe(errno: errno))")
            } else {
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { drain() }
}

/// An output sink that keeps everything in memory (for in-process tests).
public final class BufferSink: OutputSink {
    /// Everything written so far.
    public private(set) var text = ""

    /// An empty buffer.
    public init() {}

    public func write(_ text: String) { self.text += text }

    public func flush() throws(CLIError) {}
}
