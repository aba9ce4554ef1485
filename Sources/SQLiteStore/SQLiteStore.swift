internal import CSQLite
import IAPFoundation
import StoreSQL
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The ``Store`` over an embedded SQLite database file (WAL mode).
///
/// One instance is one connection and is not thread-safe: use it from one thread at a time.
/// Other processes (and other instances) on the same file wait for each other's write
/// transactions for up to the busy timeout, then fail with ``StoreError/busy(_:_:)``.
public final class SQLiteStore: SQLStoreBackend {
    /// The database file path (or `:memory:`).
    public let path: String
    let database: Database
    /// The shared transaction runner over this connection (`read`, `write`, `schemaVersion`).
    public let transactions: SQLTransactions

    /// How long a statement waits for another connection's lock by default (milliseconds).
    public static let defaultBusyTimeoutMilliseconds: Int32 = 15_000

    /// Whether this connection was opened read-only (look-ups): it never writes, creates or
    /// changes a file, not even the WAL's `-wal` and `-shm` files.
    public let isReadOnly: Bool

    /// Opens the database at `path` (a file path or `:memory:`).
    ///
    /// With `create` false a missing file is ``StoreError/notFound(_:)`` and nothing is created;
    /// with `create` true a new file is created readable by its owner only (mode 0600).
    /// With `readOnly` (look-ups) the file is opened read-only: through the existing `-shm` WAL
    /// index when there is one (a writer may be at work), else as an immutable file (no writer
    /// has it open), so a reader never creates `-wal`/`-shm` files, and a read-only file or
    /// folder can be read. The schema is not touched: call ``migrate()`` (`iapctl db init`).
    public init(
        path: String, create: Bool, readOnly: Bool = false,
        busyTimeoutMilliseconds: Int32 = SQLiteStore.defaultBusyTimeoutMilliseconds
    ) throws {
        // Before any file is created: without libsqlite3 nothing is touched (Database checks again).
        try SQLiteError.requireLibrary()
        self.path = path
        let inMemory = path == ":memory:" || path.isEmpty
        isReadOnly = readOnly && !inMemory && !create
        if !inMemory {
            try Self.prepareFile(path, create: create)
        }
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if create { flags |= SQLITE_OPEN_CREATE }
        do {
            if isReadOnly {
                database = try Self.openReadOnly(path)
            } else {
                database = try Database(path: path, flags: flags)
            }
        } catch {
            var info = stat()
            if case .unavailable = error, !inMemory, stat(path, &info) != 0, errno == ENOENT {
                // Removed between the check above and the open.
                throw StoreError.notFound(
                    "database \(path) does not exist; create it with: iapctl db init --db \(ShellWord.word(path))")
            }
            throw Self.openError(error, path: path)
        }
        transactions = SQLTransactions(
            connection: database, dialect: .sqlite, supported: Migrations.supported, label: path, dbArgument: ShellWord.word(path))
        do {
            try database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            try configure(inMemory: inMemory)
        } catch {
            throw Self.openError(error, path: path)
        }
    }

    // MARK: Store

    /// Runs every pending migration's script and data steps, records their versions and runs `work`,
    /// all in one write transaction (SQLite's DDL is transactional): a failure or a kill anywhere
    /// leaves the database exactly as it was.
    public func migrate(then work: (_ applied: [String], _ session: any StoreSession) throws -> Void) throws -> [String] {
        guard !transactions.isActive else {
            throw StoreError.failure("programmer error: migrate() called inside a transaction")
        }
        return try transactions.migration { session in
            try database.executeScript(Migrations.tableDDL)
            let current = try transactions.currentVersion()
            try transactions.refuseNewer(current)
            var applied: [String] = []
            for (migration, rendered) in zip(StoreSchema.migrations, Migrations.all) where migration.version > current {
                try database.executeScript(rendered.script)
                try StoreSchema.runSwiftDataSteps(migration, database)
                try database.executeScript(rendered.afterData)
                try transactions.record(migration)
                applied.append(migration.name)
            }
            if !applied.isEmpty { try work(applied, session) }
            return applied
        }
    }

    // MARK: opening

