#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Rows of text cells kept for output written at the end of a batch (a table needs every row's
/// width before its first line): in memory up to `memoryLimit` bytes, then in an unnamed
/// temporary file (`tmpfile`), so memory stays flat however long the batch. If no temporary
/// file can be made, rows stay in memory (as before the spool existed).
public final class RowSpool {
    private var buffer: [UInt8] = []
    private var file: UnsafeMutablePointer<FILE>?
    private var spillFailed = false
    private let memoryLimit: Int
    /// Rows appended so far.
    public private(set) var count = 0

    /// An empty spool; rows move to a temporary file once `memoryLimit` bytes are held.
    public init(memoryLimit: Int = 4 << 20) {
        self.memoryLimit = memoryLimit
    }

    /// Appends one row (each cell's UTF-8 length, then its bytes).
    public func append(_ cells: [String]) {
        count += 1
        appendLength(cells.count)
        for cell in cells {
            appendLength(cell.utf8.count)
            buffer.append(contentsOf: cell.utf8)
        }
        if buffer.count >= memoryLimit, !spillFailed { spill() }
    }

    private func appendLength(_ value: Int) {
        var value = UInt32(truncatingIfNeeded: value).littleEndian
        withUnsafeBytes(of: &value) { buffer.append(contentsOf: $0) }
    }

    private func spill() {
        if file == nil { file = tmpfile() }
        guard let file else {
            spillFailed = true
            return
        }
        let written = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == buffer.count else {
            // Disk full: keep what is in the file, the rest stays in memory from now on.
            spillFailed = true
            return
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with every row in order (the file first, then what is in memory).
    public func forEach(_ body: ([String]) -> Void) {
        if let file {
            fflush(file)
            rewind(file)
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            var pending: [UInt8] = []
            while true {
                let read = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
                if read == 0 { break }
                pending.append(contentsOf: chunk[0..<read])
                let used = Self.decode(pending, body)
                pending.removeFirst(used)
            }
        }
        _ = Self.decode(buffer, body)
    }

    /// Decodes whole rows from `bytes`, returns how many bytes they took.
    private static func decode(_ bytes: [UInt8], _ body: ([String]) -> Void) -> Int {
        bytes.withUnsafeBytes { raw -> Int in
            var offset = 0
            func length(at position: Int) -> Int? {
                guard position + 4 <= raw.count else { return nil }
                return Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
            }
            rows: while let cellCount = length(at: offset) {
                var position = offset + 4
                var cells: [String] = []
                cells.reserveCapacity(cellCount)
                for _ in 0..<cellCount {
                    guard let size = length(at: position), position + 4 + size <= raw.count else { break rows }
                    let start = position + 4
                    cells.append(String(decoding: raw[start..<(start + size)], as: UTF8.self))
                    position = start + size
                }
                body(cells)
                offset = position
            }
            return offset
        }
    }

    deinit {
        if let file { fclose(file) }
    }
}
