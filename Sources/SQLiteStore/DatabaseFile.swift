import IAPFoundation
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension SQLiteStore {
    /// A file at the database path that is not an SQLite database (a text file, a CSV export…).
    public struct NotADatabase: Error, Equatable, Sendable {
        /// The path as given.
        public let path: String
    }
}

/// Checks an existing database path before SQLite opens it, so that the errors name the path and
/// the part that is wrong (SQLite itself says only "unable to open database file").
enum DatabaseFile {
    /// The first 16 bytes of every SQLite 3 database file.
    static let header = Array("SQLite format 3\u{0}".utf8)

    /// Throws ``StoreError/accessDenied(_:)`` for a folder on the path this user cannot enter or a
    /// file they cannot read, and ``SQLiteStore/NotADatabase`` for a file that is not SQLite. An empty
    /// file passes (SQLite treats it as a new, empty database); a missing one is left to the caller.
    static func check(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES { throw StoreError.accessDenied(blockedFolder(path)) }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == EACCES {
                throw StoreError.accessDenied(
                    "permission denied: this user (uid \(getuid())) cannot read the database file \(path)")
            }
            return
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: header.count)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0 else { return }
        if count < header.count || bytes != header { throw SQLiteStore.NotADatabase(path: path) }
    }

    /// The message for a path whose `stat` was refused: names the first folder this user cannot enter.
    static func blockedFolder(_ path: String) -> String {
        var prefix = path.hasPrefix("/") ? "/" : ""
        let folders = path.split(separator: "/").dropLast()
        for folder in folders {
            prefix += folder
            if access(prefix, X_OK) != 0 {
                return "permission denied: this user (uid \(getuid())) cannot enter the folder \(prefix) "
                    + "on the path to the database \(path)"
            }
            prefix += "/"
        }
        return "permission denied: this user (uid \(getuid())) cannot reach the database \(path)"
    }
}