    /// A read-only connection that creates no file: through the existing WAL index (`-shm`) when
    /// there is one, else immutable (no `-shm` means no connection has the database open).
    private static func openReadOnly(_ path: String) throws(StoreError) -> Database {
        var info = stat()
        let shared = stat(path + "-shm", &info) == 0
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        if shared {
            let database = try Database(path: uri(path, "mode=ro"), flags: flags)
            // Opening is lazy: read once, so an unreadable WAL index is found here, not later.
            if (try? database.scalarInt("PRAGMA schema_version")) != nil { return database }
        }
        return try Database(path: uri(path, "immutable=1"), flags: flags)
    }

    /// `file:PATH?QUERY` with the path percent-encoded.
    private static func uri(_ path: String, _ query: String) -> String {
        var encoded = ""
        for byte in path.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "/-_.~".contains(c) {
                encoded.append(c)
            } else {
                encoded += "%" + Hex.encode([byte], uppercase: true)
            }
        }
        return "file:" + encoded + "?" + query
    }

    /// Connection settings: foreign keys on, WAL journal (readers never wait for the writer), FULL sync.
    /// A read-only connection changes nothing (the journal mode is the file's).
    private func configure(inMemory: Bool) throws(StoreError) {
        try database.execute("PRAGMA foreign_keys = ON")
        if isReadOnly { return }
        let mode = try database.scalarText("PRAGMA journal_mode = WAL")?.lowercased()
        guard mode == "wal" || (inMemory && mode == "memory") else {
            throw .failure("could not switch database \(path) to WAL journal mode (got \(mode ?? "nothing"))")
        }
        // FULL in WAL mode: every COMMIT is on disk before iapctl reports success (money data;
        // Apple does not resend a notification we acknowledged). Costs one fsync per commit.
        try database.execute("PRAGMA synchronous = FULL")
    }

    /// Checks existence; when creating a new file, creates it with mode 0600 before SQLite touches it.
    private static func prepareFile(_ path: String, create: Bool) throws {
        try DatabaseFile.check(path)
        var info = stat()
        if stat(path, &info) == 0 { return }
        let missing = errno == ENOENT
        guard create else {
            if missing {
                throw StoreError.notFound(
                    "database \(path) does not exist; create it with: iapctl db init --db \(ShellWord.word(path))")
            }
            throw StoreError.unavailable("cannot access database \(path): \(String(cString: strerror(errno)))")
        }
        // Through a dangling symlink O_EXCL refuses the link itself, and SQLite would then create
        // the target with the umask's mode: create the target here, owner-only like any new file.
        let target = danglingLinkTarget(path) ?? path
        let fd = open(target, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            if code == EEXIST { return }  // created concurrently by another process
            let reason = String(cString: strerror(code))
            switch code {
            case ENOENT: throw StoreError.notFound(missingFolder(path) ?? "cannot create database \(path): \(reason)")
            case ENOTDIR: throw StoreError.notFound("cannot create database \(path): \(reason)")
            case EACCES, EPERM, EROFS: throw StoreError.accessDenied("cannot create database \(path): \(reason)")
            default: throw StoreError.unavailable("cannot create database \(path): \(reason)")
            }
        }
        guard close(fd) == 0 else {
            throw StoreError.unavailable("cannot create database \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The message for a new database whose folder does not exist (iapctl creates no folders).
    private static func missingFolder(_ path: String) -> String? {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return nil }
        let folder = String(path[..<slash])
        var info = stat()
        guard stat(folder, &info) != 0, errno == ENOENT else { return nil }
        return "cannot create database \(path): the folder \(folder) does not exist (iapctl creates no folders); "
            + "create it first (mkdir -p \(ShellWord.word(folder))) or choose another --db"
    }

    /// The missing file a chain of symbolic links at `path` ends at (at most 8 links), or nil
    /// when `path` is not a symbolic link.
    private static func danglingLinkTarget(_ path: String) -> String? {
        var current = path
        var followed = 0
        while followed < 8 {
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { break }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let destination = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if destination.hasPrefix("/") {
                current = destination
            } else {
                let directory = current.lastIndex(of: "/").map { String(current[...$0]) } ?? ""
                current = directory + destination
            }
            followed += 1
        }
        return followed > 0 ? current : nil
    }

    /// Adds the path to errors raised while opening.
    private static func openError(_ error: StoreError, path: String) -> StoreError {
        switch error {
        case .unavailable(let m): return .unavailable("database \(path): \(m)")
        case .failure(let m): return .failure("database \(path): \(m)")
        case .accessDenied(let m): return .accessDenied("database \(path): \(m)")
        case .busy(let m, let reason): return .busy("database \(path): \(m)", reason)
        default: return error
        }
    }
}
